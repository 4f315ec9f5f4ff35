"""Load staged blocks into a hypertable: one transaction per chunk, replacing what it held.

Why it is shaped this way (figures in docs/benchmarks.md): each chunk is written by one
transaction (``writer``), whatever its span (``chunks``), and two chunks load at once on separate
connections, fed by one reader/encoder thread. The chunks are created up front (``chunks``), and
the rows of a columnstore chunk are sent in its order (time, location_id).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import numpy as np
import psycopg
from psycopg import sql

from era5etl import settings as settings_model
from era5etl.core.datasets import SINGLE_LEVELS, Dataset
from era5etl.core.errors import first_line
from era5etl.core.tiles import tile_groups, tile_of
from era5etl.db import connect, extents
from era5etl.load import encode
from era5etl.load.chunks import chunk_of, chunk_plan
from era5etl.load.errors import LoadError
from era5etl.load.monthly import write_monthly
from era5etl.load.results import ChunkResult, LoadResult
from era5etl.load.rollup import MonthlyRollup, Points, WindowRollup
from era5etl.load.writer import Footprint, Window, copy_settings, lone_days, rollups_in_tiles, write_chunk
from era5etl.stage import Block, StagedDownload

log = logging.getLogger(__name__)

BLOCK_ROWS = 1_000_000
# A block's hours at most: a leap year. A few points over decades are read, encoded and rolled up a
# year at a time (a block of 24 hours of 4 points, 96 rows, cost more in per-call overhead than rows).
BLOCK_HOURS = 24 * 366


def reordered(block: Block, order: np.ndarray) -> Block:
    """The block's grid points in ``order`` (location_id ascending): a copy, one block at a time."""
    assert block.location_id is not None
    return Block(block.valid_time, block.location_id[order], block.latitude[order], block.longitude[order],
                 {c: v[:, order] for c, v in block.values.items()},
                 None if block.level is None else block.level[order])


