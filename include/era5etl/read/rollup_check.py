"""A month's rollups checked against its hourly rows, when the month is validated.

The loader writes them (:mod:`era5etl.load.rollup`); this is a second derivation, not the loader's
code again:

* the daily rollup holds one row per grid point of the area and day of the month, each of 24 hours,
  and its hours add up to the month's hourly rows; the monthly rollup one row per point, same sum,
  and each of its values equal to what SQL makes of the month's daily rows (``_monthly_vs_daily``);
* the month's first day, recomputed here from the hourly rows (read a run of hours at a time with
  ``read.hour.hours_columns`` and aggregated in numpy, not in SQL: a second derivation, not the
  rollup's own query again), equals the daily rollup point for point: every hour count, min and max
  (exact: float4 of the same values), mean and sum (float4 of a float8 sum whose order differs:
  within :data:`RTOL` of the value, or :data:`ATOL`).

A table on pressure levels has these rows per level: each level of the month is checked so (the
same figures at that level's rows), and the figures added up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from era5etl.core.datasets import SINGLE_LEVELS, Dataset
from era5etl.core.grid import Area, Grid, location_ids
from era5etl.core.months import Month
from era5etl.core.rollups import rolled_up, sources
from era5etl.db import connect, rollup_tables, table_ident
from era5etl.db.rollups import data_columns
from era5etl.read.hour import hour_columns, hours_columns
from era5etl.read.levels import level_filter
from era5etl.read.packed import packed, unpack

RTOL = 1e-6
ATOL = 1e-6
# The most rows one read of the first day holds: a whole day of an area of up to 166k points, three
# hours of the globe. Read an hour at a time, a table in tiles decoded each of its batches (a point's
# weeks) once an hour: 24 times the month's rows for the 441 points of a month (398 ms of the
# validation's 2.0 s a month; 26 ms in runs, docs/benchmarks.md).
FIRST_DAY_ROWS = 4_000_000


@dataclass
class RollupCheck:
    """The figures compared, and what did not match (empty: the rollups are right)."""

    points: int
    days: int
    hourly_rows: int = 0
    daily_rows: int = 0
    daily_hours: int = 0
    daily_not_24: int = 0
    monthly_rows: int = 0
    monthly_hours: int = 0
    first_day_points: int = 0
    largest_difference: dict[str, float] = field(default_factory=dict)
    mismatches: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def area_ids(area: Area, grid: Grid, dataset: Dataset = SINGLE_LEVELS) -> np.ndarray:
    """The location ids of the area's grid points on ``dataset``'s lattice, sorted."""
    lat, lon = np.meshgrid(area.latitudes(grid), area.longitudes(grid), indexing="ij")
    ids = location_ids(lat.ravel(), lon.ravel()) if dataset is SINGLE_LEVELS else \
        dataset.grid.location_ids(lat.ravel(), lon.ravel())
    return np.sort(ids.astype(np.int64))


class _Day:
    """Hourly values aggregated per grid point as the rollup defines them."""

    def __init__(self, n: int, rolled: dict[str, tuple[str, ...]]) -> None:
        self.rolled = rolled
        self.hours = np.zeros(n, dtype=np.int64)
        names = [*rolled]
        self.low = {v: np.full(n, np.inf) for v in names}
        self.high = {v: np.full(n, -np.inf) for v in names}
        self.total = {v: np.zeros(n) for v in names}
        self.count = {v: np.zeros(n, dtype=np.int64) for v in names}

    def add(self, at: np.ndarray, values: dict[str, np.ndarray]) -> None:
        self.hours[at] += 1
        for name in self.rolled:
            parts = sources(name)
            if len(parts) == 2:
                u, v = values[parts[0]], values[parts[1]]
                x = np.sqrt(u * u + v * v)
            else:
                x = values[name]
            ok = ~np.isnan(x)
            where, x = at[ok], x[ok]
            self.low[name][where] = np.minimum(self.low[name][where], x)
            self.high[name][where] = np.maximum(self.high[name][where], x)
            self.total[name][where] += x
            self.count[name][where] += 1

    def column(self, column: str) -> np.ndarray:
        """The rollup column ``column`` as float32, NaN where no hour had a value."""
        name, agg = column.rsplit("_", 1)
        empty = self.count[name] == 0
        value = {"min": self.low[name], "max": self.high[name], "sum": self.total[name],
                 "mean": self.total[name] / np.maximum(self.count[name], 1)}[agg]
        return np.where(empty, np.nan, value).astype(np.float32)


def _first_day(conn: psycopg.Connection[Any], table: str, day: datetime, ids: np.ndarray, hourly: list[str],
               rolled: dict[str, tuple[str, ...]], level: int | None = None) -> _Day:
    acc = _Day(ids.size, rolled)
    per_read = max(1, min(24, FIRST_DAY_ROWS // max(ids.size, 1)))
    for first in range(0, 24, per_read):
        got = hours_columns(conn, table, day + timedelta(hours=first), day + timedelta(hours=min(24, first + per_read)),
                            ["location_id", *hourly], level)
        at = np.searchsorted(ids, got["location_id"].astype(np.int64))
        mine = at < ids.size
        mine[mine] = ids[at[mine]] == got["location_id"][mine]
        for hour in np.unique(got["time"][mine]):  # an hour at a time: each point once in each add
            this = mine & (got["time"] == hour)
            acc.add(at[this], {c: got[c][this].astype(np.float64) for c in hourly})
    return acc


def _rollup_day(conn: psycopg.Connection[Any], daily: str, day: datetime, ids: np.ndarray, values: list[str],
                level: int | None = None) -> dict[str, np.ndarray]:
    """The daily rollup's row of each id on ``day`` (at ``level``; hours 0 and NaN values where it has none)."""
    cols = [packed(sql.Identifier("location_id"), "int4"), packed(sql.Identifier("hours"), "int8")]
    cols += [packed(sql.Identifier(c), "float4") for c in values]
    row = conn.cursor(binary=True).execute(
        sql.SQL("SELECT {} FROM {} WHERE bucket = %(day)s AND location_id = ANY(%(ids)s){}").format(
            sql.SQL(", ").join(cols), table_ident(daily), level_filter(level)),
        {"day": day, "ids": ids.tolist(), "level": level}).fetchone()
    parts = list(row) if row else [None] * len(cols)
    found = unpack(parts[0], "int4").astype(np.int64)
    at = np.searchsorted(ids, found)
    out = {"hours": np.zeros(ids.size, dtype=np.int64)}
    out["hours"][at] = unpack(parts[1], "int8")
    for c, b in zip(values, parts[2:], strict=True):
        out[c] = np.full(ids.size, np.nan, dtype=np.float32)
        out[c][at] = unpack(b, "float4")
    return out


