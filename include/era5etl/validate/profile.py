"""The per-day profile of a month that the database computes (stage 1 of a validation).

For each chunk of the month (a day at the default chunk interval) two aggregate queries run over
its rows of the area, grouped by UTC day: counts, NULLs, rows off the area's lattice, per-variable
min/max and non-finite counts, and duplicate (time, location_id) keys. They run in one read-only
REPEATABLE READ snapshot, so the month is judged as of one instant even if a loader is busy
elsewhere, and they return one row per day: no weather row ever reaches Python. The day rows are
stored in ``era5_validation_days``.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

import psycopg
from psycopg import sql

from era5etl.core.datasets import SINGLE_LEVELS, Dataset
from era5etl.core.errors import InputError
from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.db import connect, table_ident
from era5etl.track import metrics
from era5etl.validate.bounds import BOUNDS, Bounds
from era5etl.validate.lattice import area_predicates

Values = dict[str, tuple[float | None, float | None, int]]  # column -> (finite min, finite max, non-finite)


@dataclass
class DayProfile:
    day: date
    rows: int = 0
    duplicates: int = 0
    null_time: int = 0
    null_location_id: int = 0
    outside_area: int = 0
    values: Values = field(default_factory=lambda: {b.column: (None, None, 0) for b in BOUNDS})  # per bound checked
    seconds: float = 0.0

    def add(self, rows: int, null_location_id: int, outside_area: int, values: Values) -> None:
        """Fold in one window's aggregates for this day (a day can span two chunks)."""
        self.rows += rows
        self.null_location_id += null_location_id
        self.outside_area += outside_area
        for column, (lo, hi, bad) in values.items():
            old_lo, old_hi, old_bad = self.values[column]
            self.values[column] = (
                lo if old_lo is None else old_lo if lo is None else min(lo, old_lo),
                hi if old_hi is None else old_hi if hi is None else max(hi, old_hi),
                old_bad + bad,
            )

    def columns(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: v for k, v in asdict(self).items() if k != "values"}
        for column, (lo, hi, bad) in self.values.items():
            out[f"{column}_min"], out[f"{column}_max"], out[f"{column}_nonfinite"] = lo, hi, bad
        return out


def _finite(column: str) -> sql.Composable:
    # NaN sorts above +Infinity in PostgreSQL, so this one range test excludes NaN and both infinities.
    return sql.SQL("({c} > '-Infinity'::float4 AND {c} < 'Infinity'::float4)").format(c=sql.Identifier(column))


_DAY = sql.SQL("(time AT TIME ZONE 'UTC')::date")


def window_queries(table: str, area: Area, grid: Grid, t0: datetime, t1: datetime,
                   bounds: tuple[Bounds, ...] = BOUNDS, dataset: Dataset = SINGLE_LEVELS, levels: bool = False
                   ) -> tuple[sql.Composed, sql.Composed]:
    """The two aggregate queries over the area's rows in [t0, t1), one result row per UTC day
    (``levels``: a table on pressure levels, whose key is (time, location_id, level))."""
    belongs, on_lattice = area_predicates(area, grid, dataset)
    one_day = t0.astimezone(UTC).date() == (t1 - timedelta(microseconds=1)).astimezone(UTC).date()
    # A window inside one day (every daily chunk) names its day as a constant: no per-row date
    # arithmetic and no grouping, which is a fifth of the aggregate query's time.
    day = sql.SQL("{}::date").format(sql.Literal(t0.astimezone(UTC).date())) if one_day else _DAY
    group = sql.SQL("") if one_day else sql.SQL(" GROUP BY 1")
    where = sql.SQL("time >= {t0} AND time < {t1} AND {belongs}").format(
        t0=sql.Literal(t0), t1=sql.Literal(t1), belongs=belongs)
    per_column = sql.SQL(", ").join(
        sql.SQL("min({c}) FILTER (WHERE {ok}), max({c}) FILTER (WHERE {ok}),"
                " count(*) FILTER (WHERE NOT {ok})").format(c=sql.Identifier(b.column), ok=_finite(b.column))
        for b in bounds
    )
    # Plain aggregates: the planner runs them with parallel workers over the chunk.
    aggregates = sql.SQL(
        "SELECT {day}, count(*), count(*) FILTER (WHERE location_id IS NULL),"
        " count(*) FILTER (WHERE location_id IS NOT NULL AND NOT {on_lattice}), {per_column}"
        " FROM {table} WHERE {where}{group}"
    ).format(day=day, on_lattice=on_lattice, per_column=per_column, table=table_ident(table), where=where,
             group=group)
    # Duplicates hour by hour: a sort of one hour's ids at a time (about a million for the globe)
    # stays near work_mem, where one hash over a day's (time, location_id) keys would spill.
    duplicates = sql.SQL(
        "SELECT {day}, coalesce(sum(n - k), 0) FROM (SELECT time, count(location_id) AS n,"
        " count(DISTINCT {key}) AS k FROM {table} WHERE {where} GROUP BY time) AS hours{group}"
    ).format(day=day, table=table_ident(table), where=where, group=group,
             key=sql.SQL("(location_id, level)") if levels else sql.SQL("location_id"))
    return aggregates, duplicates


