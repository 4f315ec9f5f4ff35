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

A year's rows are read as one packed array per column (``read.packed``) and folded in numpy, a year
at a time (:func:`yearly_field`).
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


def _rows(conn: psycopg.Connection[Any], relation: str, time_column: str, columns: list[tuple[str, Kind]],
          year: int) -> dict[str, np.ndarray]:
    """One year's rows of ``relation``: each column one packed array (``read.packed``)."""
    parts = [packed(sql.Identifier(c), k) for c, k in columns]
    statement = sql.SQL("SELECT {} FROM {} WHERE {t} >= %s AND {t} < %s AND location_id IS NOT NULL").format(
        sql.SQL(", ").join(parts), table_ident(relation), t=sql.Identifier(time_column))
    row = conn.cursor(binary=True).execute(
        statement, (datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))).fetchone()
    return {c: unpack(b, k) for (c, k), b in zip(columns, row or [None] * len(columns), strict=True)}


def _fold(keys: np.ndarray, values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(sum, count) of the finite ``values`` per key in [0, size); a key with a NaN value gets NaN."""
    finite = np.isfinite(values)
    sums = np.bincount(keys, weights=np.where(finite, values, 0.0), minlength=size)
    counts = np.bincount(keys[finite], minlength=size)
    bad = np.bincount(keys[~finite], minlength=size) > 0
    return np.where(bad, np.nan, sums), counts


def _monthly_year(conn: psycopg.Connection[Any], table: str, wanted: list[tuple[str, str]], rows_a_month: int,
                  year: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(points, each of ``wanted``'s (variable, statistic) values of ``year``) from a table of monthly
    means, in one statement: each month made from its rows (their mean, or for an accumulation their
    sum), then weighted by its days; NaN unless all twelve months hold their rows whole."""
    got = _rows(conn, table, "time", [("location_id", "int4"), ("time", "timestamptz"),
                                      *((v, "float4") for v, _ in wanted)], year)
    points, row = np.unique(got["location_id"], return_inverse=True)
    month = (got["time"].astype("datetime64[M]").astype(np.int64) % 12).astype(np.int64)
    start = np.datetime64(f"{year}-01", "M")
    days = ((start + np.arange(1, 13)).astype("datetime64[D]") - (start + np.arange(12)).astype("datetime64[D]")
            ).astype(np.float64)
    out = {}
    for variable, statistic in wanted:
        sums, counts = _fold(row * 12 + month, got[variable].astype(np.float64), points.size * 12)
        whole = counts == rows_a_month
        per_month = (sums if statistic == "total" else sums / np.maximum(counts, 1)).reshape(points.size, 12)
        value = per_month @ days if statistic == "total" else per_month @ days / days.sum()
        out[variable] = np.where(whole.reshape(points.size, 12).all(axis=1), value, np.nan)
    return points, out


def _daily_year(conn: psycopg.Connection[Any], daily: str, wanted: list[tuple[str, str]],
                year: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(points, each of ``wanted``'s (column, statistic) values of ``year``) from a daily rollup's UTC
    days, in one statement: the mean of the days' means (or the sum of their totals); NaN unless every
    day of the year holds its 24 hours."""
    got = _rows(conn, daily, "bucket", [("location_id", "int4"), ("hours", "int4"),
                                        *((c, "float4") for c, _ in wanted)], year)
    points, row = np.unique(got["location_id"], return_inverse=True)
    whole_day = got["hours"] >= HOURS_A_DAY
    days = 366 if calendar.isleap(year) else 365
    out = {}
    for column, statistic in wanted:
        values = np.where(whole_day, got[column].astype(np.float64), np.nan)
        sums, counts = _fold(row, values, points.size)
        value = sums if statistic == "total" else sums / np.maximum(counts, 1)
        out[column] = np.where(counts == days, value, np.nan)
    return points, out


def _loaded_years(conn: psycopg.Connection[Any], relation: str, time_column: str) -> tuple[int, int] | None:
    row = conn.execute(sql.SQL("SELECT extract(year FROM min({t}) AT TIME ZONE 'UTC')::int, "
                               "extract(year FROM max({t}) AT TIME ZONE 'UTC')::int FROM {r}").format(
        t=sql.Identifier(time_column), r=table_ident(relation))).fetchone()
    return None if row is None or row[0] is None else (int(row[0]), int(row[1]))


def atlas_variables(conn: psycopg.Connection[Any], table: str) -> list[str]:
    """The variables of ``table`` with a yearly value: its columns with one, and on an hourly table with
    both 10 m wind components the daily rollup's derived speed."""
    held = data_columns(conn, table)
    columns = [c for c in held if value_column_or_none(c) is not None]
    if not table_dataset(conn, table).monthly and {"zonal_wind_10m", "meridional_wind_10m"} <= set(held):
        columns.append(WIND_SPEED)
    return columns


def yearly_fields(conn: psycopg.Connection[Any], table: str, variables: list[str] | None = None,
                  first: int | None = None, last: int | None = None) -> dict[str, YearlyField | None]:
    """:func:`yearly_field` of several variables (None: every one of :func:`atlas_variables`), read
    together (one statement a year for all of them): each variable's field, None for one with no
    complete year in the span. ReadError for an unknown table or variable."""
    require_table(conn, table)
    dataset = table_dataset(conn, table)
    columns = atlas_variables(conn, table)
    variables = columns if variables is None else variables
    for variable in variables:
        if variable not in columns:
            raise ReadError(f"unknown variable {variable!r} for the atlas of {table}; it has {', '.join(columns)}")
    if first is not None and last is not None and first > last:
        raise ReadError(f"the last year {last} is before the first {first}")
    relation, time_column = (table, "time") if dataset.monthly else (rollup_tables(table)["day"], "bucket")
    loaded = _loaded_years(conn, relation, time_column)
    lo = first if first is not None else loaded[0] if loaded else None
    hi = last if last is not None else loaded[1] if loaded else None
    if lo is None or hi is None:
        return dict.fromkeys(variables)
    span = np.arange(lo, hi + 1)
    rows_a_month = HOURS_A_DAY if dataset.period == "month_by_hour" else 1
    kinds = {v: value_column(v) for v in variables}  # (the daily rollup's column, mean or total)
    if dataset.monthly:
        wanted = [(v, kinds[v][1]) for v in variables]
        years = [_monthly_year(conn, table, wanted, rows_a_month, int(y)) for y in span]
    else:
        wanted = list(dict.fromkeys((kinds[v][0], kinds[v][1]) for v in variables))
        years = [_daily_year(conn, relation, wanted, int(y)) for y in span]
    points = np.unique(np.concatenate([p for p, _ in years])) if years else np.zeros(0, np.int32)
    lat, lon = coordinates(points)
    out: dict[str, YearlyField | None] = {}
    for variable in variables:
        key = variable if dataset.monthly else kinds[variable][0]
        values = np.full((points.size, span.size), np.nan)
        for j, (p, v) in enumerate(years):
            values[np.searchsorted(points, p), j] = v[key]
        out[variable] = (YearlyField(table, variable, kinds[variable][1], UNITS[variable], points.astype(np.int32),
                                     lat, lon, span, values) if np.isfinite(values).any() else None)
    return out


def yearly_field(conn: psycopg.Connection[Any], table: str, variable: str, first: int | None = None,
                 last: int | None = None) -> YearlyField:
    """``variable``'s yearly values at every grid point of ``table`` over [first, last] (None: what is
    loaded). ReadError for an unknown table or variable, or a span holding no complete year.

    A year at a time: each year's rows come as one packed array per column and are folded in numpy
    (the server's hash aggregate over points x months took 3-6 s for 1.4 million rows here, the rows
    and the fold 0.3 s: docs/benchmarks.md), and a global year of monthly means is 12.5 million rows,
    150 MB, never the whole table at once."""
    field = yearly_fields(conn, table, [variable], first, last)[variable]
    if field is None:
        asked = "" if first is None and last is None else f" in {first or '...'}-{last or '...'}"
        monthly = table_dataset(conn, table).monthly
        raise ReadError(f"{table} holds no complete year of {variable}{asked} at any grid point (a year needs "
                        f"every {'month' if monthly else 'day, each of 24 hours'})")
    return field


def value_column_or_none(variable: str) -> tuple[str, str] | None:
    """:func:`value_column`, or None for a variable without a yearly value (a wind component)."""
    try:
        return value_column(variable)
    except ReadError:
        return None


__all__ = ["YearlyField", "atlas_variables", "coordinates", "value_column_or_none", "yearly_field", "yearly_fields"]