def _compare(result: RollupCheck, ids: np.ndarray, day: str, want: _Day, got: dict[str, np.ndarray],
             values: list[str]) -> None:
    missing = int(np.count_nonzero((want.hours > 0) & (got["hours"] == 0)))
    if missing:
        result.mismatches.append(f"the daily rollup has no row on {day} for {missing:,} grid point(s) the hourly rows "
                                 "hold")
    hours = np.flatnonzero(want.hours != got["hours"])
    if hours.size:
        i = int(hours[0])
        result.mismatches.append(f"hours on {day} differ at {hours.size:,} point(s), e.g. point {ids[i]}: rollup "
                                 f"{got['hours'][i]}, hourly rows {want.hours[i]}")
    for column in values:
        a, b = got[column].astype(np.float64), want.column(column).astype(np.float64)
        both_nan = np.isnan(a) & np.isnan(b)
        diff = np.where(both_nan, 0.0, np.abs(a - b))
        bad = np.flatnonzero(~both_nan & ~(diff <= ATOL + RTOL * np.abs(b)))  # NaN against a value is bad too
        finite = diff[np.isfinite(diff)]
        result.largest_difference[column] = float(finite.max()) if finite.size else 0.0
        if bad.size:
            i = int(bad[0])
            result.mismatches.append(f"{column} on {day} differs from the hourly rows at {bad.size:,} point(s), "
                                     f"e.g. point {ids[i]}: rollup {a[i]:.9g}, hourly rows {b[i]:.9g}")


def check(url: str, table: str, month: Month, area: Area, grid: Grid, dataset: Dataset = SINGLE_LEVELS,
          levels: tuple[int, ...] = ()) -> RollupCheck:
    """Compare both rollups of ``month`` over ``area`` on ``grid`` with the table's hourly rows.

    For a land-only dataset (ERA5-Land) the points are the area's that the month's first hour holds:
    its land points, whose count the month's validation has checked against the staged download's.
    ``levels``: a table on pressure levels, checked level by level (hPa); the figures added up."""
    if not levels:
        return _check(url, table, month, area, grid, dataset, None)
    out: RollupCheck | None = None
    for level in levels:
        one = _check(url, table, month, area, grid, dataset, level)
        one.mismatches = [f"at {level} hPa: {m}" for m in one.mismatches]
        if out is None:
            out = one
            continue
        for name in ("hourly_rows", "daily_rows", "daily_hours", "daily_not_24", "monthly_rows", "monthly_hours",
                     "first_day_points"):
            setattr(out, name, getattr(out, name) + getattr(one, name))
        for column, diff in one.largest_difference.items():
            out.largest_difference[column] = max(out.largest_difference.get(column, 0.0), diff)
        out.mismatches += one.mismatches
    assert out is not None
    return out