def _require_table(conn: psycopg.Connection[tuple[Any, ...]], table: str) -> None:
    row = conn.execute("SELECT to_regclass(%s)", (table_ident(table).as_string(conn),)).fetchone()
    if row is None or row[0] is None:
        raise InputError(f"table {table!r} does not exist in the database")


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime
    bytes: int


def month_windows(conn: psycopg.Connection[tuple[Any, ...]], table: str, month: Month) -> list[Window]:
    """The month cut at the hypertable's chunk boundaries, with each chunk's bytes (``chunks_detailed_size``
    without indexes: its heap, and in the columnstore its compressed relation with TOAST, what a scan reads).

    One window per chunk means each chunk is scanned once whatever the chunk interval; a plain
    table (or a month with no chunk yet) is one window, which then holds no or all rows.
    """
    rows = conn.execute(
        "SELECT c.range_start, c.range_end, coalesce(d.total_bytes - d.index_bytes, 0)"
        " FROM timescaledb_information.chunks c JOIN pg_class r ON r.relname = c.hypertable_name"
        " JOIN pg_namespace n ON n.oid = r.relnamespace AND n.nspname = c.hypertable_schema"
        " LEFT JOIN chunks_detailed_size(%s::regclass) d"
        " ON (d.chunk_schema, d.chunk_name) = (c.chunk_schema, c.chunk_name)"
        " WHERE r.oid = %s::regclass AND c.range_start < %s AND c.range_end > %s ORDER BY c.range_start",
        (table_ident(table).as_string(conn), table_ident(table).as_string(conn), month.end, month.start),
    ).fetchall()
    if not rows:
        return [Window(month.start, month.end, 0)]
    return [Window(max(s, month.start), min(e, month.end), int(b)) for s, e, b in rows]


def profile_month(
    url: str, table: str, month: Month, area: Area, grid: Grid, *,
    progress: metrics.Progress | None = None, bounds: tuple[Bounds, ...] = BOUNDS,
    dataset: Dataset = SINGLE_LEVELS, levels: bool = False,
) -> tuple[list[DayProfile], int]:
    """The month's per-day profile, chunk by chunk in one snapshot, and the heap bytes read."""
    starts = {d.date(): d for d in month.day_starts()}
    days = {d: DayProfile(d, values={b.column: (None, None, 0) for b in bounds}) for d in starts}
    with connect(url) as conn:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.read_only = True
        with conn.transaction():
            _require_table(conn, table)
            windows = month_windows(conn, table, month)
            # Rows with a NULL time are in no month; counted table-wide. With the schema's NOT NULL the
            # planner proves the count zero without reading a row.
            null_time_row = conn.execute(
                sql.SQL("SELECT count(*) FROM {} WHERE time IS NULL").format(table_ident(table))).fetchone()
            null_time = int(null_time_row[0]) if null_time_row else 0
            for w in windows:
                began = time.perf_counter()
                aggregates, duplicates = window_queries(table, area, grid, w.start, w.end, bounds, dataset,
                                                        levels)
                rows = 0
                for agg in conn.execute(aggregates).fetchall():
                    values: Values = {b.column: (agg[4 + 3 * i], agg[5 + 3 * i], int(agg[6 + 3 * i]))
                                      for i, b in enumerate(bounds)}
                    days[agg[0]].add(int(agg[1]), int(agg[2]), int(agg[3]), values)
                    rows += int(agg[1])
                for day, dups in conn.execute(duplicates).fetchall():
                    days[day].duplicates += int(dups)
                seconds = time.perf_counter() - began
                covered = [d for d, start in starts.items() if start < w.end and start + timedelta(days=1) > w.start]
                for d in covered:
                    days[d].seconds += seconds / len(covered)
                if progress is not None:
                    progress(metrics.Chunk(rows, w.bytes, seconds))
    for profile in days.values():
        profile.null_time = null_time
    return list(days.values()), sum(w.bytes for w in windows)


def store_profile(url: str, validation_id: str, table: str, month: Month, area: Area, grid: Grid,
                  days: list[DayProfile]) -> None:
    if not days:
        return
    columns = list(days[0].columns())
    extra = [c for c in days[0].values if c not in {b.column for b in BOUNDS}]
    if extra:
        # A table with catalogued columns beyond the six: the profile table gets their three figures
        # (nullable: the six's NOT NULL counts stay as they were for every earlier row).
        with connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("ALTER TABLE era5_validation_days {}").format(sql.SQL(", ").join(
                sql.SQL("ADD COLUMN IF NOT EXISTS {} {}").format(sql.Identifier(f"{c}_{part}"), sql.SQL(kind))
                for c in extra for part, kind in (("min", "float4"), ("max", "float4"), ("nonfinite", "bigint")))))
    stmt = sql.SQL(
        "INSERT INTO era5_validation_days (validation_id, table_name, month, area, grid, {cols})"
        " VALUES (%s, %s, %s, %s, %s, {vals})"
    ).format(cols=sql.SQL(", ").join(map(sql.Identifier, columns)),
             vals=sql.SQL(", ").join(sql.Placeholder() for _ in columns))
    with connect(url) as conn, conn.transaction(), conn.cursor() as cur:
        cur.executemany(stmt, [(validation_id, table, month.start.date(), str(area), str(grid),
                                *d.columns().values()) for d in days])
