"""Writing one chunk: its transaction, how the COPY is set up, and the indexes it gets.

* Each hypertable chunk is written by exactly one transaction that removes the rows the download
  replaces (same time steps, inside the download's box) and streams the new rows with binary COPY
  straight into the chunk's table (no per-row chunk routing). A killed loader leaves every chunk
  either as it was or fully replaced, and a rerun is idempotent.
* In the columnstore (TimescaleDB's Community licence) the COPY compresses as it goes
  (direct-to-columnstore COPY), the rows sent in the table's order so the server sorts nothing.
  On the row store (the Apache licence) each chunk gets its two read indexes after its COPY, built
  sorted instead of maintained row by row.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg import sql

from era5etl.core.datasets import ERA5_GRID, LatLonGrid
from era5etl.core.tiles import TILE_COLUMN
from era5etl.core.variables import DATA_COLUMNS
from era5etl.db import connect, rollup_tables, table_ident
from era5etl.db.layout import (
    TILES_ORDER,
    TILES_ORDER_LEVELS,
    TIME_ORDER,
    TIME_ORDER_LEVELS,
    columnstore_settings,
    has_tile_column,
)
from era5etl.db.rollups import box_filter, box_params, daily_from_hourly, level_filter, other_hours
from era5etl.load import encode
from era5etl.load.chunks import chunk_of, chunks_between, empty_chunk
from era5etl.load.errors import LoadError
from era5etl.load.locks import lock_chunk, lock_month
from era5etl.load.results import ChunkResult
from era5etl.load.rollup import WindowRollup
from era5etl.load.session import (
    COLUMNSTORE_COPY_SETTINGS,
    TILES_COPY_SETTINGS,
    apply_settings,
    lift_decompression_limit,
)
from era5etl.load.years import forget_years
from era5etl.stage import StagedDownload

# The indexes each chunk gets, each for a read people make. Rows arrive in time order, so a BRIN
# index answers "the whole area at one hour" from a few block ranges and costs almost nothing to
# build; one place's history needs a B-tree on (location_id, time).
CHUNK_INDEXES: tuple[tuple[str, str], ...] = (
    ("time_brin", "USING brin (time) WITH (pages_per_range = 32)"),
    ("location_time", "(location_id, time DESC)"),
)


# The layouts whose order the loader sends rows in (db.layout): a tiled table's rows point by point
# within each tile (encode.encode_block with tiles), a time-ordered table's hour by hour.
SENT_ORDERS = {False: (TIME_ORDER, TILES_ORDER), True: (TIME_ORDER_LEVELS, TILES_ORDER_LEVELS)}


def copy_settings(url: str, table: str, levels: bool = False) -> tuple[dict[str, str] | None, bool]:
    """How to COPY into ``table``: (None for the row store, else the columnstore's session settings;
    whether the table is laid out in tiles, so the rows carry their tile and go point by point).

    Only a table laid out in an order the loader sends (SENT_ORDERS) may be told the rows are
    sorted; a table whose settings were changed gets its batches sorted by the server instead.
    """
    with connect(url) as conn:
        if not conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table_ident(table).as_string(conn),)).fetchone():
            raise LoadError(f"{table} does not exist")
        layout = columnstore_settings(conn, table)
        tiled = has_tile_column(conn, table)
    if layout is None:
        return None, tiled
    if tiled and layout in SENT_ORDERS[levels]:
        return dict(TILES_COPY_SETTINGS), tiled
    if layout in SENT_ORDERS[levels] and not tiled:
        return dict(COLUMNSTORE_COPY_SETTINGS), tiled
    return {**COLUMNSTORE_COPY_SETTINGS, "timescaledb.enable_direct_compress_copy_client_sorted": "off"}, tiled


def rollups_in_tiles(url: str, table: str) -> bool:
    """Whether ``table``'s rollups are laid out in tiles (their rows then carry their tile)."""
    with connect(url) as conn:
        daily = rollup_tables(table)["day"]
        found = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table_ident(daily).as_string(conn),)).fetchone()
        return bool(found and found[0]) and has_tile_column(conn, daily)


