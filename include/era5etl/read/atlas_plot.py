"""The atlas's trend map as a PNG: every grid point's trend per decade on its lattice, a diverging
colour map centred on no change (matplotlib's ``RdBu_r``, ``BrBG`` for an accumulation), Natural
Earth's coastlines over it and a colour bar in the field's unit per decade (matplotlib's Agg, as
``read.plots``)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure

from era5etl.read.regions import coastlines


def field_title(field: Any) -> str:
    """The map's title for a ``read.yearly.YearlyField``: what, which years, which table."""
    return (f"{field.statistic} {field.variable}: OLS trend per decade, {field.years[0]}-{field.years[-1]} "
            f"({field.table})")


def plot_trend_map(grid: Any, title: str, path: str | Path, statistic: str = "mean") -> Path:
    """Draw ``grid`` (``read.atlas.trend_map``'s DataArray) into ``path``."""
    target = Path(path)
    target.write_bytes(trend_map_png(grid, title, statistic))
    return target


def trend_map_png(grid: Any, title: str, statistic: str = "mean") -> bytes:
    """``grid`` (``read.atlas.trend_map``'s DataArray) drawn as a PNG: what the CLI's ``--png`` writes and
    ``GET /era5/atlas.png`` answers."""
    values = np.asarray(grid.values, dtype=np.float64)
    lats, lons = np.asarray(grid.latitude), np.asarray(grid.longitude)
    finite = values[np.isfinite(values)]
    reach = float(np.max(np.abs(finite))) if finite.size and np.max(np.abs(finite)) > 0 else 1.0
    fig = Figure(figsize=(11, 5.6), dpi=100)
    ax = fig.add_subplot()
    mesh = ax.pcolormesh(lons, lats, np.ma.masked_invalid(values), shading="nearest",
                         cmap="BrBG" if statistic == "total" else "RdBu_r",
                         norm=TwoSlopeNorm(vcenter=0.0, vmin=-reach, vmax=reach))
    ax.add_collection(LineCollection(coastlines(), colors="black", linewidths=0.4))  # one artist, not 1,400
    step_lat = float(np.min(np.diff(lats))) if lats.size > 1 else 0.25
    step_lon = float(np.min(np.diff(lons))) if lons.size > 1 else 0.25
    ax.set_xlim(lons.min() - step_lon / 2, lons.max() + step_lon / 2)
    ax.set_ylim(lats.min() - step_lat / 2, lats.max() + step_lat / 2)
    ax.set_aspect("equal")
    ax.set_xlabel("longitude (degrees east)")
    ax.set_ylabel("latitude (degrees north)")
    ax.set_title(title, fontsize=9)
    fig.colorbar(mesh, ax=ax, shrink=0.8, label=f"trend per decade ({grid.attrs.get('units', '')})")
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png")
    return out.getvalue()


__all__ = ["field_title", "plot_trend_map", "trend_map_png"]
