"""Load staged blocks into a hypertable: one transaction per chunk, replacing what it held.

Why it is shaped this way (figures in the README's "Measured here"):

* Each hypertable chunk is written by exactly one transaction that removes the rows the download
  replaces (same time steps, inside the download's box) and streams the new rows with binary COPY
  straight into the chunk's table (no per-row chunk routing). A killed loader leaves every chunk
  either as it was or fully replaced, and a rerun is idempotent.
* In the columnstore (TimescaleDB's Community licence) the COPY compresses as it goes
  (direct-to-columnstore COPY), the rows sent in the table's order so the server sorts nothing.
  On the row store (the Apache licence) each chunk gets its two read indexes after its COPY, built
  sorted instead of maintained row by row.
* A chunk is the unit whatever its span: a day of a global month, a whole month or year of a
  smaller area (``chunk_plan``), or a month whose days were merged after validation.
* Two chunks load at once on separate connections (one reader/encoder thread feeds them). The
  chunks are created up front in short transactions, because the transaction that creates a chunk
  locks the hypertable until it commits, which would serialise the loaders.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from era5etl.db import columnstore_available, columnstore_enabled, connect, split_table, table_ident
from era5etl.load import encode as pgcopy
from era5etl.stage import Block, StagedDownload

log = logging.getLogger(__name__)

BLOCK_ROWS = 1_000_000
# Encoded pieces handed to a chunk's writer: a global hour (1M rows, ~89 MB encoded) is cut by grid
# points so that the blocks in flight stay a few tens of MB each.
PIECE_ROWS = 262_144
# The indexes each chunk gets, each for a read people make. Rows arrive in time order, so a BRIN
# index answers "the whole area at one hour" from a few block ranges and costs almost nothing to
# build; one place's history needs a B-tree on (location_id, time).
CHUNK_INDEXES: tuple[tuple[str, str], ...] = (
    ("time_brin", "USING brin (time) WITH (pages_per_range = 32)"),
    ("location_time", "(location_id, time DESC)"),
)


# Session settings of a COPY into a columnstore chunk laid out as sql/020_columnstore.sql says. The
# rows arrive sorted by its orderby (time, location_id), so the server needs no sort; batches of
# 5,000 rows rather than the default 1,000: fewer batch headers and TOAST pieces, while one place's
# history still decompresses only 5,000 rows an hour.
COLUMNSTORE_COPY_SETTINGS: dict[str, str] = {
    "timescaledb.enable_direct_compress_copy": "on",
    "timescaledb.enable_direct_compress_copy_client_sorted": "on",
    "timescaledb.compression_batch_size_limit": "5000",
}
# The order the loader sends rows in, as TimescaleDB reports a table's columnstore settings.
SENT_ORDER = ("", "time,location_id")


def copy_settings(url: str, table: str) -> dict[str, str] | None:
    """How to COPY into ``table``: None for the row store; else the columnstore's session settings.

    Only a table laid out in the order the loader sends (SENT_ORDER) may be told the rows are
    sorted; a table whose settings were changed gets its batches sorted by the server instead.
    """
    with connect(url) as conn:
        if not conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table_ident(table).as_string(conn),)).fetchone():
            raise LoadError(f"{table} does not exist")
        if not columnstore_enabled(conn, table):
            return None
        row = conn.execute(
            "SELECT coalesce(segmentby, ''), coalesce(orderby, '')"
            " FROM timescaledb_information.hypertable_columnstore_settings WHERE hypertable = %s::regclass",
            (table_ident(table).as_string(conn),)).fetchone()
    layout = (str(row[0]), str(row[1]).replace('"', "").replace(" ", "")) if row else None
    if layout == SENT_ORDER:
        return dict(COLUMNSTORE_COPY_SETTINGS)
    return {**COLUMNSTORE_COPY_SETTINGS, "timescaledb.enable_direct_compress_copy_client_sorted": "off"}


class LoadError(RuntimeError):
    """A chunk could not be written; chunks committed before it stay, the failed one is untouched."""


@dataclass(frozen=True)
class Box:
    """The grid points' bounding box: what a reload replaces."""

    south: float
    north: float
    west: float
    east: float

    @classmethod
    def of(cls, staged: StagedDownload) -> Box:
        lat, lon = staged.latitude, staged.longitude
        return cls(float(lat.min()), float(lat.max()), float(lon.min()), float(lon.max()))


