"""One place's series: the rows of one grid point over a range, hourly from the hypertable, daily or
monthly from its rollups, and the series as CSV and JSON.

The API the CLI (``python -m era5etl series``) and the HTTP API call: ``nearest_point`` (from
``read.points``) picks the grid point, ``series`` reads it. The rows come as one array per column
(``read.packed``): a place's 745,128 hours over 1940-2024 are one row of nine byte strings, not
745,128 rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg import sql

from era5etl.core.months import as_utc
from era5etl.core.rollups import WIND_SPEED
from era5etl.db import table_ident
from era5etl.db.registry import table_dataset
from era5etl.db.rollups import data_columns
from era5etl.db.tables import rollup_of
from era5etl.read.columns import STEP_NAMES, UNITS, Step, check_step, resolve
from era5etl.read.errors import ReadError
from era5etl.read.levels import check_level
from era5etl.read.monthly_means import check_columns, refuse_days, units_of
from era5etl.read.packed import Kind, packed, unpack
from era5etl.read.points import Point, nearest_point, require_table
from era5etl.read.text import csv_columns, decimals, iso_time, iso_time_array, iso_times, offset_times, shortest
from era5etl.read.years import Part, parts_of

# The variables whose values are totals over their time step (an hour's, a day's, a month's): drawn
# as bars, not lines, by the PNGs (``read.plots``) and the Data view alike.
TOTALS: tuple[str, ...] = ("total_precipitation", "snowfall")


@dataclass
class Series:
    """``time`` (numpy datetime64[us], UTC: the hour, or the start of the UTC day or month) and one
    array per column in ``values`` (float32 as the table holds them, NaN where NULL; ``hours`` int64).
    Days of a fixed UTC offset (``read.localday``) have ``utc_offset_minutes`` set: ``time`` is then
    each local day's start as a UTC instant, written out in that offset (``2024-03-01T00:00:00+07:00``)."""

    point: Point
    step: str
    columns: list[str]
    time: np.ndarray
    values: dict[str, np.ndarray]
    utc_offset_minutes: int | None = None
    units: dict[str, str] | None = None  # a column's unit when not the hourly tables' (read.monthly_means)


def series_times(s: Series) -> list[str]:
    """The series' times in ISO 8601: UTC (``Z``), or in the series' fixed offset when it has one."""
    if not s.utc_offset_minutes:
        return iso_times(s.time)
    return offset_times(s.time, s.utc_offset_minutes)


def column_expression(column: str) -> sql.Composable:
    if column == WIND_SPEED:
        return sql.SQL("sqrt(zonal_wind_10m::float8 ^ 2 + meridional_wind_10m::float8 ^ 2)")
    return sql.Identifier(column)


def source_of(conn: psycopg.Connection[Any], table: str, step: Step) -> tuple[str, str]:
    """(relation, its time column) a series at ``step`` reads."""
    if step == "hour":
        return table, "time"
    rollup = rollup_of(conn, table, step)
    if rollup is None:
        raise ReadError(f"{table} has no {STEP_NAMES[step]} rollup: the pipeline makes it (ensure_schema)")
    return rollup, "bucket"


