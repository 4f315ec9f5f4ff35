"""How much one HTTP read may answer, checked before anything is read.

A series answers one row per time step of the range asked for, so its size is known from the range
alone: at most :data:`MAX_SERIES_ROWS` steps, enough for a decade of one place hourly (87,672 hours)
and for every year of ERA5 daily (1940 onwards, ~31,000 days). A map answers one cell per grid point
of one hour: at most :data:`MAX_MAP_CELLS`, a quarter of the globe at 0.25° (Europe is ~145,000).
An area's series reads one row per grid point and time step (and answers one per step): at most
:data:`MAX_AREA_POINT_STEPS` of them, the 441 points of a 5 x 5 degree box over 25 years of days
(4,027,212) with room to spare, or a year of them hourly.
The limit is on the range and area asked for, not on what happens to be loaded inside them, so the
answer to a request does not change as the table fills.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.serve.errors import LimitError

MAX_SERIES_ROWS = 100_000
MAX_MAP_CELLS = 260_000
MAX_AREA_POINT_STEPS = 10_000_000
NATIVE_GRID = Grid()  # 0.25°: the finest a table holds, so the area's cells at most
HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_UNITS = {"hour": "hours", "day": "days", "month": "months"}


def series_rows(start: datetime, end: datetime, step: str) -> int:
    """Rows a series answers for [start, end] (both inclusive): the hours, UTC midnights or month starts
    in it, which is what the buckets of ``era5etl.read.series`` at that step are."""
    if end < start:
        return 0
    if step == "hour":
        first = -((EPOCH - start) // HOUR)  # the first whole hour at or after start
        last = (end - EPOCH) // HOUR
        return max(last - first + 1, 0)
    if step == "day":
        first_day = start.date() if start == datetime.combine(start.date(), time(), UTC) else start.date() + DAY
        return max((end.date() - first_day).days + 1, 0)
    if step == "month":
        first_month = Month.of(start) if start == Month.of(start).start else Month.of(start).next()
        last_month = Month.of(end)
        return max((last_month.year - first_month.year) * 12 + last_month.month - first_month.month + 1, 0)
    raise ValueError(f"step {step!r}")


def _span_text(rows: int, step: str) -> str:
    if step == "hour":
        return f"about {rows / 8766:.1f} years of hours"
    if step == "day":
        return f"about {rows / 365.25:.0f} years of days"
    return f"about {rows / 12:.0f} years of months"


def check_series(start: datetime, end: datetime, step: str, limit: int = MAX_SERIES_ROWS) -> int:
    """The rows the series would answer; a LimitError saying the limit and how to narrow it if too many."""
    rows = series_rows(start, end, step)
    if rows <= limit:
        return rows
    unit = _UNITS[step]
    coarser = {"hour": " or step=day", "day": " or step=month"}.get(step, "")
    raise LimitError(
        f"the range {start:%Y-%m-%dT%H:%MZ} to {end:%Y-%m-%dT%H:%MZ} is {rows:,} {unit}, more than the limit of "
        f"{limit:,} {unit} ({_span_text(limit, step)}) a series response may hold: narrow it with from= and to="
        f"{coarser}", limit=limit, requested=rows)


def check_cells(cells: int, what: str, limit: int = MAX_MAP_CELLS) -> int:
    if cells <= limit:
        return cells
    raise LimitError(
        f"{what} has {cells:,} grid points, more than the limit of {limit:,} cells a map response may hold: "
        f"narrow it with area=N/W/S/E (for example 10 x 10 degrees: {Area.parse('50/0/40/10').points(NATIVE_GRID):,}"
        " cells)", limit=limit, requested=cells)


def check_area(area: Area, limit: int = MAX_MAP_CELLS) -> int:
    """The cells of ``area`` on the native grid, checked before the hour is read."""
    return check_cells(area.points(NATIVE_GRID), f"area {area}", limit)


def check_area_series(area: Area, start: datetime, end: datetime, step: str,
                      limit: int = MAX_AREA_POINT_STEPS) -> int:
    """The rows an area's series reads: its grid points on the native grid times the steps of the
    range; a LimitError saying the cost, the limit and how to narrow it if too many."""
    points, steps = area.points(NATIVE_GRID), series_rows(start, end, step)
    cost = points * steps
    if cost <= limit:
        return cost
    coarser = {"hour": ", or ask step=day", "day": ", or ask step=month"}.get(step, "")
    raise LimitError(
        f"the area {area} over {start:%Y-%m-%dT%H:%MZ} to {end:%Y-%m-%dT%H:%MZ} is {points:,} grid points x "
        f"{steps:,} {_UNITS[step]} = {cost:,} rows to read, more than the limit of {limit:,} an area's series may "
        f"read (for example 441 points, a 5 x 5 degree box, over 25 years of days: 4,027,212): narrow area=, or "
        f"from= and to={coarser}", limit=limit, requested=cost)



def check_region_series(points: int, start: datetime, end: datetime, step: str,
                        limit: int = MAX_AREA_POINT_STEPS) -> int:
    """The rows a region's series reads: its grid points times the steps of the range, under the same
    limit as an area's; a LimitError if too many."""
    steps = series_rows(start, end, step)
    cost = points * steps
    if cost <= limit:
        return cost
    coarser = {"hour": ", or ask step=day", "day": ", or ask step=month"}.get(step, "")
    raise LimitError(f"the region's {points:,} grid points x {steps:,} {_UNITS[step]} from {start:%Y-%m-%dT%H:%MZ} to "
                     f"{end:%Y-%m-%dT%H:%MZ} = {cost:,} rows to read, more than the limit of {limit:,}: narrow from= "
                     f"and to={coarser}", limit=limit, requested=cost)
