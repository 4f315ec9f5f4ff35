"""An area's series: per time step the mean over a box of grid points weighted by cos(latitude), the
least and the greatest value, and for an accumulated variable the weighted mean of the points' totals.

On a regular latitude-longitude grid a point stands for a cell whose area is proportional to the
cosine of its latitude, so the area's mean of ``x`` at a step is ``sum(x * cos(lat)) / sum(cos(lat))``
over the points whose ``x`` is not NULL. The aggregation is done by the server, one ``GROUP BY`` of the
step's rows: daily and monthly from the rollups (``<table>_daily``, ``<table>_monthly``), hourly from
the hypertable. The columns are those of the rollups, whatever the step (``core.rollups``):

* ``<v>_min``, ``<v>_max``: the least and greatest over the points of the point's value at that step
  (daily: of the points' daily minima and maxima, so the lowest and highest hour of any point);
* ``<v>_mean``: the weighted mean of the points' values (daily: of their daily means);
* ``<v>_sum`` (an accumulation: precipitation, snowfall, ...): the weighted mean of the points' totals
  over the step, the area's total in mm (or the variable's unit) as a depth.

Every step also says how many grid points had a row (``points``) and how many hours those rows hold
(``hours``: points x 24 on a whole day). Where a step's points hold different hours (a day loaded in
part for some points only), each point still counts by its cell's area alone, not by its hours: the
figures are means of what each point holds, and ``points`` and ``hours`` show how whole the step is.

The box is taken on the table's own lattice (ERA5's 0.25 degrees, ERA5-Land's 0.1: ``Dataset.grid``;
a land table holds land points only, so its mean is over the land inside the box). A table on
pressure levels is read one level at a time (``level``): its rows and rollup rows at that level.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from era5etl.core.datasets import ERA5_GRID, LatLonGrid
from era5etl.core.grid import Area, Grid
from era5etl.core.months import as_utc
from era5etl.core.rollups import sources, split_value_column
from era5etl.db import table_ident
from era5etl.db.registry import table_dataset
from era5etl.db.rollups import LATITUDES, box_filter, box_params, data_columns
from era5etl.db.tables import rollup_of
from era5etl.read.columns import STEP_NAMES, UNITS, Step, check_step, known, resolve
from era5etl.read.errors import ReadError
from era5etl.read.gaps import gap_text, gaps
from era5etl.read.levels import check_level
from era5etl.read.monthly_means import area_columns as month_columns, area_units, hours_of, refuse_days
from era5etl.read.packed import packed, unpack
from era5etl.read.points import MARGIN, Bounds, loaded_bounds, require_table
from era5etl.read.series import source_of
from era5etl.read.text import csv_columns, iso_time, iso_time_array, iso_times

# The weight of a grid point's cell: cos(latitude), computed in float8.
_WEIGHT = sql.SQL("cos(radians(latitude::float8))")


@dataclass
class AreaSeries:
    """``time`` (numpy datetime64[us], UTC: the hour, or the start of the UTC day or month); per step
    ``points`` and ``hours`` (int64) and one float64 array per column in ``values`` (NaN where no point
    had a value)."""

    table: str
    area: Any  # an Area (a box), or a read.regions.Region: named by str()
    step: str
    columns: list[str]
    time: np.ndarray
    points: np.ndarray
    hours: np.ndarray
    values: dict[str, np.ndarray]
    weighting: str = "cos(latitude)"
    units: dict[str, str] | None = None  # a column's unit when not the hourly tables' (read.monthly_means)


def lattice_points(area: Area, grid: LatLonGrid = ERA5_GRID) -> int:
    """Grid points of the table's lattice inside the area: the most a table can hold there."""
    return area.points(Grid(Decimal(str(grid.step))))


def check_inside(table: str, area: Area, bounds: Bounds, grid: LatLonGrid = ERA5_GRID) -> None:
    """ReadError unless the area holds a lattice point and lies within the loaded grid points' box
    (within half a cell of it: a point's cell reaches that far)."""
    if lattice_points(area, grid) == 0:
        raise ReadError(f"the area {area} holds no grid point of the {grid.step:g} degree grid: widen it (for example "
                        f"{_widened(area, grid)})")
    north, west, south, east = (float(v) for v in (area.north, area.west, area.south, area.east))
    if (north > bounds.north + MARGIN or south < bounds.south - MARGIN or west < bounds.west - MARGIN
            or east > bounds.east + MARGIN):
        raise ReadError(f"the area {area} reaches outside the area {table} holds: {bounds} (N/W/S/E, the loaded "
                        "grid points' box); an area's mean is over loaded points only, so ask for an area inside it")


