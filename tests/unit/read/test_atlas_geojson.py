"""The trend map as GeoJSON: one valid cell polygon per point with a trend, the whole lattice's cells
tiling the sphere's box once (shapely), the antimeridian's cell in two halves, the trends the atlas's."""

from __future__ import annotations

import json

import numpy as np
import pytest
import shapely
from shapely.geometry import shape

from era5etl.core.grid import location_ids
from era5etl.read.atlas import point_trends
from era5etl.read.atlas_geojson import cell_geometry, trend_geojson
from era5etl.read.yearly import YearlyField


def _field(step: float = 10.0) -> YearlyField:
    lats = np.arange(-90.0, 90.0 + step / 2, step)
    lons = np.arange(-180.0 + step, 180.0 + step / 2, step)
    lat, lon = (a.ravel() for a in np.meshgrid(lats, lons, indexing="ij"))
    span = np.arange(1980, 2021)
    values = 10 + 0.02 * np.cos(np.radians(lat))[:, None] * (span - 2000) + np.random.default_rng(2).normal(
        0, 0.1, (lat.size, span.size))
    return YearlyField("t", "temperature_2m", "mean", "degC", location_ids(lat, lon), lat, lon, span, values)


def test_every_point_is_its_cell_and_the_cells_tile_the_globe() -> None:
    field = _field()
    field.values[3, 2:] = np.nan  # two years only: no trend, no feature
    data = json.loads(json.dumps(trend_geojson(field)))  # plain JSON
    trends = point_trends(field)
    assert len(data["features"]) == int(np.isfinite(trends.per_decade).sum()) == field.location_id.size - 1
    shapes = [shape(f["geometry"]) for f in data["features"]]
    assert all(s.is_valid for s in shapes)
    for f in data["features"][:50]:
        p = f["properties"]
        row = int(np.flatnonzero(field.location_id == p["location_id"])[0])
        assert p["trend_per_decade"] == pytest.approx(trends.per_decade[row])
    complete = trend_geojson(_field())
    union = shapely.union_all([shape(f["geometry"]) for f in complete["features"]])
    assert union.area == pytest.approx(360 * 180) and sum(shape(f["geometry"]).area for f in complete["features"]) \
        == pytest.approx(360 * 180)
    assert complete["properties"]["unit"] == "degC/decade" and complete["properties"]["step"] == 10.0


def test_the_antimeridians_cell_is_two_halves_and_a_poles_is_cut() -> None:
    east = cell_geometry(0.0, 180.0, 0.25)
    assert east["type"] == "MultiPolygon" and shape(east).area == pytest.approx(0.0625)
    assert shape(east).bounds == (-180.0, -0.125, 180.0, 0.125)
    pole = shape(cell_geometry(90.0, 10.0, 0.25))
    assert pole.bounds == (9.875, 89.875, 10.125, 90.0)
    ring = cell_geometry(10.0, 10.0, 1.0)["coordinates"][0]
    assert shapely.Polygon(ring).exterior.is_ccw