def load(
    url: str,
    table: str,
    staged: StagedDownload,
    *,
    start: datetime | None = None,
    end: datetime | None = None,
    workers: int = 2,
    on_chunk: Callable[[ChunkResult], None] | None = None,
    rollups: bool | None = None,
    dataset: Dataset = SINGLE_LEVELS,
) -> LoadResult:
    """Replace, chunk by chunk, the table's rows at the download's time steps inside its footprint, and
    with them their daily and monthly rollups (``rollups``: default ERA5_ROLLUPS).

    ``dataset``: what the download is (single levels by default). On pressure levels each row also
    has its level, a reload replaces the download's levels only (and their rollup rows: a row per
    level and point)."""
    if rollups is None:
        rollups = settings_model.load().rollups
    on_levels = staged.level is not None
    if on_levels != dataset.has_levels:
        raise LoadError(f"the download {'is' if on_levels else 'is not'} on pressure levels but the dataset "
                        f"{dataset.name} {'has no levels' if on_levels else 'has'}")
    if dataset.monthly:
        rollups = False  # monthly means are months already
    footprint = Footprint.of(staged, tuple(v.column for v in dataset.base_variables), dataset.grid)
    times = staged.valid_time
    if start is not None:
        times = times[times >= _np(start)]
    if end is not None:
        times = times[times < _np(end)]
    windows = [Window(w0, w1, ts) for w0, w1, ts in chunk_plan(url, table, times, staged.points)]
    result = LoadResult()
    if not windows:
        return result
    began = time.perf_counter()
    if staged.location_id is not None:  # before any row: the table's box holds every point it has rows of
        with connect(url, autocommit=True) as conn:
            # On levels each level holds the same points: the first level's are the box's.
            ids = staged.location_id[:staged.points // len(staged.levels)] if staged.levels else staged.location_id
            extents.widen(conn, table, extents.extent_of(ids, dataset.grid), dataset.grid)
    plan = _plan(url, table, staged, footprint, windows, rollups=rollups)
    try:
        return _written(_Run(url, table, plan, times, on_chunk), staged, workers, rollups, began)
    finally:
        plan.monthly.spill.close()


def _written(run: _Run, staged: StagedDownload, workers: int, rollups: bool, began: float) -> LoadResult:
    """The load's windows written, then its months; what it wrote."""
    windows = run.plan.windows
    result = LoadResult()
    run.write(staged, workers)
    for w in windows:
        assert w.result is not None
        result.chunks.append(w.result)
        result.rows += w.result.rows
        result.deleted += w.result.deleted
        result.bytes += w.result.bytes
        result.daily_rows += w.result.rollup_rows
    if rollups:
        result.monthly_rows, monthly_seconds = run.monthly_out if run.monthly_out is not None else run.months()
        result.rollup_seconds = {
            "aggregate": round(run.aggregating, 3),  # folding the blocks and encoding the daily rows
            "daily_write": round(sum(w.result.rollup_seconds for w in windows if w.result), 3),
            "monthly": round(monthly_seconds, 3)}
    result.seconds = time.perf_counter() - began
    return result


@dataclass
class _Plan:
    """How a load's rows are written: the footprint, the chunk windows, the COPY session settings, the order
    the grid points go in (``order``, or by ``tiles``), a block's hours, and the rollups made on the way."""

    footprint: Footprint
    windows: list[Window]
    settings: dict[str, str] | None
    order: np.ndarray | None
    tiles: Tiling | None
    hours: int
    points: Points | None
    monthly: MonthlyRollup
    levels: int = 0  # on pressure levels, a block's levels at most (0: all)
    per_level: int = 0  # on levels, ``order`` is one level's points' (this many), the same for each level
    run_at: dict[int, int] = field(default_factory=dict)  # blocks by runs of levels: where each run's columns begin


def _plan(url: str, table: str, staged: StagedDownload, footprint: Footprint, windows: list[Window], *,
          rollups: bool) -> _Plan:
    settings, tiled = copy_settings(url, table, levels=staged.level is not None)
    # Rows reach a columnstore chunk in its order (time, location_id; time, level, location_id on
    # levels; in tiles, tile, location_id, time): the grid points sorted once.
    sorted_copy = settings is not None and settings["timescaledb.enable_direct_compress_copy_client_sorted"] == "on"
    order = None
    per_level = 0  # on levels, not tiled: the points of one level, whose ``order`` serves every level
    if (sorted_copy or tiled) and staged.location_id is not None:
        if staged.level is None:
            order = np.argsort(staged.location_id, kind="stable")
            if bool((np.diff(order) == 1).all()):
                order = None  # in id order already (ERA5-Land's stager): blocks go as they are, not copied
        elif tiled:  # levels within a point in tiles
            order = np.lexsort((staged.level, staged.location_id))
        else:  # points within a level, hour by hour: each level holds the same points in the same order
            per_level = staged.points // len(staged.levels)
            order = np.argsort(staged.location_id[:per_level], kind="stable")
    footprint = replace(footprint, tiled=tiled, rollups_tiled=rollups and rollups_in_tiles(url, table))
    # In tiles the blocks keep the download's order: each piece takes its tiles' points from it by
    # ``order`` (a copy the size of the piece; a global day's block is 25M rows, not copied whole).
    tiles: Tiling | None = None
    if tiled:
        picks = np.arange(staged.points) if order is None else order
        ids = None if staged.location_id is None else staged.location_id[picks]
        # a grid off the lattice has no ids, so no tiles either
        tiles = Tiling(picks, np.full(staged.points, -1, np.int32) if ids is None else tile_of(ids))
        order = None
    # The rollups, aggregated from the blocks as they pass (load.rollup) when the grid has location
    # ids (ERA5_ROLLUPS); a grid off the lattice has none, and SQL recomputes its footprint's days.
    # On levels each (level, point) is a rollup row's key, in the blocks' order (level-major); a
    # download whose hour is cut into runs of levels (block_levels) adds each run at its columns.
    monthly = MonthlyRollup()
    points: Points | None = None
    levels = 0 if tiled else block_levels(staged.points, len(staged.levels))
    if rollups and staged.location_id is not None:
        ids, lat, level = staged.location_id, staged.latitude, staged.level
        if order is not None:
            whole = order if not per_level else levels_order(order, staged.points // per_level)
            ids, lat, level = ids[whole], lat[whole], None if level is None else level[whole]
        points = Points(ids, lat, None if level is None else level.astype(np.int16))
    if rollups:
        for w in windows:
            w.rollup = WindowRollup(w.times, points, footprint.columns, monthly, footprint.rollups_tiled,
                                    staged.level is not None)
        _adopt_lone_days(url, table, footprint, windows, points)
    run_at: dict[int, int] = {}  # a run of levels' first level -> its first column among the points
    if levels and points is not None and points.level is not None:
        n = staged.points // len(staged.levels)
        run_at = {int(points.level[i]): i for i in range(0, staged.points, n)}
    return _Plan(footprint, windows, settings, order, tiles, block_hours(staged.points, tiled), points, monthly,
                 levels, per_level, run_at)


def _adopt_lone_days(url: str, table: str, footprint: Footprint, windows: list[Window], points: Points | None) -> None:
    """The partial days the table holds no other hour of, aggregated by the loader as whole days are
    (``load.rollup.WindowRollup.adopt``); without grid points every day is SQL's. Each window's days
    are asked of its chunk (made by ``chunk_plan``): asked of the table, each question planned over
    every chunk, 40-100 ms a day over 85 yearly chunks, where the chunk answers 12 days in 6-15 ms."""
    partial = [w for w in windows if w.rollup is not None and w.rollup.partial_days]
    if points is None or not partial:
        return
    with connect(url) as conn, conn.cursor() as cur:
        for w in partial:
            assert w.rollup is not None
            schema, name, _, _ = chunk_of(cur, table, w.start)
            w.rollup.adopt(lone_days(cur, sql.Identifier(schema, name), footprint, w.rollup.partial_days, w.times))


class _Run:
    """One load's threads: chunk writers fed windows from a queue, the blocks read and encoded on the
    caller's thread, and the monthly rollup written early where it can be; the first failure stops all.

    The monthly rows need no chunk of this load committed unless a day of it is partial (its daily
    row is SQL's, computed in its chunk's transaction, and the month reads it back): then they are
    written while the last chunks are still being copied, on a connection and a thread of their own,
    from the moment the load's last day is complete (while it is still being encoded for its chunk's
    daily rows), instead of after them. A chunk that fails after that leaves the months' monthly
    rows ahead of their hourly rows, as a loader killed between the two would leave them behind: the
    load fails, the ledger says so, and validation compares the monthly rows with the daily ones
    (read.rollup_check).
    """

    def __init__(self, url: str, table: str, plan: _Plan, times: np.ndarray,
                 on_chunk: Callable[[ChunkResult], None] | None) -> None:
        self.url, self.table, self.plan, self.on_chunk = url, table, plan, on_chunk
        self.touched = list(np.unique(times.astype("datetime64[M]")))
        # Nor a lone day's (load.rollup.WindowRollup.adopt): its chunk may find it lone no more and
        # fail, and the months are then left as they were.
        self.early = plan.windows[0].rollup is not None and not any(
            w.rollup is not None and (w.rollup.partial_days or w.rollup.lone) for w in plan.windows)
        self.todo: queue.Queue[Window | None] = queue.Queue()
        self.failures: list[BaseException] = []
        self.stop = threading.Event()
        self.monthly_out: tuple[int, float] | None = None
        self.monthly_thread: threading.Thread | None = None
        self.aggregating = 0.0

    def months(self) -> tuple[int, float]:
        plan = self.plan
        try:
            return write_monthly(self.url, self.table, plan.footprint, self.touched, plan.monthly, plan.points,
                                 plan.footprint.columns, plan.settings)
        except psycopg.Error as exc:
            raise LoadError(f"writing the monthly rollup of {self.table} failed: {first_line(exc)}") from exc

    def _fail(self, exc: BaseException) -> None:
        self.failures.append(exc)
        self.stop.set()

    def _months_early(self) -> None:
        try:
            self.monthly_out = self.months()
        except BaseException as exc:  # surfaced by write, like a chunk's: the load fails
            self._fail(exc)

    def _worker(self) -> None:
        try:
            with connect(self.url) as conn:
                while (w := self.todo.get()) is not None:
                    w.result = write_chunk(conn, self.table, self.plan.footprint, w, self.stop, self.plan.settings)
                    if self.on_chunk is not None:
                        self.on_chunk(w.result)
        except BaseException as exc:  # surfaced to the caller by write, after the other threads stop
            self._fail(exc)

    def write(self, staged: StagedDownload, workers: int) -> None:
        """Every window written by ``workers`` threads; the first failure raised once all have stopped."""
        windows = self.plan.windows
        threads = [threading.Thread(target=self._worker, name=f"era5-load-{i}", daemon=True)
                   for i in range(max(1, min(workers, len(windows))))]
        for t in threads:
            t.start()
        try:
            for w in windows:
                if self.stop.is_set():
                    break
                self.todo.put(w)
                self._feed(staged, w, last=w is windows[-1])
        except BaseException as exc:
            self._fail(exc)
        finally:
            for _ in threads:
                self.todo.put(None)
            for t in threads:
                t.join()
            if self.monthly_thread is not None:
                self.monthly_thread.join()
        if self.failures:
            first = self.failures[0]
            if isinstance(first, psycopg.Error):
                raise LoadError(f"loading {self.table} failed: {first_line(first)}") from first
            raise first

    def _feed(self, staged: StagedDownload, w: Window, *, last: bool) -> None:
        """The window's blocks read, rolled up and encoded into its writer's queue."""
        plan, stop = self.plan, self.stop
        # Only the time steps this load owns: a month's bounds can cut a chunk window.
        w0, w1 = (datetime.fromtimestamp(int(t), UTC) for t in (w.times[0], w.times[-1] + 1))
        blocks = staged.blocks(start=w0, end=w1, hours=plan.hours, levels=plan.levels)
        # Each block let go before the next is read: ERA5-Land's blocks are views of a window of every
        # variable (439 MB of a global day), which a block kept alive while the stager read the next.
        while (block := next(blocks, None)) is not None:
            if plan.order is not None:
                block = reordered(block, plan.order if not plan.per_level
                                  else levels_order(plan.order, len(block.latitude) // plan.per_level))
            if w.rollup is not None:
                a0 = time.perf_counter()
                cols = None
                if plan.run_at:  # one hour of a run of levels: its columns of the rollup's points
                    assert block.level is not None
                    first = plan.run_at[int(block.level[0])]
                    cols = slice(first, first + len(block.latitude))
                w.rollup.add(block.valid_time, block.values, cols)
                self.aggregating += time.perf_counter() - a0
            if not all(_put(w.data, (encode.encode_block(piece, plan.footprint.columns, piece_tiles), piece.rows), stop)
                       for piece, piece_tiles in block_pieces(block, encode.PIECE_ROWS, plan.tiles)):
                break
            block = None
        block = None  # the last one too, before the day is settled and encoded
        # The hourly rows are all queued: the writer goes on to the daily rows while the last day
        # is encoded, piece by piece (load.rollup.WindowRollup.pieces).
        _put(w.data, None, stop)
        if w.rollup is not None:
            a0 = time.perf_counter()
            w.rollup.settle()  # its last day complete: the monthly rollup has every day of it
            if self.early and last and not stop.is_set():
                self.monthly_thread = threading.Thread(target=self._months_early, name="era5-load-monthly",
                                                       daemon=True)
                self.monthly_thread.start()
            w.rollup.close(stop)  # its last day out, encoded, a few pieces ahead of its writer
            self.aggregating += time.perf_counter() - a0


def block_hours(points: int, tiled: bool) -> int:
    """The hours a block holds: about a million rows, enough to amortise reads and COPY calls while
    memory follows the block (a global hour is one block), never the chunk or the month. In tiles a
    block is also a tile's run of hours in the chunk (the rows go tile by tile within each block), so
    it is whole UTC days, at least one: a global day is a block of 25M rows, and a tile's batch holds
    its 32 points over the day instead of over an hour."""
    hours = max(1, min(BLOCK_HOURS, BLOCK_ROWS // max(points, 1)))
    if not tiled:
        return hours
    return max(24, hours // 24 * 24)


def block_levels(points: int, levels: int) -> int:
    """The levels a block of a download on pressure levels holds at most (0: all): an hour of all 37
    levels of the globe is 38M rows, so a block is a run of levels of about BLOCK_ROWS rows (one level
    of a global hour), and memory follows it; a download whose hour fits stays whole hours."""
    if not levels or points <= BLOCK_ROWS:
        return 0
    return max(1, BLOCK_ROWS // max(points // levels, 1))


def levels_order(order: np.ndarray, levels: int) -> np.ndarray:
    """One level's point order made the order of ``levels`` consecutive levels (level-major)."""
    n = len(order)
    return (order[None, :] + n * np.arange(levels)[:, None]).ravel()


@dataclass(frozen=True)
class Tiling:
    """A tiled load's grid points in id order: where each is in the download (``picks``) and its tile."""

    picks: np.ndarray
    tiles: np.ndarray


def block_pieces(block: Block, rows: int, tiles: Tiling | None = None) -> Iterator[tuple[Block, np.ndarray | None]]:
    """The block cut into pieces of about ``rows`` rows (views, no copies) that keep its rows in
    (time, point) order (``encode.piece_slices``); with ``tiles`` (the table is tiled), cut by whole
    tiles instead, each piece all the block's hours of its points (taken in id order: a copy), with
    their tiles."""
    if tiles is not None:
        for p in tile_groups(tiles.tiles, len(block.valid_time), rows):
            yield _piece(block, slice(None), tiles.picks[p]), tiles.tiles[p]
        return
    for t, p in encode.piece_slices(len(block.valid_time), len(block.latitude), rows):
        yield _piece(block, t, p), None


def _piece(block: Block, t: slice, p: slice | np.ndarray) -> Block:
    """The block's steps ``t`` at its points ``p`` (a slice: views; an index array: a copy)."""
    return Block(block.valid_time[t], None if block.location_id is None else block.location_id[p],
                 block.latitude[p], block.longitude[p], {c: v[t, p] for c, v in block.values.items()},
                 None if block.level is None else block.level[p])


def _put(q: queue.Queue[tuple[bytes, int] | None], item: tuple[bytes, int] | None, stop: threading.Event) -> bool:
    """Hand a block to a chunk's writer, unless the load is being abandoned."""
    while not stop.is_set():
        try:
            q.put(item, timeout=0.2)
            return True
        except queue.Full:
            continue
    return False


def _np(t: datetime) -> np.datetime64:
    return np.datetime64(t.astimezone(UTC).replace(tzinfo=None), "s")