def _widened(area: Area, grid: LatLonGrid = ERA5_GRID) -> str:
    quarter = Decimal(str(grid.step))
    snap = [(v / quarter).to_integral_value(rounding=r) * quarter
            for v, r in ((area.north, "ROUND_CEILING"), (area.west, "ROUND_FLOOR"), (area.south, "ROUND_FLOOR"),
                         (area.east, "ROUND_CEILING"))]
    return "/".join(f"{v.normalize():f}" for v in snap)


def area_columns(variables: list[str] | None, data: list[str]) -> list[str]:
    """The rollup columns an area's series answers with, at any step, in the order asked (a variable
    stands for its aggregates; None: all); ReadError for a name the table's rollups do not know."""
    accepted = [n for n in known("day", data) if n != "hours"]
    names = None if variables is None else [v.strip() for v in variables if v.strip()]
    unknown = [n for n in names or [] if n not in accepted]
    if names is not None and (unknown or not names):
        what = f"unknown variable(s) {', '.join(map(repr, unknown))}" if unknown else "no variable named"
        raise ReadError(f"{what} for an area's series; the known ones are {', '.join(accepted)} (points and hours "
                        "come at every step)")
    return resolve("day", names, data)


def step_value(step: Step, column: str) -> sql.Composable:
    """The per-row value a column of the area series aggregates: the rollup's column (daily, monthly)
    or, hourly, the hypertable's column of its variable (a wind speed from its components)."""
    if step != "hour":
        return sql.SQL("{}::float8").format(sql.Identifier(column))
    variable, _ = split_value_column(column)
    parts = sources(variable)
    if len(parts) == 2:
        u, v = (sql.Identifier(p) for p in parts)
        return sql.SQL("sqrt({}::float8 ^ 2 + {}::float8 ^ 2)").format(u, v)
    return sql.SQL("{}::float8").format(sql.Identifier(parts[0]))


def _aggregates(step: Step, column: str, i: int) -> tuple[list[sql.Composable], sql.Composable]:
    """(the aggregates of one latitude row of a step, what the step's value is made of them): min and
    max of min and max; a mean or a sum, weighted, from each row's sum and count of the points that
    have a value: sum(cos(lat) * sum) / sum(cos(lat) * count), NULL when no point has one."""
    value = step_value(step, column)
    _, agg = split_value_column(column)
    if agg in ("min", "max"):
        a = sql.Identifier(f"a{i}")
        return [sql.SQL("{}({}) AS {}").format(sql.SQL(agg), value, a)], sql.SQL("{}({})").format(sql.SQL(agg), a)
    total, count = sql.Identifier(f"s{i}"), sql.Identifier(f"n{i}")
    return ([sql.SQL("sum({}) AS {}").format(value, total), sql.SQL("count({}) AS {}").format(value, count)],
            sql.SQL("sum({w} * {}) / nullif(sum({w} * {}), 0)").format(total, count, w=_WEIGHT))


def area_statement(relation: str, time_column: str, step: Step, columns: list[str],
                   bounded: tuple[bool, bool] = (True, True), grid: LatLonGrid = ERA5_GRID,
                   level: bool = False, other_longitudes: bool = True) -> sql.Composed:
    """One row: the step's time, points, hours and each column packed, one element per step in time
    order, of the rows in the box %(south)s..%(north)s, %(west)s..%(east)s and in [%(start)s, %(end)s)
    (``bounded`` says which bound is asked for; one not asked is open), on ``grid``'s lattice;
    ``level``: the table is on pressure levels, its rows at %(level)s only; ``other_longitudes``:
    the table may hold points west or east of the box (False: its loaded box is within the box's
    longitudes, and the longitude test, made on every decoded row, is left out).

    The rows are grouped twice: by step and latitude first, with plain sums, counts, minima and
    maxima (which TimescaleDB aggregates vectorised, on the columnstore's batches), then by step,
    each latitude row weighted by its cos(latitude): the same weighted mean as
    ``sum(x * cos(lat)) / sum(cos(lat))`` over the points, at half the time (docs/benchmarks.md)."""
    t = sql.Identifier(time_column)
    hours = sql.SQL("count(*)") if step == "hour" else sql.SQL("sum(hours)")
    inner: list[sql.Composable] = [sql.SQL("{} AS t").format(t), sql.SQL("latitude"),
                                   sql.SQL("count(*) AS points"), sql.SQL("{} AS hours").format(hours)]
    middle: list[sql.Composable] = [sql.SQL("t"), sql.SQL("sum(points)::int8 AS points"),
                                    sql.SQL("sum(hours)::int8 AS hours")]
    for i, c in enumerate(columns):
        parts, made = _aggregates(step, c, i)
        inner += parts
        middle.append(sql.SQL("{} AS {}").format(made, sql.Identifier(f"c{i}")))
    outer = [packed(sql.Identifier("t"), "timestamptz"), packed(sql.Identifier("points"), "int8"),
             packed(sql.Identifier("hours"), "int8")]
    outer += [packed(sql.Identifier(f"c{i}"), "float8") for i in range(len(columns))]
    # The box by latitude and by the ids' longitude columns, on the hourly rows as on the rollups
    # (which keep no longitude: ``db.rollups.box_filter``).
    where: list[sql.Composable] = [sql.SQL("location_id BETWEEN %(first_id)s AND %(last_id)s AND {}").format(
        box_filter(grid) if other_longitudes else LATITUDES)]
    if level:
        where.append(sql.SQL("level = %(level)s"))
    if bounded[0]:
        where.append(sql.SQL("{} >= %(start)s").format(t))
    if bounded[1]:
        where.append(sql.SQL("{} < %(end)s").format(t))
    return sql.SQL("SELECT {} FROM (SELECT {} FROM (SELECT {} FROM {} WHERE {} GROUP BY {}, latitude) g"
                   " GROUP BY t ORDER BY t) q").format(
        sql.SQL(", ").join(outer), sql.SQL(", ").join(middle), sql.SQL(", ").join(inner), table_ident(relation),
        sql.SQL(" AND ").join(where), t)


