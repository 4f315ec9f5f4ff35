"""The atlas's trend map as a PNG: every grid point's trend per decade on its lattice, a diverging
colour map centred on no change (``read.palettes.change_palette``: ``RdBu_r``, ``BrBG`` for an
accumulation), Natural Earth's coastlines and borders over it and a colour bar in the field's unit
per decade (matplotlib's Agg, as ``read.plots``)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure

from era5etl.read.palettes import change_palette
from era5etl.read.plots import draw_outlines


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
    variable = str(grid.name or "").removesuffix("_trend")
    palette = change_palette("total_precipitation" if statistic == "total" else variable)
    mesh = ax.pcolormesh(lons, lats, np.ma.masked_invalid(values), shading="nearest", cmap=palette.name,
                         norm=TwoSlopeNorm(vcenter=0.0, vmin=-reach, vmax=reach))
    step_lat = float(np.min(np.diff(lats))) if lats.size > 1 else 0.25
    step_lon = float(np.min(np.diff(lons))) if lons.size > 1 else 0.25
    west, east = float(lons.min()) - step_lon / 2, float(lons.max()) + step_lon / 2
    south, north = max(float(lats.min()) - step_lat / 2, -90.0), min(float(lats.max()) + step_lat / 2, 90.0)
    draw_outlines(ax, max(west, -180.0), south, min(east, 180.0), north)
    ax.set_xlim(west, east)
    ax.set_ylim(south, north)
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