@dataclass(frozen=True)
class Footprint:
    """What a load writes and a reload replaces: the bounding box of its grid points (N/W/S/E, as
    ``core.grid.Area``), the data columns and the pressure levels."""

    north: float
    west: float
    south: float
    east: float
    # The six, then the columns of any other catalogued variable the download holds (a reload
    # replaces whole rows: a column not written is NULL in them).
    columns: tuple[str, ...] = DATA_COLUMNS
    # A download on pressure levels replaces its levels only (hPa); () for a table without levels.
    levels: tuple[int, ...] = ()
    # The lattice whose ids the points have: a rollup row keeps no longitude, its id's column does.
    grid: LatLonGrid = ERA5_GRID
    # The table (its rollups) laid out in tiles: each row also carries its point's tile (core.tiles).
    tiled: bool = False
    rollups_tiled: bool = False

    @classmethod
    def of(cls, staged: StagedDownload, base: tuple[str, ...] = DATA_COLUMNS, grid: LatLonGrid = ERA5_GRID
           ) -> Footprint:
        """``base``: the columns the table is made with (the six of single levels), written NULL when
        the download lacks them."""
        lat, lon = staged.latitude, staged.longitude
        extra = tuple(v.column for v in staged.variables if v.column not in base)
        return cls(float(lat.max()), float(lon.min()), float(lat.min()), float(lon.max()), (*base, *extra),
                   tuple(getattr(staged, "levels", ())), grid)

    def params(self) -> dict[str, Any]:
        """The bounds (and levels) as a statement's parameters."""
        return {"south": self.south, "north": self.north, "west": self.west, "east": self.east} | (
            {"levels": list(self.levels)} if self.levels else {})

    def rollup_params(self) -> dict[str, Any]:
        """The bounds as the parameters of ``db.rollups.box_filter`` (with the degrees too, for
        the statements that read the hourly rows)."""
        return self.params() | box_params(self.grid, self.south, self.north, self.west, self.east)

    def level_filter(self) -> sql.Composable:
        return level_filter(bool(self.levels))


@dataclass
class Window:
    start: datetime
    end: datetime
    times: np.ndarray  # the load's time steps in the chunk, epoch seconds (int64), sorted
    # Encoded blocks and their row counts; bounded so memory follows a few blocks, not the chunk.
    data: queue.Queue[tuple[bytes, int] | None] = field(default_factory=lambda: queue.Queue(maxsize=3))
    result: ChunkResult | None = None
    # The chunk's daily rollup rows, handed on as they are encoded (None: no rollups).
    rollup: WindowRollup | None = None


def write_chunk(conn: psycopg.Connection[tuple[Any, ...]], table: str, footprint: Footprint, w: Window,
                stop: threading.Event, settings: dict[str, str] | None = None) -> ChunkResult:
    """One chunk's transaction; ``settings``: the columnstore's COPY settings, None for the row store."""
    columnstore = settings is not None
    t0 = time.perf_counter()
    with conn.transaction(), conn.cursor() as cur:
        chunk, name = _take_chunk(conn, cur, table, w, columnstore=columnstore)
        deleted, replaced, freeze = _clear(cur, chunk, footprint, w, columnstore=columnstore)
        rows, nbytes, t_copy = _copy_rows(cur, chunk, footprint, w, stop, settings, freeze)
        t_index = time.perf_counter()
        rollup_rows = 0
        if w.rollup is not None:
            rollup_rows = write_daily(cur, table, chunk, footprint, w.start, w.end, w.rollup,
                                      whole=replaced != "delete", empty=replaced == "new", columnstore=columnstore,
                                      stop=stop)
        t_rollup = time.perf_counter()
        if not columnstore:
            _index(cur, chunk, name)
        t_done = time.perf_counter()
    return ChunkResult(w.start.isoformat(), rows, deleted, nbytes, time.perf_counter() - t0,
                       copy_seconds=t_index - t_copy, index_seconds=t_done - t_rollup, replaced=replaced,
                       rollup_rows=rollup_rows, rollup_seconds=t_rollup - t_index,
                       sql_days=0 if w.rollup is None else len(w.rollup.partial_days))