def _check(url: str, table: str, month: Month, area: Area, grid: Grid, dataset: Dataset,
           level: int | None) -> RollupCheck:
    """:func:`check` of one level (``level``), or of a table without levels (None)."""
    names = rollup_tables(table)
    ids = area_ids(area, grid, dataset)
    if dataset.land_only:
        with connect(url) as conn:
            held = hour_columns(conn, table, month.start, ["location_id"], level)["location_id"].astype(np.int64)
        ids = np.intersect1d(ids, held)
    result = RollupCheck(points=int(ids.size), days=month.days)
    window = {"start": month.start, "end": month.end, "ids": ids.tolist(), "level": level}
    at_level = level_filter(level)
    with connect(url) as conn:
        hourly = data_columns(conn, table)
        rolled = rolled_up(hourly)
        values = [f"{v}_{a}" for v, aggs in rolled.items() for a in aggs]
        counted = conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE time >= %(start)s AND time < %(end)s"
                                       " AND location_id = ANY(%(ids)s){}").format(table_ident(table), at_level),
                               window).fetchone()
        result.hourly_rows = int(counted[0]) if counted else 0
        for step, name in names.items():
            row = conn.execute(sql.SQL(
                "SELECT count(*), coalesce(sum(hours), 0), count(*) FILTER (WHERE hours <> 24) FROM {}"
                " WHERE bucket >= %(start)s AND bucket < %(end)s AND location_id = ANY(%(ids)s){}").format(
                table_ident(name), at_level), window).fetchone() or (0, 0, 0)
            if step == "day":
                result.daily_rows, result.daily_hours, result.daily_not_24 = (int(v) for v in row)
            else:
                result.monthly_rows, result.monthly_hours = int(row[0]), int(row[1])
        day = month.start
        want = _first_day(conn, table, day, ids, hourly, rolled, level)
        got = _rollup_day(conn, names["day"], day, ids, values, level)
        monthly_off = _monthly_vs_daily(conn, names, window, rolled, level)
    result.first_day_points = int(np.count_nonzero(got["hours"]))
    expected = result.points * result.days
    where = f"for {month} in {area} (grid {grid})"
    if result.daily_rows != expected:
        result.mismatches.append(f"the daily rollup holds {result.daily_rows:,} rows {where}, not {result.points:,} "
                                 f"points x {result.days} days = {expected:,}")
    if result.daily_not_24:
        result.mismatches.append(f"{result.daily_not_24:,} daily row(s) {where} aggregate other than 24 hours")
    if result.daily_hours != result.hourly_rows:
        result.mismatches.append(f"the daily rollup's hours add up to {result.daily_hours:,} {where}; the table holds "
                                 f"{result.hourly_rows:,} hourly rows")
    if result.monthly_rows != result.points:
        result.mismatches.append(f"the monthly rollup holds {result.monthly_rows:,} rows {where}, not one per grid "
                                 f"point ({result.points:,})")
    if result.monthly_hours != result.hourly_rows:
        result.mismatches.append(f"the monthly rollup's hours add up to {result.monthly_hours:,} {where}; the table "
                                 f"holds {result.hourly_rows:,} hourly rows")
    _compare(result, ids, f"{day:%Y-%m-%d}", want, got, values)
    for column, count in monthly_off.items():
        result.mismatches.append(f"the monthly rollup's {column} differs {where} from its daily rows at {count:,} "
                                 "grid point(s)")
    return result


def _monthly_vs_daily(conn: psycopg.Connection[Any], names: dict[str, str], window: dict[str, Any],
                      rolled: dict[str, tuple[str, ...]], level: int | None = None) -> dict[str, int]:
    """Per monthly value column, the points of the month whose value is not what SQL makes of their
    daily rows: extremes exactly, sums and hour-weighted means within 10 x RTOL (float4 of float8 sums)."""
    wants: list[sql.Composable] = []
    checks: list[sql.Composable] = []
    columns = [f"{variable}_{agg}" for variable, aggs in rolled.items() for agg in aggs]
    for column in columns:
        agg = column.rpartition("_")[2]
        c = sql.Identifier(column)
        if agg in ("min", "max"):
            want: sql.Composable = sql.SQL("{}({})").format(sql.SQL(agg), c)
            bad: sql.Composable = sql.SQL("m.{c} IS DISTINCT FROM d.{c}").format(c=c)
        else:
            want = (sql.SQL("sum({c}::float8 * hours) / nullif(sum(hours) FILTER (WHERE {c} IS NOT NULL), 0)")
                    if agg == "mean" else sql.SQL("sum({c}::float8)")).format(c=c)
            bad = sql.SQL("(m.{c} IS NULL) <> (d.{c} IS NULL) OR abs(m.{c} - d.{c}) > {tol} * (1 + abs(d.{c}))").format(
                c=c, tol=sql.Literal(10 * RTOL))
        wants.append(sql.SQL("{} AS {}").format(want, c))
        checks.append(sql.SQL("count(*) FILTER (WHERE {})").format(bad))
    statement = sql.SQL(
        "SELECT {checks} FROM {monthly} m JOIN (SELECT location_id, {wants} FROM {daily} WHERE bucket >= %(start)s"
        " AND bucket < %(end)s AND location_id = ANY(%(ids)s){daily_level} GROUP BY location_id) d USING (location_id)"
        " WHERE m.bucket = %(start)s{monthly_level}").format(
        checks=sql.SQL(", ").join(checks), wants=sql.SQL(", ").join(wants),
        monthly=table_ident(names["month"]), daily=table_ident(names["day"]), daily_level=level_filter(level),
        monthly_level=sql.SQL(" AND m.level = %(level)s") if level is not None else sql.SQL(""))
    row = conn.execute(statement, window).fetchone() or ()
    return {c: int(n) for c, n in zip(columns, row, strict=True) if n}