def parts_union(parts: Sequence[Part], time_column: str, select: Sequence[sql.Composable], level: int | None = None,
                ordered: bool = True) -> tuple[sql.Composed, dict[str, Any]]:
    """``select`` of one point's rows (``%(id)s``, at ``%(level)s`` when ``level`` is given) in each part's
    range, the parts' selects appended (``UNION ALL``) in time order, each ordered by time when
    ``ordered``; and the parts' bounds as parameters. A part ``tiled`` names the point's tile beside it,
    so the server finds the point's batches through its compressed chunks' index."""
    t = sql.Identifier(time_column)
    params: dict[str, Any] = {}
    selects = []
    for n, part in enumerate(parts):
        where: list[sql.Composable] = [sql.SQL("location_id = %(id)s")]
        if part.tiled:
            where.append(sql.SQL("tile = era5_tile(%(id)s)"))
        if level is not None:
            where.append(sql.SQL("level = %(level)s"))
        for bound, op, value in (("start", ">=", part.start), ("end", "<", part.end)):
            if value is not None:
                where.append(sql.SQL("{} {} {}").format(t, sql.SQL(op), sql.Placeholder(f"{bound}_{n}")))
                params[f"{bound}_{n}"] = value
        order = sql.SQL(" ORDER BY {}").format(t) if ordered else sql.SQL("")
        selects.append(sql.SQL("(SELECT {} FROM {} WHERE {}{})").format(
            sql.SQL(", ").join(select), table_ident(part.relation), sql.SQL(" AND ").join(where), order))
    return sql.SQL(" UNION ALL ").join(selects), params


def series_statement(parts: Sequence[Part], time_column: str, columns: list[str], level: int | None = None
                     ) -> tuple[sql.Composed, dict[str, Any]]:
    """One row: the time column and each column packed, of one point's rows (``%(id)s``) in each part's
    range, in time order; and the parts' bounds as parameters (``parts_union``)."""
    inner = [sql.SQL("{} AS t").format(sql.Identifier(time_column))] + [
        sql.SQL("{} AS {}").format(column_expression(c), sql.Identifier(f"c{i}")) for i, c in enumerate(columns)]
    kinds: list[Kind] = ["int8" if c == "hours" else "float4" for c in columns]
    outer = [packed(sql.Identifier("t"), "timestamptz")] + [packed(sql.Identifier(f"c{i}"), k)
                                                             for i, k in enumerate(kinds)]
    # The parts are disjoint and in time order, each read in order: appended as they are, no sort of
    # the whole (a parallel plan that interleaved them is put back in order by the caller).
    union, params = parts_union(parts, time_column, inner, level)
    return sql.SQL("SELECT {} FROM ({}) q").format(sql.SQL(", ").join(outer), union), params


def series(conn: psycopg.Connection[Any], table: str, point: Point, start: datetime | None, end: datetime | None,
           variables: list[str] | None, step: Step, level: int | None = None) -> Series:
    """The rows of ``point`` with a time in [start, end) (None: from the first / to the last loaded), at
    ``step``: "hour" (the hypertable: its data columns, added ones too, and ``wind_speed_10m``), "day"
    or "month" (the rollups: each column's aggregates, ``core.rollups``, and ``hours``; a variable's
    name stands for its aggregates). ReadError for an unknown variable (naming the known ones) or a range without rows
    (saying what range the point has loaded)."""
    step = check_step(step)
    require_table(conn, table)
    dataset = table_dataset(conn, table)
    if dataset.monthly:  # its rows are the months: read.monthly_means
        return _monthly_means(conn, table, point, start, end, variables, step, dataset)
    level = check_level(conn, table, level)  # a table on pressure levels is read one level at a time
    columns = resolve(step, variables, data_columns(conn, table))
    start, end = as_utc(start), as_utc(end)
    relation, time_column = source_of(conn, table, step)
    times, values = _point_rows(conn, table, relation, time_column, columns, point, step, start, end, level)
    return Series(point, step, columns, times, values)


def _point_rows(conn: psycopg.Connection[Any], table: str, relation: str, time_column: str, columns: list[str],
                point: Point, step: Step,
                start: datetime | None, end: datetime | None, level: int | None = None
                ) -> tuple[npt.NDArray[np.datetime64], dict[str, npt.NDArray[Any]]]:
    """The point's rows of ``relation`` in [start, end), read packed and unpacked, in time order: their
    times and each column's values (``hours`` int64, the rest float32); ReadError if there are none."""
    statement, params = series_statement(parts_of(conn, relation, start, end), time_column, columns, level)
    row = conn.cursor(binary=True).execute(statement, {"id": point.location_id, "level": level, **params}).fetchone()
    packs = list(row) if row else [None] * (len(columns) + 1)
    times = unpack(packs[0], "timestamptz")
    if times.size == 0:
        raise _empty(conn, table, relation, time_column, point, step, start, end)
    values = {c: unpack(b, "int8").astype(np.int64) if c == "hours" else unpack(b, "float4").astype(np.float32)
              for c, b in zip(columns, packs[1:], strict=True)}
    if times.size > 1 and not bool(np.all(times[1:] > times[:-1])):
        order = np.argsort(times, kind="stable")
        times, values = times[order], {c: v[order] for c, v in values.items()}
    return times, values


