"""The trend map as a PNG: drawn on the field's lattice with Natural Earth's coastlines over it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr
from PIL import Image

from era5etl.read.atlas_plot import plot_trend_map


def test_a_trend_map_is_drawn(tmp_path: Path) -> None:
    lats, lons = np.arange(-90.0, 90.1, 5.0), np.arange(-175.0, 180.1, 5.0)
    values = np.outer(np.sin(np.radians(lats)) ** 2, np.ones(lons.size)) * 0.7
    values[0, 0] = np.nan
    grid = xr.DataArray(values, coords={"latitude": lats, "longitude": lons}, dims=("latitude", "longitude"),
                        attrs={"units": "degC/decade"})
    path = plot_trend_map(grid, "a test", tmp_path / "map.png")
    with Image.open(path) as image:
        assert image.format == "PNG" and image.size == (1100, 560)
        pixels = np.asarray(image.convert("RGB"))
    # Red (warming) dominates the polar rows, the coastlines are black.
    assert (pixels.reshape(-1, 3) == 0).all(axis=1).sum() > 1000