def area_params(area: Area, start: datetime | None, end: datetime | None, grid: LatLonGrid = ERA5_GRID,
                level: int | None = None) -> dict[str, Any]:
    # The ids of the box's south-west and north-east lattice points bound those inside it: lets the
    # columnstore skip the batches of other points by their location_id metadata.
    south, north = float(area.south), float(area.north)
    west, east = float(area.west), float(area.east)
    step, n = grid.step, grid.lon_count
    first = int(np.floor((south + 90) / step)) * n + int(np.floor((west - grid.lon_first) / step)) + 1
    last = int(np.ceil((north + 90) / step)) * n + int(np.ceil((east - grid.lon_first) / step)) + 1
    # Latitudes are stored as float4: 44.3 is 44.2999992 there, so an edge on ERA5-Land's 0.1 degree
    # lattice would drop its row of points. A thousandth of a cell either side keeps the edges in (the
    # box holds the lattice points inside it, edges included) and takes no other row.
    slack = grid.step / 1000
    return {**box_params(grid, south - slack, north + slack, west, east), "first_id": first, "last_id": last,
            "start": start, "end": end, "level": level}


def holds_other_longitudes(held: Bounds, params: dict[str, Any], grid: LatLonGrid) -> bool:
    """Whether a table whose loaded box is ``held`` may hold points outside the longitude columns
    %(col0)s..%(col1)s of ``params``: unless its columns lie within them (a table of the area's box,
    or a narrower one), its rows need the longitude test."""
    first, last = grid.column_range(held.west, held.east)
    return not (params["col0"] <= first and last <= params["col1"])


def area_series(conn: psycopg.Connection[Any], table: str, area: Area, start: datetime | None, end: datetime | None,
                variables: list[str] | None, step: Step, level: int | None = None) -> AreaSeries:
    """The area's series in [start, end) (None: from the first / to the last loaded) at ``step``.
    ``variables``: a variable (for all its aggregates) or a rollup column name (``temperature_2m_max``)
    at any step; None: every one the table's rollups keep. ReadError for an unknown variable, an area
    without a grid point or reaching outside the loaded area, or a range without rows. ``level``: the
    level (hPa) of a table on pressure levels, which is read one level at a time (ReadError without one)."""
    step = check_step(step)
    require_table(conn, table)
    dataset = table_dataset(conn, table)
    grid = dataset.grid
    level = check_level(conn, table, level)  # one row per level: a mean over levels would mix them
    held = loaded_bounds(conn, table, dataset)
    check_inside(table, area, held, grid)
    columns, relation, time_column, read_step = area_source(conn, table, dataset, variables, step)
    start, end = as_utc(start), as_utc(end)
    params = area_params(area, start, end, grid, level)
    statement = area_statement(relation, time_column, read_step, columns, (start is not None, end is not None),
                               grid, level is not None, holds_other_longitudes(held, params, grid))
    row = conn.cursor(binary=True).execute(statement, params).fetchone()
    parts = list(row) if row else [None] * (len(columns) + 3)
    times = unpack(parts[0], "timestamptz")
    if times.size == 0:
        raise _empty(conn, table, area, step, start, end, params, grid)
    values = {c: unpack(b, "float8").astype(np.float64) for c, b in zip(columns, parts[3:], strict=True)}
    return months_counted(AreaSeries(table, area, step, columns, times, unpack(parts[1], "int8").astype(np.int64),
                                     unpack(parts[2], "int8").astype(np.int64), values), dataset)