def _take_chunk(conn: psycopg.Connection[tuple[Any, ...]], cur: psycopg.Cursor[tuple[Any, ...]], table: str,
                w: Window, *, columnstore: bool) -> tuple[sql.Identifier, str]:
    """The chunk that holds the window, locked and ready for its rows to be replaced; its name."""
    # Two loads of the same chunk (a double-clicked rerun, a backfill beside the schedule)
    # queue on the chunk's lock instead of interleaving their deletes and copies. The month's
    # lock, shared here, is what merging the month's chunks takes alone: the chunk found after
    # it is the one that holds these hours until this transaction ends (the day's own chunk, or
    # the merged month if a merge committed while this load waited).
    lock_month(cur, table, w.start, shared=True)
    # The years these rows fall in are no longer what the copy of years holds (load.years).
    forget_years(cur, table, *(datetime.fromtimestamp(int(s), UTC) for s in (w.times[0], w.times[-1])))
    schema, name, chunk_start, compressed = chunk_of(cur, table, w.start)
    lock_chunk(cur, table, chunk_start)
    chunk = sql.Identifier(schema, name)
    if compressed:
        # Replacing part of a compressed chunk decompresses every batch that holds one of its rows
        # (in (time, location_id) order, most of the month); TimescaleDB refuses a statement that
        # decompresses over 100,000 rows unless told otherwise, which failed any partial reload
        # of a month above that. The chunk's transaction is the unit that may: no limit in it.
        lift_decompression_limit(cur)
    if compressed and not columnstore:
        # A month compressed on a table since turned back to the row store: plain rows again.
        cur.execute("CALL convert_to_rowstore(%s::regclass, if_columnstore => true)", (chunk.as_string(conn),))
    if not columnstore:
        for suffix, _ in CHUNK_INDEXES:
            cur.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(schema, f"{name}_{suffix}")))
    return chunk, name


def _clear(cur: psycopg.Cursor[tuple[Any, ...]], chunk: sql.Identifier, footprint: Footprint, w: Window, *,
           columnstore: bool) -> tuple[int, str, sql.SQL]:
    """The rows the window replaces gone: how many, how ("delete", "truncate" or "new"), and the
    COPY option that goes with it (FREEZE into a chunk truncated in this transaction)."""
    first, last = (datetime.fromtimestamp(int(s), UTC) for s in (w.times[0], w.times[-1]))
    # Every hour from first to last (a month, a year: what loads are): the bounds say it all. Otherwise
    # the time steps themselves, as a list (a 3-hourly file, a download with a gap).
    every_hour = bool(np.all(np.diff(w.times) == 3600))
    steps = sql.SQL("TRUE") if every_hour else sql.SQL("time = ANY(%(times)s)")
    times = [] if every_hour else [datetime.fromtimestamp(int(t), UTC) for t in w.times]
    params = {"times": times, "t0": first, "t1": last, **footprint.params()}
    # The whole chunk is replaced when everything it holds is at these time steps inside this footprint:
    # TRUNCATE then, which leaves no dead rows behind. Otherwise only those rows go.
    others = cur.execute(
        sql.SQL("SELECT EXISTS (SELECT 1 FROM {} WHERE NOT (time >= %(t0)s AND time <= %(t1)s AND {}"
                " AND latitude BETWEEN %(south)s AND %(north)s AND longitude BETWEEN %(west)s AND %(east)s{})"
                " OR latitude IS NULL OR longitude IS NULL)").format(chunk, steps, footprint.level_filter()),
        params,
    ).fetchone()
    if others is not None and others[0]:
        # In the columnstore, the bounds on time are what lets TimescaleDB decompress only the
        # batches (min/max metadata) that can hold a replaced row.
        cur.execute(
            sql.SQL("DELETE FROM {} WHERE time >= %(t0)s AND time <= %(t1)s AND {}"
                    " AND latitude BETWEEN %(south)s AND %(north)s AND longitude BETWEEN %(west)s"
                    " AND %(east)s{}").format(chunk, steps, footprint.level_filter()),
            params,
        )
        deleted, replaced = max(cur.rowcount, 0), "delete"
        freeze = sql.SQL("")
    else:
        count = cur.execute(sql.SQL("SELECT count(*) FROM {}").format(chunk)).fetchone()
        deleted = int(count[0]) if count else 0
        # On the row store even an empty chunk is truncated: a table truncated in the COPY's own
        # transaction can take FREEZE (its rows need no hint-bit writes or freezing vacuum later).
        # FREEZE takes effect where TimescaleDB hands a chunk's COPY to PostgreSQL (2.19); 2.29 runs
        # the COPY itself and freezes no page (docs/benchmarks.md), where the flag costs nothing.
        # In the columnstore an empty chunk is left as it is: a TRUNCATE makes new files for it and
        # its compressed relation for nothing (85 new year chunks of a download over decades, each
        # written once). A whole reload would add its rows beside what a compressed chunk's row part
        # kept (empty_chunk).
        if deleted or not columnstore:
            empty_chunk(cur, chunk, compressed=columnstore)
        replaced = "truncate" if deleted else "new"
        freeze = sql.SQL(", FREEZE")
    return deleted, replaced, freeze


