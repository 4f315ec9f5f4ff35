"""The table's chunks: which ones a load's time steps fall in, which to create, and creating them.

A chunk is the unit whatever its span: a day of a global month, a whole month or year of a smaller
area (``chunk_plan``), or a month whose days were merged after validation. The chunks are created
up front in short transactions, because the transaction that creates a chunk locks the hypertable
until it commits, which would serialise the loaders.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from era5etl import settings
from era5etl.db import columnstore_available, connect, rollup_tables, split_table, table_ident
from era5etl.load.errors import LoadError


def empty_chunk(cur: psycopg.Cursor[Any], target: sql.Composable, *, compressed: bool) -> None:
    """Every row of ``target`` (a chunk) gone, in the caller's transaction. TimescaleDB 2.29 truncates only
    the compressed part of a compressed chunk: rows a partial reload decompressed into its row part
    survive a TRUNCATE (measured: 999 of 999), so a ``compressed`` one is also emptied by DELETE."""
    cur.execute(sql.SQL("TRUNCATE {}").format(target))
    if compressed:
        cur.execute(sql.SQL("DELETE FROM {}").format(target))


def chunk_interval_of(url: str, table: str) -> timedelta:
    """The hypertable's own chunk interval: windows must match chunks, whatever the caller assumed."""
    schema, name = split_table(table)
    with connect(url) as conn:
        row = conn.execute(
            "SELECT time_interval FROM timescaledb_information.dimensions WHERE hypertable_schema = "
            "COALESCE(%s, current_schema()) AND hypertable_name = %s AND column_name = 'time'",
            (schema, name),
        ).fetchone()
    if row is None or row[0] is None:
        raise LoadError(f"{table} is not a hypertable partitioned by time")
    interval = row[0]
    assert isinstance(interval, timedelta)
    return interval


# Chunks created per transaction: a download over decades of a few points spans a thousand months,
# and one statement creating all their chunks held every chunk's lock at once (measured: a backend
# of 22 GB, killed). In batches, memory follows the batch.
CREATE_BATCH = 200
# A decade's days at most: where a decade of a load's daily rollup rows fits ERA5_CHUNK_ROWS (up to
# 6,843 points a day at the default 25M), the daily rollup has a chunk a decade (daily_ranges).
DECADE_DAYS = 3653
def chunk_rows() -> int:
    """ERA5_CHUNK_ROWS (0: every chunk on the table's own interval).

    A chunk made for a whole calendar year, or month, may hold at most this many rows (default 25M;
    a global day is 24.9M): the grid points times the hours of the span, whatever part of it a
    download holds, since later loads of the span land in the same chunk. A few points over decades
    are then a chunk a year (planning a read over 1,020 monthly chunks took 261 ms of its 573); a
    small area a chunk a year; a continental one a chunk a month; a global month (772M rows) a chunk
    a day, loaded two at once and merged into one once the month is proven (columnstore.compress_month).
    """
    return settings.load().chunk_rows


def chunk_plan(url: str, table: str, times: np.ndarray, points: int = 1
               ) -> list[tuple[datetime, datetime, np.ndarray]]:
    """The chunks holding ``times``, each with its time steps: (range start, range end, times as
    epoch seconds, int64: a download over decades holds ~745,000 of them, no Python objects each).

    Where the table has a chunk (a month's daily chunks merged into one, say), that chunk is the
    unit, whatever its size. Where it has none, one is created (``new_chunks``): a whole calendar
    year or month when it has no chunk yet and ``points`` a time step over it fit ERA5_CHUNK_ROWS,
    else on the table's chunk interval.
    """
    if len(times) == 0:
        return []
    interval = chunk_interval_of(url, table)
    secs = np.unique(times.astype("datetime64[s]").astype(np.int64))
    ranges = _chunk_ranges(url, table, int(secs[0]), int(secs[-1]))
    with connect(url) as conn:
        chunk_api = columnstore_available(conn)  # TimescaleDB's chunk API needs the Community licence
    missing = new_chunks(uncovered(secs, ranges), ranges, interval, points, whole_spans=chunk_api)
    for i in range(0, len(missing), CREATE_BATCH):
        _create_chunks(url, table, missing[i:i + CREATE_BATCH], chunk_api=chunk_api)
    if missing:
        ranges = _chunk_ranges(url, table, int(secs[0]), int(secs[-1]))
    which = containing(secs, ranges)
    if (which < 0).any():
        raise LoadError(f"{int((which < 0).sum())} time steps of the download fall in no chunk of {table}")
    # secs is sorted, so each chunk's times are one run of ``which``.
    plan = []
    for i, run in zip(*_runs(which, secs), strict=True):
        r0, r1 = ranges[int(i)]
        plan.append((datetime.fromtimestamp(r0, UTC), datetime.fromtimestamp(r1, UTC), run))
    daily_rollup_chunks(url, table, [(a, b) for a, b, _ in plan], chunk_api, points)
    return plan