def area_source(conn: psycopg.Connection[Any], table: str, dataset: Any, variables: list[str] | None, step: Step
                ) -> tuple[list[str], str, str, Step]:
    """(the columns, the relation, its time column, the step its rows are aggregated at) of an area's
    series at ``step``: the rollups, or hourly the table; a table of monthly means its own rows as
    they are, whatever the step but days (``read.monthly_means``)."""
    if dataset.monthly:
        if step == "day":
            raise refuse_days(table, dataset, "an area's (a region's) daily series")
        return month_columns(table, dataset, variables, data_columns(conn, table)), table, "time", "hour"
    relation, time_column = source_of(conn, table, step)
    return area_columns(variables, data_columns(conn, table)), relation, time_column, step


def months_counted(s: AreaSeries, dataset: Any) -> AreaSeries:
    """``s`` itself, or for a table of monthly means with its step a month, the hours its rows stand
    for (not their count) and its columns' units."""
    if not dataset.monthly:
        return s

    return replace(s, step="month", hours=hours_of(s.time, s.points, dataset),
                   units=area_units(dataset, s.columns))


def _empty(conn: psycopg.Connection[Any], table: str, area: Area, step: Step, start: datetime | None,
           end: datetime | None,
           params: dict[str, Any], grid: LatLonGrid = ERA5_GRID) -> ReadError:
    """Why an area has no rows: no grid point of the table inside it, or none in the range (then what
    the area has loaded). Asked of the monthly rollup (small) when the table has one."""
    relation = rollup_of(conn, table, "month")
    t = sql.Identifier("bucket" if relation else "time")
    found = conn.execute(sql.SQL(
        "SELECT count(DISTINCT location_id), min({t}), max({t}) FROM {r} WHERE location_id BETWEEN %(first_id)s"
        " AND %(last_id)s AND {box}").format(t=t, r=table_ident(relation or table), box=box_filter(grid)),
        params).fetchone()
    if not found or not found[0]:
        return ReadError(f"{table} holds no grid point inside the area {area} (its grid may be coarser than "
                         f"{grid.step:g} degrees, or the area all sea on a land-only table): widen the area")
    what = "hourly rows" if step == "hour" else f"{STEP_NAMES[step]} rollup rows"
    asked = (f"from {iso_time(start) if start else 'the first row'} "
             f"to {iso_time(end) + ' (exclusive)' if end else 'the last'}")
    return ReadError(f"no {what} of {table} in the area {area} {asked}; its {found[0]:,} grid points have months "
                     f"from {iso_time(found[1])[:7]} to {iso_time(found[2])[:7]} loaded")


def _numbers(values: np.ndarray) -> list[float | None]:
    return [None if v != v else v for v in np.asarray(values, dtype=np.float64).tolist()]


def area_csv(s: AreaSeries) -> str:
    """``time,points,hours,<column>,...``: ISO times (UTC), the means as float8, no value empty."""
    cells = [np.asarray(s.values[c], dtype=np.float64) for c in s.columns]
    return csv_columns(["time", "points", "hours", *s.columns], [iso_time_array(s.time), s.points, s.hours, *cells])


def area_json(s: AreaSeries) -> dict[str, Any]:
    """``table``, ``area`` (N/W/S/E), ``step``, ``columns``, ``units``, ``time`` (ISO, UTC), ``points``
    and ``hours`` per step, ``values`` (one list per column, null where no point had a value), and
    ``gaps``: the runs of steps with no row, as text."""
    return {
        "table": s.table,
        "area": str(s.area),
        "step": s.step,
        "weighting": s.weighting,
        "columns": list(s.columns),
        "units": {c: (s.units or UNITS)[c] for c in s.columns},
        "time": iso_times(s.time),
        "points": s.points.tolist(),
        "hours": s.hours.tolist(),
        "values": {c: _numbers(s.values[c]) for c in s.columns},
        "gaps": gap_text(gaps(s.time, s.step), s.step),
    }


__all__ = ["AreaSeries", "ReadError", "area_columns", "area_csv", "area_json", "area_series", "area_source",
           "check_inside", "holds_other_longitudes", "lattice_points", "months_counted"]
