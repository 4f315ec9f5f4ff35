"""Every grid point's yearly value of one variable, as ``climate`` makes a place's: the field the atlas
ranks (``read.atlas``).

A year's value is the mean of an instantaneous variable or the total of an accumulation
(``read.climate.value_column``), made as ``climate`` makes it, so that a point's atlas values equal
``climate --json`` at that point:

* an hourly table: from its daily rollup's UTC days, the mean of the days' means (or the sum of their
  totals); a year has a value only when every one of its days holds its 24 hours;
* a table of monthly means: each month's value spread over its days (``read.daily.spread_months``):
  the days-weighted mean of the months, or the sum of each month's mean daily total x its days; by
  hour of day a month is first made from its 24 hours (their mean, or for an accumulation their sum);
  a year has a value only when it holds its twelve months whole.

One statement, grouped on the server by point and year, sent back as one packed array per column
(``read.packed``): a global table is 1,038,240 points, and a row per point and year would cost the
client more than the server spends.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from era5etl.core.grid import GLOBAL_LON_COUNT, GLOBAL_STEP
from era5etl.core.months import HOURS_A_DAY
from era5etl.core.rollups import WIND_SPEED
from era5etl.db import rollup_tables, table_ident
from era5etl.db.registry import table_dataset
from era5etl.db.rollups import data_columns
from era5etl.read.climate import value_column
from era5etl.read.columns import UNITS
from era5etl.read.errors import ReadError
from era5etl.read.packed import Kind, packed, unpack
from era5etl.read.points import require_table


@dataclass
class YearlyField:
    """``values[i, j]``: the value of year ``years[j]`` at grid point ``location_id[i]`` (NaN: the year
    is not complete there); points ordered by location_id (south to north, west to east)."""

    table: str
    variable: str
    statistic: str  # "mean" or "total"
    unit: str
    location_id: np.ndarray  # int32
    latitude: np.ndarray  # float64, degrees north
    longitude: np.ndarray  # float64, degrees east (-180, 180]
    years: np.ndarray  # int64, every year from the first to the last asked or loaded
    values: np.ndarray  # float64, (points, years)


def coordinates(location_id: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(latitude, longitude) of global 0.25 degree grid ids (``core.grid.location_ids``' inverse)."""
    index = np.asarray(location_id, dtype=np.int64) - 1
    return (index // GLOBAL_LON_COUNT) * GLOBAL_STEP - 90.0, (index % GLOBAL_LON_COUNT) * GLOBAL_STEP - 179.75


def _span(first: int | None, last: int | None) -> tuple[datetime | None, datetime | None]:
    return (datetime(first, 1, 1, tzinfo=UTC) if first is not None else None,
            datetime(last + 1, 1, 1, tzinfo=UTC) if last is not None else None)


def _bounds(column: str, start: datetime | None, end: datetime | None) -> tuple[sql.Composable, list[Any]]:
    parts: list[sql.Composable] = [sql.SQL("location_id IS NOT NULL")]
    params: list[Any] = []
    if start is not None:
        parts.append(sql.SQL("{} >= %s").format(sql.Identifier(column)))
        params.append(start)
    if end is not None:
        parts.append(sql.SQL("{} < %s").format(sql.Identifier(column)))
        params.append(end)
    return sql.SQL(" AND ").join(parts), params


def _daily_statement(daily: str, column: str, statistic: str, where: sql.Composable) -> sql.Composed:
    """Per point and UTC year: the days' mean (or total) over the complete days, and how many there are."""
    fold = sql.SQL("avg" if statistic == "mean" else "sum")
    return sql.SQL(
        "SELECT location_id, extract(year FROM bucket AT TIME ZONE 'UTC')::int AS year,"
        " {fold}({col}::float8) FILTER (WHERE hours >= %s) AS value,"
        " count({col}) FILTER (WHERE hours >= %s) AS whole"
        " FROM {daily} WHERE {where} GROUP BY 1, 2").format(
            fold=fold, col=sql.Identifier(column), daily=table_ident(daily), where=where)


def _monthly_statement(table: str, variable: str, statistic: str, rows_a_month: int,
                       where: sql.Composable) -> sql.Composed:
    """Per point and year: the months' days-weighted mean (or the sum of mean daily total x days) over
    the months holding their rows whole, and how many months those are."""
    month = sql.SQL(
        "SELECT location_id, date_trunc('month', time AT TIME ZONE 'UTC') AS month,"
        " {fold}({col}::float8) AS value, count({col}) AS n FROM {table} WHERE {where} GROUP BY 1, 2").format(
            fold=sql.SQL("avg" if statistic == "mean" else "sum"), col=sql.Identifier(variable),
            table=table_ident(table), where=where)
    days = sql.SQL("extract(day FROM month + interval '1 month' - interval '1 day')")
    value = (sql.SQL("sum(value * {d}) / sum({d})") if statistic == "mean" else sql.SQL("sum(value * {d})")).format(
        d=days)
    return sql.SQL(
        "SELECT location_id, extract(year FROM month)::int AS year, {value} FILTER (WHERE n = %s) AS value,"
        " count(*) FILTER (WHERE n = %s) AS whole FROM ({month}) m GROUP BY 1, 2").format(value=value, month=month)


def yearly_field(conn: psycopg.Connection[Any], table: str, variable: str, first: int | None = None,
                 last: int | None = None) -> YearlyField:
    """``variable``'s yearly values at every grid point of ``table`` over [first, last] (None: what is
    loaded). ReadError for an unknown table or variable, or a span holding no complete year."""
    require_table(conn, table)
    dataset = table_dataset(conn, table)
    columns = [c for c in data_columns(conn, table) if value_column_or_none(c) is not None]
    if not dataset.monthly and {"zonal_wind_10m", "meridional_wind_10m"} <= set(data_columns(conn, table)):
        columns.append(WIND_SPEED)  # the daily rollup's derived speed
    if variable not in columns:
        raise ReadError(f"unknown variable {variable!r} for the atlas of {table}; it has {', '.join(columns)}")
    if first is not None and last is not None and first > last:
        raise ReadError(f"the last year {last} is before the first {first}")
    column, statistic = value_column(variable)
    start, end = _span(first, last)
    if dataset.monthly:
        where, params = _bounds("time", start, end)
        rows_a_month = HOURS_A_DAY if dataset.period == "month_by_hour" else 1
        statement = _monthly_statement(table, variable, statistic, rows_a_month, where)
        params = [rows_a_month, rows_a_month, *params]
    else:
        where, params = _bounds("bucket", start, end)
        statement = _daily_statement(rollup_tables(table)["day"], column, statistic, where)
        params = [HOURS_A_DAY, HOURS_A_DAY, *params]
    cols: list[tuple[str, Kind]] = [("location_id", "int4"), ("year", "int4"), ("value", "float8"), ("whole", "int8")]
    outer = sql.SQL("SELECT {} FROM ({}) y").format(
        sql.SQL(", ").join([packed(sql.Identifier(c), k) for c, k in cols]), statement)
    row = conn.cursor(binary=True).execute(outer, params).fetchone()
    got = {c: unpack(b, k) for (c, k), b in zip(cols, row or [None] * 4, strict=True)}
    ids, years = got["location_id"].astype(np.int32), got["year"].astype(np.int64)
    whole = got["whole"].astype(np.int64)
    need = (np.array([12] * years.size) if dataset.monthly else
            np.array([366 if calendar.isleap(int(y)) else 365 for y in years]))
    value = np.where(whole == need, got["value"].astype(np.float64), np.nan)
    if not np.isfinite(value).any():
        asked = "" if first is None and last is None else f" in {first or '...'}-{last or '...'}"
        raise ReadError(f"{table} holds no complete year of {variable}{asked} at any grid point (a year needs "
                        f"every {'month' if dataset.monthly else 'day, each of 24 hours'})")
    points, row_of = np.unique(ids, return_inverse=True)
    span = np.arange(first if first is not None else years.min(), (last if last is not None else years.max()) + 1)
    values = np.full((points.size, span.size), np.nan)
    inside = (years >= span[0]) & (years <= span[-1])
    values[row_of[inside], years[inside] - span[0]] = value[inside]
    lat, lon = coordinates(points)
    return YearlyField(table, variable, statistic, UNITS[variable], points.astype(np.int32), lat, lon, span, values)


def value_column_or_none(variable: str) -> tuple[str, str] | None:
    """:func:`value_column`, or None for a variable without a yearly value (a wind component)."""
    try:
        return value_column(variable)
    except ReadError:
        return None


__all__ = ["YearlyField", "coordinates", "value_column_or_none", "yearly_field"]
