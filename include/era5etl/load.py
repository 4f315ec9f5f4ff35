"""Load staged blocks into a hypertable: one transaction per chunk, replacing what it held.

Each chunk window (default one day, the hypertable's chunk interval) is written in a single
transaction that first deletes the rows the download is about to supply (same time steps, same
area box) and then streams the new rows with binary COPY. A killed loader therefore leaves every
chunk either as it was or fully replaced, and a rerun of the same month is idempotent.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np
from psycopg import sql

from era5etl import copy as pgcopy
from era5etl.db import connect, table_ident
from era5etl.stage import StagedDownload

log = logging.getLogger(__name__)

BLOCK_ROWS = 1_000_000


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


def chunk_windows(times: np.ndarray, interval: timedelta) -> Iterator[tuple[datetime, datetime]]:
    """Windows aligned to the hypertable's chunk interval (from the epoch) that hold any time step."""
    if len(times) == 0:
        return
    step = int(interval.total_seconds())
    secs = times.astype("datetime64[s]").astype(np.int64)
    for start in np.unique(secs // step * step):
        t0 = datetime.fromtimestamp(int(start), UTC)
        yield t0, t0 + interval


def load(
    url: str,
    table: str,
    staged: StagedDownload,
    *,
    chunk_interval: timedelta = timedelta(days=1),
    start: datetime | None = None,
    end: datetime | None = None,
    on_chunk: Callable[[ChunkResult], None] | None = None,
) -> LoadResult:
    """Replace, chunk by chunk, the table's rows at the download's time steps inside its box."""
    box = Box.of(staged)
    times = staged.valid_time
    if start is not None:
        times = times[times >= np.datetime64(start.replace(tzinfo=None), "s")]
    if end is not None:
        times = times[times < np.datetime64(end.replace(tzinfo=None), "s")]
    ident = table_ident(table)
    columns = sql.SQL(", ").join(map(sql.Identifier, pgcopy.COPY_COLUMNS))
    copy_stmt = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(ident, columns)
    delete_stmt = sql.SQL(
        "DELETE FROM {} WHERE time >= %(t0)s AND time <= %(t1)s AND time = ANY(%(times)s)"
        " AND latitude BETWEEN %(south)s AND %(north)s AND longitude BETWEEN %(west)s AND %(east)s"
    ).format(ident)
    # About a million rows per block: big enough to amortise reads and COPY calls, small enough that
    # memory follows the block (a global hour is one block), never the chunk or the month.
    hours = max(1, min(24, BLOCK_ROWS // max(staged.points, 1)))
    result = LoadResult()
    began = time.perf_counter()
    with connect(url) as conn:
        for w0, w1 in chunk_windows(times, chunk_interval):
            lo, hi = max(w0, start or w0), min(w1, end or w1)
            in_window = times[(times >= _np(lo)) & (times < _np(hi))]
            step_times = [datetime.fromtimestamp(int(t), UTC) for t in in_window.astype(np.int64)]
            t_chunk = time.perf_counter()
            nbytes = rows = 0
            with conn.transaction(), conn.cursor() as cur:
                # Two loaders of the same table and chunk (a double-clicked rerun) queue here
                # instead of interleaving deletes and copies.
                cur.execute(
                    "SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))", (table, w0.isoformat())
                )
                cur.execute(
                    delete_stmt,
                    {"t0": step_times[0], "t1": step_times[-1], "times": step_times, **asdict(box)},
                )
                deleted = cur.rowcount
                with cur.copy(copy_stmt) as cp:
                    cp.write(pgcopy.HEADER)
                    for block in staged.blocks(start=lo, end=hi, hours=hours):
                        data = pgcopy.encode_block(block)
                        cp.write(data)
                        nbytes += len(data)
                        rows += block.rows
                    cp.write(pgcopy.TRAILER)
            chunk = ChunkResult(w0.isoformat(), rows, max(deleted, 0), nbytes, time.perf_counter() - t_chunk)
            result.chunks.append(chunk)
            result.rows += rows
            result.deleted += chunk.deleted
            result.bytes += nbytes
            if on_chunk is not None:
                on_chunk(chunk)
    result.seconds = time.perf_counter() - began
    return result


def _np(t: datetime) -> np.datetime64:
    return np.datetime64(t.astimezone(UTC).replace(tzinfo=None), "s")