def _monthly_means(conn: psycopg.Connection[Any], table: str, point: Point, start: datetime | None,
                   end: datetime | None,
                   variables: list[str] | None, step: Step, dataset: Any) -> Series:
    """A table of monthly means: its own rows at any step but days (there are none)."""
    if step == "day":
        raise refuse_days(table, dataset, "a daily series")
    check_columns(table, dataset, variables)
    data = data_columns(conn, table)
    columns = resolve("hour", variables or list(data), data)
    start, end = as_utc(start), as_utc(end)
    times, values = _point_rows(conn, table, table, "time", columns, point, "hour", start, end)
    return Series(point, "month", columns, times, values, units=units_of(dataset, columns))


def _empty(conn: psycopg.Connection[Any], table: str, relation: str, time_column: str, point: Point, step: Step,
           start: datetime | None, end: datetime | None) -> ReadError:
    """Why a range has no rows: what this point has loaded, if anything."""
    t = sql.Identifier(time_column)
    span = conn.execute(sql.SQL("SELECT min({t}), max({t}) FROM {r} WHERE location_id = %s").format(
        t=t, r=table_ident(relation)), (point.location_id,)).fetchone()
    first, last = (span[0], span[1]) if span and span[0] is not None else (None, None)
    where = f"point {point.location_id} ({point.latitude:g}, {point.longitude:g})"
    asked = (f"from {iso_time(start) if start else 'the first row'} "
             f"to {iso_time(end) + ' (exclusive)' if end else 'the last'}")
    what = "hourly rows of " + table if step == "hour" else f"rows in {relation}"
    if first is None or last is None:
        filled = "" if step == "hour" else (": the rollups are written by the load with the rows (run-month, "
                                            "load-file, the DAG's load task); `rollups rebuild` fills them for "
                                            "rows loaded without")
        return ReadError(f"no {what} at {where}{filled}")
    return ReadError(f"no {what} at {where} {asked}; loaded there: {iso_time(first)} to {iso_time(last)}")


def series_csv(s: Series) -> str:
    """``time,<column>,...``: ISO times (UTC), values as the shortest decimals, a NULL empty."""
    times = iso_time_array(s.time) if not s.utc_offset_minutes else series_times(s)
    cells = [s.values[c] if c == "hours" else shortest(s.values[c]) for c in s.columns]
    return csv_columns(["time", *s.columns], [times, *cells])


def series_json(s: Series) -> dict[str, Any]:
    """``point``, ``step``, ``columns``, ``units`` (per column), ``time`` (ISO, UTC) and ``values``
    (one list per column, null where NULL); local days add ``utc_offset_hours`` (the day boundary)."""
    out: dict[str, Any] = {
        "point": asdict(s.point),
        "step": s.step,
        "columns": list(s.columns),
        "units": {c: (s.units or UNITS).get(c, UNITS[c]) for c in s.columns},
        "time": series_times(s),
        "values": {c: s.values[c].tolist() if c == "hours" else decimals(s.values[c]) for c in s.columns},
    }
    if s.utc_offset_minutes is not None:
        out["utc_offset_hours"] = s.utc_offset_minutes / 60
    return out


__all__ = ["TOTALS", "Point", "ReadError", "Series", "nearest_point", "series", "series_csv", "series_json",
           "series_statement", "series_times"]
