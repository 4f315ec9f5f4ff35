"""A series or an hour's map as a PNG (matplotlib, Agg: no display, no global pyplot state, so it is
safe in a web server's threads).

A series is one panel per variable: a line for temperature, wind and cloud (min, max and mean
together at a daily or monthly step), bars for precipitation and snowfall (an hour's, a day's or a
month's total). A map is the field on its latitude/longitude lattice, in its variable's palette
(``read.palettes``), under Natural Earth's coastlines and borders (``read.outlines``), with a colour bar
in the variable's unit: stretched to the hour's values, or fixed (``scale``) so that hours compare.
Where the series has no rows (months not loaded) the lines and bars break: a NaN row stands at each
gap (``read.gaps``) and the missing months are named under the panels.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from matplotlib import dates as mdates
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from era5etl.core.grid import GLOBAL_STEP
from era5etl.read.columns import ROLLED_UP, STEP_NAMES, UNITS
from era5etl.read.gaps import gap_text, gaps, with_gaps
from era5etl.read.maps import HourMap
from era5etl.read.outlines import outlines_in
from era5etl.read.palettes import field_palette
from era5etl.read.series import TOTALS, Series
from era5etl.read.text import iso_time

BARS = TOTALS  # totals over their step: bars, not lines
# Past this many bars, one filled step line draws the same picture at a fraction of the cost.
MAX_BARS = 2000
STEP_SECONDS = {"hour": 3_600, "day": 86_400}


def _variable(column: str) -> str:
    """The variable a column belongs to (``temperature_2m_max`` -> ``temperature_2m``)."""
    for variable, aggs in ROLLED_UP.items():
        if column in (f"{variable}_{agg}" for agg in aggs):
            return variable
    return column


def _edges(times: np.ndarray, step: str) -> np.ndarray:
    """Each time step's start and the last one's end (datetime64[us])."""
    t = times.astype("datetime64[us]")
    if step == "month":
        last = (t[-1].astype("datetime64[M]") + 1).astype("datetime64[us]")
    else:
        last = t[-1] + np.timedelta64(STEP_SECONDS[step], "s")
    return np.append(t, last)


def plot_series(series: Series, path: str | Path) -> Path:
    """One panel per variable, the point and step in the title, the steps without rows named at the
    bottom; written as PNG to ``path``."""
    missing = gap_text(gaps(series.time, series.step), series.step)
    series = with_gaps(series)
    groups: dict[str, list[str]] = {}
    for column in series.columns:
        groups.setdefault(_variable(column), []).append(column)
    fig = Figure(figsize=(10, 1.2 + 2.2 * len(groups)), layout="constrained")
    axes = fig.subplots(len(groups), 1, sharex=True, squeeze=False)[:, 0]
    edges = _edges(series.time, series.step)
    p = series.point
    fig.suptitle(f"{p.latitude:g}, {p.longitude:g} (grid point {p.location_id}), {STEP_NAMES[series.step]}")
    for ax, (variable, columns) in zip(axes, groups.items(), strict=True):
        for column in columns:
            values = series.values[column].astype(np.float64)
            label = column.removeprefix(variable).lstrip("_") or column
            if variable in BARS and values.size <= MAX_BARS:
                ax.bar(edges[:-1], values, width=np.diff(edges), align="edge", label=label)
            elif variable in BARS:
                ax.stairs(np.nan_to_num(values), edges, fill=True, label=label)
            else:
                ax.plot(edges[:-1], values, linewidth=1, label=label)
        ax.set_ylabel(f"{variable}\n({UNITS.get(columns[0], '')})")
        ax.grid(True, alpha=0.3)
        if len(columns) > 1:
            ax.legend(loc="upper right", fontsize="small")
    if missing:
        shown = missing if len(missing) <= 6 else [*missing[:5], f"and {len(missing) - 5} more"]
        fig.supxlabel("no rows: " + "; ".join(shown), fontsize="small", color="#b91c1c")
    locator = mdates.AutoDateLocator()  # type: ignore[no-untyped-call]  # untyped in matplotlib
    axes[-1].xaxis.set_major_locator(locator)
    axes[-1].xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
    fig.savefig(path, format="png", dpi=100)
    return Path(path)


def _lattice(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Lattice indexes of coordinates on the 0.25 degree grid, and the grid's step in cells."""
    index = np.rint(values.astype(np.float64) / GLOBAL_STEP).astype(np.int64)
    steps = np.diff(np.unique(index))
    return index, int(np.gcd.reduce(steps)) if steps.size else 1


def draw_outlines(ax: Axes, west: float, south: float, east: float, north: float) -> None:
    """Natural Earth's coastlines (black) and borders (grey) inside the box over ``ax``'s cells, each kind
    one artist (not a line per arc)."""
    lines = outlines_in(west, south, east, north)
    ax.add_collection(LineCollection(lines["borders"], colors="#555555", linewidths=0.4, linestyles="dashed"))
    ax.add_collection(LineCollection(lines["coast"], colors="black", linewidths=0.5))


def plot_map(m: HourMap, path: str | Path, scale: tuple[float, float] | None = None) -> Path:
    """The field on its lattice (north up, grid cells as pixels) in its variable's palette, under the
    coastlines and borders, with a colour bar from the hour's lowest value to its highest (``scale``:
    from the first to the second, whatever the hour holds); PNG to ``path``."""
    rows, row_step = _lattice(m.latitude)
    cols, col_step = _lattice(m.longitude)
    r = (rows - rows.min()) // row_step
    c = (cols - cols.min()) // col_step
    grid = np.full((int(r.max()) + 1, int(c.max()) + 1), np.nan)
    grid[r, c] = m.values
    dlat, dlon = row_step * GLOBAL_STEP, col_step * GLOBAL_STEP
    south, north = float(m.latitude.min()) - dlat / 2, float(m.latitude.max()) + dlat / 2
    west, east = float(m.longitude.min()) - dlon / 2, float(m.longitude.max()) + dlon / 2
    height = min(10.0, max(3.0, 9.0 * (north - south) / max(east - west, 1e-9)))
    palette = field_palette(m.variable)
    finite = m.values[np.isfinite(m.values)]
    low, high = scale if scale is not None else (
        (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0))
    fig = Figure(figsize=(10, height + 1), layout="constrained")
    ax = fig.subplots()
    image = ax.imshow(np.ma.masked_invalid(grid), origin="lower", extent=(west, east, south, north),
                      cmap=palette.name, norm=Normalize(*palette.limits(low, high)), interpolation="nearest",
                      aspect=1 / max(math.cos(math.radians((north + south) / 2)), 0.2))
    draw_outlines(ax, west, south, east, north)
    ax.set_xlim(west, east)
    ax.set_ylim(south, north)
    fig.colorbar(image, ax=ax, label=f"{m.variable} ({UNITS[m.variable]})", shrink=0.9,
                 extend="both" if scale is not None else "neither")
    ax.set_xlabel("longitude (degrees east)")
    ax.set_ylabel("latitude (degrees north)")
    ax.set_title(f"{m.variable} at {iso_time(m.time)}, {m.values.size:,} grid points")
    fig.savefig(path, format="png", dpi=100)
    return Path(path)