@dataclass
class ChunkResult:
    start: str
    rows: int
    deleted: int
    bytes: int
    seconds: float
    copy_seconds: float = 0.0
    index_seconds: float = 0.0
    replaced: str = "new"  # "new", "truncate" (the chunk held only what this load replaces) or "delete"

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0


@dataclass
class LoadResult:
    rows: int = 0
    deleted: int = 0
    bytes: int = 0
    seconds: float = 0.0
    chunks: list[ChunkResult] = field(default_factory=list)

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0

    def chunk_rates(self) -> list[dict[str, object]]:
        return [{**asdict(c), "rows_per_s": round(c.rows_per_s)} for c in self.chunks]


def chunk_interval_of(url: str, table: str) -> timedelta:
    """The hypertable's own chunk interval: windows must match chunks, whatever the caller assumed."""
    schema, name = _split(table)
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
# A chunk made for a whole calendar year, or month, may hold at most this many rows (a global day
# is 24.9M): the grid points times the hours of the span, whatever part of it a download holds,
# since later loads of the span land in the same chunk. A few points over decades are then a chunk
# a year (planning a read over 1,020 monthly chunks took 261 ms of its 573); a small area a chunk a
# year; a continental one a chunk a month; a global month (772M rows) a chunk a day, loaded two at
# once and merged into one once the month is proven (compress.compress_month).
CHUNK_ROWS = 25_000_000


def chunk_rows() -> int:
    """ERA5_CHUNK_ROWS, default CHUNK_ROWS (0: every chunk on the table's own interval)."""
    raw = os.environ.get("ERA5_CHUNK_ROWS", str(CHUNK_ROWS))
    if not raw.strip().isdigit():
        raise LoadError(f"ERA5_CHUNK_ROWS={raw!r} must be a whole number of rows (0 or more)")
    return int(raw)


def chunk_plan(url: str, table: str, times: np.ndarray, points: int = 1
               ) -> list[tuple[datetime, datetime, list[datetime]]]:
    """The chunks holding ``times``, each with its time steps: (range start, range end, times).

    Where the table has a chunk (a month's daily chunks merged into one, say), that chunk is the
    unit, whatever its size. Where it has none, one is created (``_new_chunks``): a whole calendar
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
    missing = _new_chunks(_uncovered(secs, ranges), ranges, interval, points, whole_spans=chunk_api)
    for i in range(0, len(missing), CREATE_BATCH):
        _create_chunks(url, table, missing[i:i + CREATE_BATCH], chunk_api=chunk_api)
    if missing:
        ranges = _chunk_ranges(url, table, int(secs[0]), int(secs[-1]))
    which = _containing(secs, ranges)
    if (which < 0).any():
        raise LoadError(f"{int((which < 0).sum())} time steps of the download fall in no chunk of {table}")
    # secs is sorted, so each chunk's times are one run of ``which``.
    plan = []
    for i, run in zip(*_runs(which, secs), strict=True):
        r0, r1 = ranges[int(i)]
        plan.append((datetime.fromtimestamp(r0, UTC), datetime.fromtimestamp(r1, UTC),
                     [datetime.fromtimestamp(int(t), UTC) for t in run]))
    return plan


def _chunk_ranges(url: str, table: str, first: int, last: int) -> list[tuple[int, int]]:
    """(start, end) in epoch seconds of the table's chunks overlapping [first, last]."""
    schema, name = _split(table)
    with connect(url) as conn:
        rows = conn.execute(
            "SELECT extract(epoch FROM range_start)::bigint, extract(epoch FROM range_end)::bigint"
            " FROM timescaledb_information.chunks WHERE hypertable_schema = COALESCE(%s, current_schema())"
            " AND hypertable_name = %s AND range_end > to_timestamp(%s) AND range_start <= to_timestamp(%s)"
            " ORDER BY range_start", (schema, name, first, last)).fetchall()
    return [(int(a), int(b)) for a, b in rows]


def _containing(secs: np.ndarray, ranges: Sequence[tuple[int, int]]) -> np.ndarray:
    """Per time (sorted epoch seconds), the index of the range holding it, or -1 (ranges sorted, disjoint)."""
    if not ranges:
        return np.full(len(secs), -1)
    starts = np.array([r[0] for r in ranges])
    ends = np.array([r[1] for r in ranges])
    i = np.searchsorted(starts, secs, side="right") - 1
    inside = (i >= 0) & (secs < ends[np.maximum(i, 0)])
    return np.where(inside, i, -1)