def next_piece(w: Window, stop: threading.Event) -> tuple[bytes, int] | None:
    """The window's next encoded piece (None: its rows are all sent); LoadError as soon as the load is
    abandoned, whether or not a piece is waiting: the thread reading the blocks may have failed before
    it could say the window ended, and a writer waiting for that would wait for ever."""
    while not stop.is_set():
        try:
            return w.data.get(timeout=0.2)
        except queue.Empty:
            continue
    raise LoadError("load abandoned: another part of the load failed")


def _copy_rows(cur: psycopg.Cursor[tuple[Any, ...]], chunk: sql.Identifier, footprint: Footprint, w: Window,
               stop: threading.Event, settings: dict[str, str] | None, freeze: sql.SQL) -> tuple[int, int, float]:
    """The window's encoded rows, as the loader queues them, in one binary COPY: rows and bytes sent,
    and when the COPY began (``time.perf_counter``)."""
    columnstore = settings is not None
    rows = nbytes = 0
    if columnstore:
        # Straight into the columnstore: the server compresses batches as rows arrive, in the
        # order the loader sends them (time, location_id), with no sort and no row-store detour.
        apply_settings(cur, settings or {})
    columns = sql.SQL(", ").join(map(sql.Identifier, encode.copy_columns(
        footprint.columns, (TILE_COLUMN,) if footprint.tiled else (), level=bool(footprint.levels))))
    t_copy = time.perf_counter()
    with encode.binary_copy(cur, sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY{})").format(
            chunk, columns, freeze)) as cp:
        while (item := next_piece(w, stop)) is not None:
            data, n = item
            cp.write(data)
            nbytes += len(data)
            rows += n
    return rows, nbytes, t_copy


def _index(cur: psycopg.Cursor[tuple[Any, ...]], chunk: sql.Identifier, name: str) -> None:
    """A row-store chunk's indexes, dropped before its COPY, made again, and its statistics."""
    for suffix, definition in CHUNK_INDEXES:
        cur.execute(sql.SQL("CREATE INDEX {} ON {} " + definition).format(  # definition: a constant above
            sql.Identifier(f"{name}_{suffix}"), chunk))
    # Statistics for the columns the reads filter on, before anyone reads the chunk: without
    # them the planner guesses 0.5% of a chunk per hour instead of 1/24 and scans a whole day
    # for an hour's slice (measured: 325 ms instead of 197 ms on BRIN). Autovacuum would get
    # there later; this costs ~0.05 us a row.
    cur.execute(sql.SQL("ANALYZE {} (time, location_id)").format(chunk))


