"""An area's days of a fixed UTC offset, from the hourly rows: each grid point's day (its hours' time
shifted by the offset, grouped by the shifted calendar day, with the rollups' aggregates), then per day
the points' cos(latitude)-weighted mean of their means and totals and the least and greatest of their
minima and maxima, as ``read.area`` makes a UTC day of the daily rollup. ``points`` and ``hours`` say
how whole each day is (a day the loaded range cuts has fewer hours). The box is taken on the table's
own lattice (ERA5-Land's 0.1 degrees too), and a table on pressure levels is read at one level."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from era5etl.core.grid import Area, Grid
from era5etl.core.rollups import split_value_column
from era5etl.db import table_ident
from era5etl.db.registry import table_dataset
from era5etl.db.rollups import data_columns
from era5etl.read.area import AreaSeries, area_columns, area_json, check_inside
from era5etl.read.errors import ReadError
from era5etl.read.levels import check_level, level_filter
from era5etl.read.localday import LOCAL_DAY, day_aggregate
from era5etl.read.monthly_means import refuse_days
from era5etl.read.packed import packed, unpack
from era5etl.read.points import loaded_bounds, require_table
from era5etl.read.rollup_check import area_ids
from era5etl.read.text import offset_times

_W = sql.Identifier("w")


def _outer(column: str, i: int) -> sql.Composable:
    c = sql.Identifier(f"c{i}")
    _, agg = split_value_column(column)
    if agg in ("min", "max"):
        return sql.SQL("{}({})").format(sql.SQL(agg), c)
    return sql.SQL("sum({w} * {c}) FILTER (WHERE {c} IS NOT NULL) / nullif(sum({w}) FILTER (WHERE {c} IS NOT NULL),"
                   " 0)").format(w=_W, c=c)


def area_local_statement(table: str, columns: list[str], data: list[str], level: int | None = None) -> sql.Composed:
    """One row: the local days' starts (UTC instants), points, hours and each column, packed (of the
    rows at %(level)s when ``level`` is given: a table on pressure levels)."""
    inner: list[sql.Composable] = [
        sql.SQL("{} AS d").format(LOCAL_DAY), sql.SQL("location_id"),
        sql.SQL("cos(radians(min(latitude)::float8)) AS w"), sql.SQL("count(*) AS n")]
    inner += [sql.SQL("{} AS {}").format(day_aggregate(c, data), sql.Identifier(f"c{i}"))
              for i, c in enumerate(columns)]
    middle: list[sql.Composable] = [
        sql.SQL("d AS day"), sql.SQL("count(*)::int8 AS points"),
        sql.SQL("sum(n)::int8 AS hours")]
    middle += [sql.SQL("{} AS {}").format(_outer(c, i), sql.Identifier(f"v{i}")) for i, c in enumerate(columns)]
    outer: list[sql.Composable] = [packed(sql.Identifier("day"), "timestamptz"),
                                   packed(sql.Identifier("points"), "int8"), packed(sql.Identifier("hours"), "int8")]
    outer += [packed(sql.Identifier(f"v{i}"), "float8") for i in range(len(columns))]
    return sql.SQL("SELECT {} FROM (SELECT {} FROM (SELECT {} FROM {} WHERE location_id = ANY(%(ids)s)"
                   " AND time >= %(start)s AND time < %(end)s{} GROUP BY 1, 2) p GROUP BY d ORDER BY d) q").format(
        sql.SQL(", ").join(outer), sql.SQL(", ").join(middle), sql.SQL(", ").join(inner), table_ident(table),
        level_filter(level))


def _span(conn: psycopg.Connection[Any], table: str, ids: np.ndarray, level: int | None = None) -> tuple[datetime,
          datetime]:
    row = conn.execute(sql.SQL("SELECT min(time), max(time) FROM {} WHERE location_id = ANY(%(ids)s){}").format(
        table_ident(table), level_filter(level)), {"ids": ids.tolist(), "level": level}).fetchone()
    if row is None or row[0] is None:
        raise ReadError(f"no hourly rows of {table} in the area")
    return row[0], row[1] + timedelta(hours=1)


def area_local_daily(conn: psycopg.Connection[Any], table: str, area: Area, start: datetime | None,
                     end: datetime | None,
                     variables: list[str] | None, offset_minutes: int, level: int | None = None) -> AreaSeries:
    """The area's days of UTC+``offset_minutes`` whose hours fall in [start, end) (UTC instants; None:
    the area's loaded span): an AreaSeries at step "day" whose ``time`` is each local day's start as a
    UTC instant. ``level``: the level (hPa) of a table on pressure levels (required there)."""
    require_table(conn, table)
    dataset = table_dataset(conn, table)
    if dataset.monthly:
        raise refuse_days(table, dataset, "an area's local days")
    level = check_level(conn, table, level)
    check_inside(table, area, loaded_bounds(conn, table, dataset), dataset.grid)
    data = data_columns(conn, table)
    columns = area_columns(variables, data)
    ids = area_ids(area, Grid(Decimal(str(dataset.grid.step))), dataset)
    if start is None or end is None:
        first, last = _span(conn, table, ids, level)
        start, end = start or first, end or last
    params = {"ids": ids.tolist(), "start": start, "end": end, "shift": timedelta(minutes=offset_minutes),
              "level": level}
    row = conn.cursor(binary=True).execute(area_local_statement(table, columns, data, level), params).fetchone()
    parts = list(row) if row else [None] * (len(columns) + 3)
    times = unpack(parts[0], "timestamptz")
    if times.size == 0:
        raise ReadError(f"no hourly rows of {table} in area {area} from {start:%Y-%m-%d %H:%M} to "
                        f"{end:%Y-%m-%d %H:%M} UTC")
    values = {c: unpack(b, "float8").astype(np.float64) for c, b in zip(columns, parts[3:], strict=True)}
    return AreaSeries(table, area, "day", columns, times, unpack(parts[1], "int8").astype(np.int64),
                      unpack(parts[2], "int8").astype(np.int64), values)


def area_local_json(s: AreaSeries, offset_minutes: int) -> dict[str, Any]:
    """``area_json`` of local days: the times in their offset, and ``utc_offset_hours``."""
    return {**area_json(s), "time": offset_times(s.time, offset_minutes), "utc_offset_hours": offset_minutes / 60}


__all__ = ["area_local_daily", "area_local_json", "area_local_statement"]