def daily_rollup_chunks(url: str, table: str, windows: Sequence[tuple[datetime, datetime]], chunk_api: bool,
                        points: int) -> None:
    """A chunk of the daily rollup for each window that has none: a decade where the decade's daily
    rows fit ERA5_CHUNK_ROWS (``points`` a day; :func:`daily_ranges`), else the same range as the
    hourly chunk, so the chunk's transaction owns its rollup rows' chunk too (and whole reloads
    truncate it)."""
    if not windows:
        return
    daily = rollup_tables(table)["day"]
    decades = chunk_api and 0 < points * DECADE_DAYS <= chunk_rows()
    first, last = (_decade(windows[0][0])[0], _decade(windows[-1][0])[1]) if decades else (windows[0][0],
                                                                                          windows[-1][1])
    with connect(url) as conn:
        found = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table_ident(daily).as_string(conn),)).fetchone()
        if not (found and found[0]):
            return  # no rollups (a table made by hand): the loader writes none
        have = [(c[2], c[3]) for c in chunks_between(conn, daily, first, last)]
    missing = daily_ranges(windows, have, decades)
    for i in range(0, len(missing), CREATE_BATCH):
        _create_chunks(url, daily, missing[i:i + CREATE_BATCH], chunk_api=chunk_api, time_column="bucket",
                       marker="location_id, hours", marker_values="-1, 0")


def _decade(moment: datetime) -> tuple[datetime, datetime]:
    first = moment.year // 10 * 10
    return datetime(first, 1, 1, tzinfo=UTC), datetime(first + 10, 1, 1, tzinfo=UTC)


def daily_ranges(windows: Sequence[tuple[datetime, datetime]], have: Sequence[tuple[datetime, datetime]],
                 decades: bool) -> list[tuple[datetime, datetime]]:
    """The daily rollup's chunks to create for the windows (the load's hourly chunks, in time order) that
    none of ``have`` overlaps. ``decades``: each the calendar decade holding its window, less what the
    chunks already there cover (a table whose daily chunks were made a year at a time keeps them);
    else the window's own range.

    Why decades (docs/benchmarks.md): a place's daily series over 85 years of a 441-point table read
    85 yearly chunks, and planning them in a new backend took 104-131 ms of its 214-228 ms; over ten
    decade chunks the same read took 80 ms, planning 19."""
    taken = sorted(have)
    out: list[tuple[datetime, datetime]] = []
    for w0, w1 in windows:
        if any(a < w1 and b > w0 for a, b in taken):
            continue
        lo, hi = _decade(w0) if decades else (w0, w1)
        if w1 > hi:
            lo, hi = w0, w1  # a window across a decade's end (none the planner makes): its own range
        lo = max([lo, *(b for _, b in taken if b <= w0)])
        hi = min([hi, *(a for a, _ in taken if a >= w1)])
        out.append((lo, hi))
        taken = sorted([*taken, (lo, hi)])
    return out


def _chunk_ranges(url: str, table: str, first: int, last: int) -> list[tuple[int, int]]:
    """(start, end) in epoch seconds of the table's chunks overlapping [first, last]."""
    schema, name = split_table(table)
    with connect(url) as conn:
        rows = conn.execute(
            "SELECT extract(epoch FROM range_start)::bigint, extract(epoch FROM range_end)::bigint"
            " FROM timescaledb_information.chunks WHERE hypertable_schema = COALESCE(%s, current_schema())"
            " AND hypertable_name = %s AND range_end > to_timestamp(%s) AND range_start <= to_timestamp(%s)"
            " ORDER BY range_start", (schema, name, first, last)).fetchall()
    return [(int(a), int(b)) for a, b in rows]


def containing(secs: np.ndarray, ranges: Sequence[tuple[int, int]]) -> np.ndarray:
    """Per time (sorted epoch seconds), the index of the range holding it, or -1 (ranges sorted, disjoint)."""
    if not ranges:
        return np.full(len(secs), -1)
    starts = np.array([r[0] for r in ranges])
    ends = np.array([r[1] for r in ranges])
    i = np.searchsorted(starts, secs, side="right") - 1
    inside = (i >= 0) & (secs < ends[np.maximum(i, 0)])
    return np.where(inside, i, -1)


def uncovered(secs: np.ndarray, ranges: Sequence[tuple[int, int]]) -> np.ndarray:
    return secs[containing(secs, ranges) < 0]