def write_daily(cur: psycopg.Cursor[tuple[Any, ...]], table: str, hourly: sql.Identifier, footprint: Footprint,
                start: datetime, end: datetime, rollup: WindowRollup, *, whole: bool, empty: bool, columnstore: bool,
                stop: threading.Event) -> int:
    """The chunk's daily rollup rows, in its transaction: the rows of its days inside the footprint replaced
    by the whole (and lone) days the loader aggregated (one binary COPY) and the partial days SQL
    aggregates from the hourly rows just written to the chunk ``hourly``. ``whole``: the hourly chunk
    held nothing but what this load replaced, so the daily chunk made with it (same range) is emptied
    instead; ``empty``: it held nothing at all, so neither does its daily chunk (daily rows are only
    written with hourly ones).
    ``stop``: set when the load is abandoned (the pieces stop coming). Returns the rows written."""
    # Asked of the chunk itself: the table would have the planner lock every chunk, and two writers
    # asking it, each holding the chunk it had truncated, deadlocked.
    lost = set(rollup.lone) - set(lone_days(cur, hourly, footprint, rollup.lone, rollup.times) if rollup.lone else ())
    if lost:
        raise LoadError(f"another load wrote other hours of {', '.join(str(d) for d in sorted(lost))} in {table} "
                        "while this one ran, so the loader's daily rows for them would leave those hours out: "
                        "run this load again")
    daily = rollup_tables(table)["day"]
    found = chunks_between(cur, daily, start, end)
    aligned = len(found) == 1 and found[0][2] == start and found[0][3] == end
    target = sql.Identifier(found[0][0], found[0][1]) if aligned else table_ident(daily)
    days = [d.astype("datetime64[s]").item().replace(tzinfo=UTC) for d in rollup.days]
    bounds = footprint.rollup_params()
    # As for the hourly rows: the chunk's transaction may decompress whatever it replaces.
    lift_decompression_limit(cur)
    if aligned and empty:
        pass  # a new chunk's daily chunk, as empty as it
    elif aligned and whole:
        empty_chunk(cur, target, compressed=columnstore)
    elif days:
        cur.execute(sql.SQL("DELETE FROM {} WHERE bucket >= %(first)s AND bucket <= %(last)s AND bucket = ANY(%(days)s)"
                            " AND {}{}").format(target, box_filter(footprint.grid), footprint.level_filter()),
                    {**bounds, "first": days[0], "last": days[-1], "days": days})
    if rollup.whole:
        # The pieces as the loader encodes them: the last day's are still being made when the hourly
        # rows are in (load.rollup.encoded_pieces).
        columns = sql.SQL(", ").join(map(sql.Identifier, rollup.copy_columns()))
        with encode.binary_copy(cur, sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(target, columns)) as cp:
            for data in rollup.pieces(stop):
                cp.write(data)
            if stop.is_set():
                raise LoadError("load abandoned: another chunk failed")
    if rollup.partial_days:
        partial = [d.astype("datetime64[s]").item().replace(tzinfo=UTC) for d in rollup.partial_days]
        cur.execute(daily_from_hourly(table, rollup.data_columns, rollup.tiled, bool(footprint.levels)),
                    {**bounds, "first": partial[0], "last": partial[-1] + timedelta(days=1), "days": partial})
        return rollup.rows + max(cur.rowcount, 0)
    return rollup.rows


def lone_days(cur: psycopg.Cursor[tuple[Any, ...]], relation: sql.Composable, footprint: Footprint,
              days: list[np.datetime64], times: npt.NDArray[np.int64]) -> list[np.datetime64]:
    """Of ``days`` (UTC days the load brings some hours of, ``times`` in epoch seconds), those
    ``relation`` (the table, or the chunk holding the days) holds no other hour of inside the
    footprint: after the load their hours are the load's alone (``load.rollup.WindowRollup.adopt``).
    A day's gaps between the load's hours are asked about as ranges (``db.rollups.other_hours``)."""
    stamps = np.asarray(times, dtype=np.int64)
    lone = []
    for day in days:
        start = int(day.astype("datetime64[s]").astype(np.int64))
        inside = stamps[(stamps >= start) & (stamps < start + 86_400)]
        first = datetime.fromtimestamp(start, UTC)
        # Open ranges between the day's edges and its hours: the first from a microsecond before midnight.
        edges = [first - timedelta(microseconds=1), *(datetime.fromtimestamp(int(t), UTC) for t in inside),
                 first + timedelta(days=1)]
        gaps = {f"lo{i}": lo for i, lo in enumerate(edges[:-1])} | {f"hi{i}": hi for i, hi in enumerate(edges[1:])}
        found = cur.execute(other_hours(relation, len(edges) - 1, bool(footprint.levels)),
                            {**footprint.params(), **gaps, "first": first, "last": edges[-1]}).fetchone()
        if found is not None and not found[0]:
            lone.append(day)
    return lone