def _uncovered(secs: np.ndarray, ranges: Sequence[tuple[int, int]]) -> np.ndarray:
    return secs[_containing(secs, ranges) < 0]


def _new_chunks(secs: np.ndarray, ranges: Sequence[tuple[int, int]], interval: timedelta, points: int,
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


def _reordered(block: Block, order: np.ndarray) -> Block:
    """The block's grid points in ``order`` (location_id ascending): a copy, one block at a time."""
    assert block.location_id is not None
    return Block(block.valid_time, block.location_id[order], block.latitude[order], block.longitude[order],
                 {c: v[:, order] for c, v in block.values.items()})


@dataclass
class _Window:
    start: datetime
    end: datetime
    times: list[datetime]
    # Encoded blocks and their row counts; bounded so memory follows a few blocks, not the chunk.
    data: queue.Queue[tuple[bytes, int] | None] = field(default_factory=lambda: queue.Queue(maxsize=3))
    result: ChunkResult | None = None


def load(
    url: str,
    table: str,
    staged: StagedDownload,
    *,
    start: datetime | None = None,
    end: datetime | None = None,
    workers: int = 2,
    on_chunk: Callable[[ChunkResult], None] | None = None,
) -> LoadResult:
    """Replace, chunk by chunk, the table's rows at the download's time steps inside its box."""
    box = Box.of(staged)
    times = staged.valid_time
    if start is not None:
        times = times[times >= _np(start)]
    if end is not None:
        times = times[times < _np(end)]
    windows = [_Window(w0, w1, ts) for w0, w1, ts in chunk_plan(url, table, times, staged.points)]
    result = LoadResult()
    if not windows:
        return result
    began = time.perf_counter()
    settings = copy_settings(url, table)
    # Rows reach a columnstore chunk in its order (time, location_id): the grid points sorted once.
    sorted_copy = settings is not None and settings["timescaledb.enable_direct_compress_copy_client_sorted"] == "on"
    order = np.argsort(staged.location_id, kind="stable") if sorted_copy and staged.location_id is not None else None
    # About a million rows per block: big enough to amortise reads and COPY calls, small enough that
    # memory follows the block (a global hour is one block), never the chunk or the month.
    hours = max(1, min(24, BLOCK_ROWS // max(staged.points, 1)))

    todo: queue.Queue[_Window | None] = queue.Queue()
    failures: list[BaseException] = []
    stop = threading.Event()

    def worker() -> None:
        try:
            with connect(url) as conn:
                while (w := todo.get()) is not None:
                    w.result = _write_chunk(conn, table, box, w, stop, settings)
                    if on_chunk is not None:
                        on_chunk(w.result)
        except BaseException as exc:  # surfaced to the caller below, after the other threads stop
            failures.append(exc)
            stop.set()

    threads = [threading.Thread(target=worker, name=f"era5-load-{i}", daemon=True)
               for i in range(max(1, min(workers, len(windows))))]
    for t in threads:
        t.start()
    try:
        for w in windows:
            if stop.is_set():
                break
            todo.put(w)
            # Only the time steps this load owns: a month's bounds can cut a chunk window.
            last = w.times[-1] + timedelta(seconds=1)
            for block in staged.blocks(start=w.times[0], end=last, hours=hours):
                if order is not None:
                    block = _reordered(block, order)
                if not all(_put(w.data, (pgcopy.encode_block(piece), piece.rows), stop)
                           for piece in _pieces(block, PIECE_ROWS)):
                    break
            _put(w.data, None, stop)
    except BaseException as exc:
        failures.append(exc)
        stop.set()
    finally:
        for _ in threads:
            todo.put(None)
        for t in threads:
            t.join()
    if failures:
        first = failures[0]
        if isinstance(first, psycopg.Error):
            # libpq's messages run over several lines; the first says what happened.
            reason = (str(first).strip().splitlines() or [type(first).__name__])[0]
            raise LoadError(f"loading {table} failed: {reason}") from first
        raise first
    for w in windows:
        assert w.result is not None
        result.chunks.append(w.result)
        result.rows += w.result.rows
        result.deleted += w.result.deleted
        result.bytes += w.result.bytes
    result.seconds = time.perf_counter() - began
    return result


def _pieces(block: Block, rows: int) -> Iterator[Block]:
    """The block cut by grid points into pieces of about ``rows`` rows (views, no copies)."""
    t, p = len(block.valid_time), len(block.latitude)
    step = max(1, rows // max(t, 1))
    if step >= p:
        yield block
        return
    for a in range(0, p, step):
        b = min(a + step, p)
        yield Block(block.valid_time, None if block.location_id is None else block.location_id[a:b],
                    block.latitude[a:b], block.longitude[a:b], {c: v[:, a:b] for c, v in block.values.items()})


def _put(q: queue.Queue[tuple[bytes, int] | None], item: tuple[bytes, int] | None, stop: threading.Event) -> bool:
    """Hand a block to a chunk's writer, unless the load is being abandoned."""
    while not stop.is_set():
        try:
            q.put(item, timeout=0.2)
            return True
        except queue.Full:
            continue
    return False


def _write_chunk(conn: psycopg.Connection[tuple[Any, ...]], table: str, box: Box, w: _Window,
                 stop: threading.Event, settings: dict[str, str] | None = None) -> ChunkResult:
    """One chunk's transaction; ``settings``: the columnstore's COPY settings, None for the row store."""
    columnstore = settings is not None
    t0 = time.perf_counter()
    nbytes = rows = deleted = 0
    with conn.transaction(), conn.cursor() as cur:
        # Two loads of the same chunk (a double-clicked rerun, a backfill beside the schedule)
        # queue on the chunk's lock instead of interleaving their deletes and copies. The month's
        # lock, shared here, is what merging the month's chunks takes alone: the chunk found after
        # it is the one that holds these hours until this transaction ends (the day's own chunk, or
        # the merged month if a merge committed while this load waited).
        lock_month(cur, table, w.start, shared=True)
        schema, name, chunk_start, compressed = _chunk_of(cur, table, w.start)
        lock_chunk(cur, table, chunk_start)
        chunk = sql.Identifier(schema, name)
        if compressed and not columnstore:
            # A month compressed on a table since turned back to the row store: plain rows again.
            cur.execute("SELECT decompress_chunk(%s::regclass, if_compressed => true)", (chunk.as_string(conn),))
        if not columnstore:
            for suffix, _ in CHUNK_INDEXES:
                cur.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(schema, f"{name}_{suffix}")))
        params = {"times": w.times, "t0": w.times[0], "t1": w.times[-1], **asdict(box)}
        # The whole chunk is replaced when everything it holds is at these time steps inside this box:
        # TRUNCATE then, which leaves no dead rows behind. Otherwise only those rows go.
        others = cur.execute(
            sql.SQL("SELECT EXISTS (SELECT 1 FROM {} WHERE NOT (time = ANY(%(times)s)"
                    " AND latitude BETWEEN %(south)s AND %(north)s AND longitude BETWEEN %(west)s AND %(east)s)"
                    " OR latitude IS NULL OR longitude IS NULL)").format(chunk),
            params,
        ).fetchone()
        if others is not None and others[0]:
            # In the columnstore, the bounds on time are what lets TimescaleDB decompress only the
            # batches (min/max metadata) that can hold a replaced row.
            cur.execute(
                sql.SQL("DELETE FROM {} WHERE time >= %(t0)s AND time <= %(t1)s AND time = ANY(%(times)s)"
                        " AND latitude BETWEEN %(south)s AND %(north)s AND longitude BETWEEN %(west)s"
                        " AND %(east)s").format(chunk),
                params,
            )
            deleted, replaced = max(cur.rowcount, 0), "delete"
            freeze = sql.SQL("")
        else:
            count = cur.execute(sql.SQL("SELECT count(*) FROM {}").format(chunk)).fetchone()
            deleted = int(count[0]) if count else 0
            # Even an empty chunk is truncated: a table truncated in the COPY's own transaction can
            # take FREEZE (its rows need no hint-bit writes or freezing vacuum later). TimescaleDB
            # 2.19 passed a chunk's COPY to PostgreSQL, which honours it; 2.29 routes it through its
            # own COPY, which does not (measured: no page frozen, against all of them on a plain
            # table), so on the row store it now helps only older servers.
            cur.execute(sql.SQL("TRUNCATE {}").format(chunk))
            if columnstore:
                # TimescaleDB 2.29 truncates only the compressed part of a compressed chunk: rows a
                # partial reload decompressed into its row part survive (measured: 999 of 999), and a
                # whole reload would add its rows beside them. They go here, in the same transaction.
                cur.execute(sql.SQL("DELETE FROM {}").format(chunk))
            replaced = "truncate" if deleted else "new"
            freeze = sql.SQL(", FREEZE")
        if columnstore:
            # Straight into the columnstore: the server compresses batches as rows arrive, in the
            # order the loader sends them (time, location_id), with no sort and no row-store detour.
            for setting, value in (settings or {}).items():
                cur.execute("SELECT set_config(%s, %s, true)", (setting, value))
        columns = sql.SQL(", ").join(map(sql.Identifier, pgcopy.COPY_COLUMNS))
        t_copy = time.perf_counter()
        with cur.copy(sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY{})").format(chunk, columns, freeze)) as cp:
            cp.write(pgcopy.HEADER)
            while (item := w.data.get()) is not None:
                if stop.is_set():
                    raise LoadError("load abandoned: another chunk failed")
                data, n = item
                cp.write(data)
                nbytes += len(data)
                rows += n
            cp.write(pgcopy.TRAILER)
        t_index = time.perf_counter()
        if not columnstore:
            for suffix, definition in CHUNK_INDEXES:
                cur.execute(sql.SQL("CREATE INDEX {} ON {} " + definition).format(  # definition: a constant above
                    sql.Identifier(f"{name}_{suffix}"), chunk))
            # Statistics for the columns the reads filter on, before anyone reads the chunk: without
            # them the planner guesses 0.5% of a chunk per hour instead of 1/24 and scans a whole day
            # for an hour's slice (measured: 325 ms instead of 197 ms on BRIN). Autovacuum would get
            # there later; this costs ~0.05 us a row.
            cur.execute(sql.SQL("ANALYZE {} (time, location_id)").format(chunk))
        t_done = time.perf_counter()
    return ChunkResult(w.start.isoformat(), rows, deleted, nbytes, time.perf_counter() - t0,
                       copy_seconds=t_index - t_copy, index_seconds=t_done - t_index, replaced=replaced)


def _create_chunks(url: str, table: str, ranges: Sequence[tuple[datetime, datetime]], *, chunk_api: bool) -> None:
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
            conn.execute(sql.SQL("INSERT INTO {} (time) SELECT unnest(%s::timestamptz[])").format(ident), (starts,))
            conn.execute(sql.SQL("DELETE FROM {} WHERE time >= %s AND time <= %s AND time = ANY(%s::timestamptz[])"
                                 " AND latitude IS NULL AND longitude IS NULL AND location_id IS NULL").format(ident),
                         (min(starts), max(starts), starts))
            return
        regclass = ident.as_string(conn)
        for r0, r1 in ranges:
            us = [int((t - epoch) / timedelta(microseconds=1)) for t in (r0, r1)]
            conn.execute("SELECT _timescaledb_functions.create_chunk(%s::regclass, %s::jsonb)",
                         (regclass, json.dumps({"time": us})))


def _chunk_of(cur: psycopg.Cursor[tuple[Any, ...]], table: str, moment: datetime
              ) -> tuple[str, str, datetime, bool]:
    """(schema, name, range start, is_compressed) of the chunk holding ``moment``."""
    schema, name = _split(table)
    row = cur.execute(
        "SELECT chunk_schema, chunk_name, range_start, is_compressed FROM timescaledb_information.chunks"
        " WHERE hypertable_schema = COALESCE(%s, current_schema()) AND hypertable_name = %s"
        " AND range_start <= %s AND range_end > %s",
        (schema, name, moment, moment),
    ).fetchone()
    if row is None:
        raise LoadError(f"no chunk of {table} holds {moment.isoformat()}")
    return str(row[0]), str(row[1]), row[2], bool(row[3])


def _split(table: str) -> tuple[str | None, str]:
    return split_table(table)


def lock_chunk(cur: psycopg.Cursor[tuple[Any, ...]], table: str, start: datetime) -> None:
    """The transaction's lock on one chunk of ``table``: whoever rewrites or compresses it takes this first."""
    cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))", (table, start.astimezone(UTC).isoformat()))


def lock_month(cur: psycopg.Cursor[tuple[Any, ...]], table: str, moment: datetime, *, shared: bool) -> None:
    """The transaction's lock on the calendar month holding ``moment``: shared by every writer of a
    chunk in it, taken alone by whoever changes the month's chunks themselves (merging them)."""
    month = moment.astimezone(UTC).strftime("month %Y-%m")
    fn = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
    cur.execute(f"SELECT {fn}(hashtext(%s), hashtext(%s))", (table, month))  # fn: one of two names above


def _np(t: datetime) -> np.datetime64:
    return np.datetime64(t.astimezone(UTC).replace(tzinfo=None), "s")