def new_chunks(secs: np.ndarray, ranges: Sequence[tuple[int, int]], interval: timedelta, points: int,
                whole_spans: bool = True) -> list[tuple[datetime, datetime]]:
    """Ranges of the chunks to create for the uncovered ``secs`` (sorted epoch seconds): per calendar
    year, the year if it is free and fits ERA5_CHUNK_ROWS, else per month the same, else the table's
    interval. Years and months only when ``whole_spans`` (the server can make a chunk of any range)."""
    out: list[tuple[int, int]] = []
    if len(secs) == 0:
        return []
    starts = np.array([r[0] for r in ranges], dtype=np.int64)
    ends = np.array([r[1] for r in ranges], dtype=np.int64)
    step = int(interval.total_seconds())
    limit = chunk_rows() if whole_spans else -1

    def free_and_fits(first: np.datetime64, after: np.datetime64) -> tuple[int, int] | None:
        s0, s1 = (int(t.astype("datetime64[s]").astype(np.int64)) for t in (first, after))
        taken = bool(((starts < s1) & (ends > s0)).any()) if len(starts) else False
        return None if taken or (s1 - s0) // 3600 * points > limit else (s0, s1)

    years = secs.astype("datetime64[s]").astype("datetime64[Y]")
    for year, in_year in zip(*_runs(years, secs), strict=True):
        span = free_and_fits(year, year + 1)
        if span is not None:
            out.append(span)
            continue
        months = in_year.astype("datetime64[s]").astype("datetime64[M]")
        for month, run in zip(*_runs(months, in_year), strict=True):
            span = free_and_fits(month, month + 1)
            if span is not None:
                out.append(span)
            else:
                out.extend((int(w), int(w) + step) for w in np.unique(run // step * step))
    return [(datetime.fromtimestamp(a, UTC), datetime.fromtimestamp(b, UTC)) for a, b in out]


def _runs(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The distinct ``keys`` of a sorted array and, for each, its run of ``values``."""
    distinct, first = np.unique(keys, return_index=True)
    return distinct, np.split(values, first[1:])


def _create_chunks(url: str, table: str, ranges: Sequence[tuple[datetime, datetime]], *, chunk_api: bool,
                   time_column: str = "time", marker: str = "", marker_values: str = "") -> None:
    """Create a chunk for each [start, end), in one short transaction of its own.

    TimescaleDB's chunk API (Community licence) takes the range as given, so a chunk can be a day, a
    month or a year. Without it, a row inserted at each start creates the interval's chunk, and is
    deleted again in the same transaction (marker rows have only a time; every loaded row has a
    latitude). The chunks are made before the loaders start because the transaction that creates a
    chunk locks the hypertable until it commits, which would serialise the loaders.
    """
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    ident = table_ident(table)
    with connect(url) as conn, conn.transaction():
        if not chunk_api:
            starts = [r0 for r0, _ in ranges]
            # marker, marker_values: constants of the caller's (the NOT NULL columns of a rollup).
            extra = sql.SQL(", " + marker) if marker else sql.SQL("")
            values = sql.SQL(", " + marker_values) if marker else sql.SQL("")
            conn.execute(sql.SQL("INSERT INTO {} ({}{}) SELECT unnest(%s::timestamptz[]){}").format(
                ident, sql.Identifier(time_column), extra, values), (starts,))
            conn.execute(sql.SQL("DELETE FROM {t} WHERE {c} >= %s AND {c} <= %s AND {c} = ANY(%s::timestamptz[])"
                                 " AND latitude IS NULL").format(
                t=ident, c=sql.Identifier(time_column)), (min(starts), max(starts), starts))
            return
        regclass = ident.as_string(conn)
        for r0, r1 in ranges:
            us = [int((t - epoch) / timedelta(microseconds=1)) for t in (r0, r1)]
            # Internal, and the only way: TimescaleDB 2.29 has no public function that makes a chunk of
            # a given range (a row inserted makes one of the table's interval, not a year or a month).
            conn.execute("SELECT _timescaledb_functions.create_chunk(%s::regclass, %s::jsonb)",
                         (regclass, json.dumps({time_column: us})))


def chunks_between(conn: psycopg.Connection[Any] | psycopg.Cursor[Any], table: str, start: datetime, end: datetime
                 ) -> list[tuple[str, str, datetime, datetime, bool]]:
    """(schema, name, range_start, range_end, is_compressed) of the chunks holding any time in [start, end)."""
    schema, name = split_table(table)
    rows = conn.execute(
        "SELECT chunk_schema, chunk_name, range_start, range_end, is_compressed FROM timescaledb_information.chunks"
        " WHERE hypertable_schema = COALESCE(%s, current_schema()) AND hypertable_name = %s"
        " AND range_start < %s AND range_end > %s ORDER BY range_start",
        (schema, name, end, start),
    ).fetchall()
    return [(str(s), str(n), r0, r1, bool(c)) for s, n, r0, r1, c in rows]


def chunk_of(cur: psycopg.Cursor[Any] | psycopg.Connection[Any], table: str,
             moment: datetime) -> tuple[str, str, datetime, bool]:
    """(schema, name, range start, is_compressed) of the chunk holding ``moment``."""
    found = chunks_between(cur, table, moment, moment + timedelta(microseconds=1))
    if not found:
        raise LoadError(f"no chunk of {table} holds {moment.isoformat()}")
    schema, name, start, _, compressed = found[0]
    return schema, name, start, compressed


