"""A validated month's last step in the columnstore: every chunk compressed, the month one chunk.

With TimescaleDB's Community licence the loader writes straight into the columnstore (``load``:
direct-to-columnstore COPY), so a month arrives compressed: in a chunk made for its whole year or
month when the area is small enough (``load.chunk_plan``), else a daily chunk per transaction. This
step then (1) compresses any chunk of the month still in the row store (loaded before the table
had the columnstore, or by another writer), and (2) merges the month's daily chunks into one chunk
(``merge_chunks``), so that a read over decades plans a chunk a month at most instead of ~365 a
year (planning grew with the chunk count: 357 ms of a 480 ms ten-year read on 3,652 daily chunks).
A later reload of the month writes that one chunk in one transaction (``load.chunk_plan`` follows
the table's real chunks).

On the Apache-licensed build there is no columnstore: the month is reported ``unavailable`` with the
reason and stays in the row store with its per-chunk indexes; the pipeline carries on.

Why here and not a columnstore policy: a policy job acts on its own clock, which could be while a
rerun of the same month is rewriting it. Here a month is finished only once proven, under the
loader's per-chunk locks.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import psycopg
from psycopg import sql

from era5etl import settings
from era5etl.db import columnstore_available, columnstore_enabled, connect, licence, table_ident
from era5etl.load.chunks import chunks_between
from era5etl.load.locks import lock_chunk, lock_month
from era5etl.settings import CompressionMode as Mode

log = logging.getLogger(__name__)

# Bytes of one row's values as the binary COPY carries them (time 8, location_id 4, eight float4):
# what a compression ratio is measured against.
VALUE_BYTES_PER_ROW = 8 + 4 + 8 * 4


def mode_from_env(env: dict[str, str] | None = None) -> Mode:
    """ERA5_COMPRESSION: ``auto`` (default: finish validated months in the columnstore) or ``off``."""
    return settings.load(env).compression


@dataclass
class Compression:
    """What finishing one month did: chunks compressed and merged, and what the month now occupies."""

    state: Literal["compressed", "unavailable", "off"]
    reason: str = ""
    chunks: list[str] = field(default_factory=list)
    compressed_now: int = 0  # chunks that were still in the row store
    merged: int = 0  # chunks merged into the month's one chunk (0: nothing to merge)
    rows: int = 0
    bytes: int = 0  # the month's chunks, everything included (heap, toast, indexes)

    @property
    def bytes_per_row(self) -> float | None:
        return self.bytes / self.rows if self.rows else None

    @property
    def ratio(self) -> float | None:
        """Raw values (VALUE_BYTES_PER_ROW a row) to stored bytes."""
        return self.rows * VALUE_BYTES_PER_ROW / self.bytes if self.bytes else None

    def as_dict(self) -> dict[str, Any]:
        return {"state": self.state, "reason": self.reason, "chunks": len(self.chunks),
                "compressed_now": self.compressed_now, "merged": self.merged, "rows": self.rows,
                "bytes": self.bytes,
                "bytes_per_row": round(self.bytes_per_row, 2) if self.bytes_per_row else None,
                "ratio": round(self.ratio, 2) if self.ratio else None}


def unavailable_reason(conn: psycopg.Connection[Any], table: str) -> str | None:
    """Why this month cannot be finished in the columnstore, or None when it can."""
    if not columnstore_available(conn):
        return (f"TimescaleDB's licence on this server is {licence(conn)!r}; the columnstore needs the Community "
                "licence (timescaledb.license = 'timescale', as the local server runs by default)")
    if not columnstore_enabled(conn, table):
        return f"{table} was created without the columnstore (sql/020_columnstore.sql)"
    return None


def compress_month(url: str, table: str, start: datetime, end: datetime, mode: Mode = "auto") -> Compression:
    """Finish [start, end) in the columnstore, or say why not; never fails a month for lack of licence."""
    return finish_months(url, table, [(start, end)], mode)[0]


def finish_months(url: str, table: str, months: Sequence[tuple[datetime, datetime]], mode: Mode = "auto",
                  *, measure: bool = True) -> list[Compression]:
    """compress_month for each (start, end), in one connection with one listing of the chunks, so
    a download over decades (~1,000 months) does not list the hypertable's chunks ~1,000 times.
    ``measure=False`` leaves each month's rows and bytes at 0: a caller that sizes the whole span
    once (``span_bytes``) saves a count over every month's compressed rows."""
    if mode == "off":
        return [Compression("off", reason="ERA5_COMPRESSION=off") for _ in months]
    if not months:
        return []
    with connect(url, autocommit=True) as conn:
        reason = unavailable_reason(conn, table)
        if reason is not None:
            log.warning("columnstore unavailable, the month stays in the row store: %s", reason)
            return [Compression("unavailable", reason=reason) for _ in months]
        every = chunks_between(conn, table, min(m[0] for m in months), max(m[1] for m in months))
        results = []
        for start, end in months:
            chunks = [c for c in every if c[2] < end and c[3] > start]
            results.append(_finish(conn, table, start, end, chunks, measure))
        return results


def _finish(conn: psycopg.Connection[Any], table: str, start: datetime, end: datetime,
            chunks: list[tuple[str, str, datetime, datetime, bool]], measure: bool) -> Compression:
    result = Compression("compressed")
    for schema, name, chunk_start, _, compressed in chunks:
        if not compressed:
            with conn.transaction(), conn.cursor() as cur:
                lock_month(cur, table, chunk_start, shared=True)
                lock_chunk(cur, table, chunk_start)  # a rerun rewriting this chunk finishes first
                cur.execute("SELECT compress_chunk(%s::regclass, if_not_compressed => true)",
                            (sql.Identifier(schema, name).as_string(conn),))
            result.compressed_now += 1
    # Only chunks wholly inside the month merge: a chunk reaching into a neighbouring month (another
    # chunk interval) is left as it is. merge_chunks keeps the first chunk, now spanning them all.
    # The month's lock, taken alone, waits for every writer of its chunks and holds new ones off;
    # the chunks are listed again under it, as a load of the same month may have merged them first.
    final = chunks
    if len([c for c in chunks if c[2] >= start and c[3] <= end]) > 1:
        with conn.transaction(), conn.cursor() as cur:
            lock_month(cur, table, start, shared=False)
            inside = [c for c in chunks_between(conn, table, start, end) if c[2] >= start and c[3] <= end]
            if len(inside) > 1:
                cur.execute("CALL merge_chunks(%s::regclass[])",
                            ([sql.Identifier(s, n).as_string(conn) for s, n, *_ in inside],))
                result.merged = len(inside)
        final = chunks_between(conn, table, start, end)
    result.chunks = [f"{schema}.{name}" for schema, name, *_ in final]
    if not measure:
        return result
    rows = conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE time >= %s AND time < %s").format(
        table_ident(table)), (start, end)).fetchone()
    # A month inside a larger chunk (a year's) reports that chunk's bytes: what it occupies with it.
    result.bytes = chunk_bytes(conn, [(schema, name) for schema, name, *_ in final])
    result.rows = int(rows[0]) if rows else 0
    return result


def chunk_bytes(conn: psycopg.Connection[Any], chunks: Sequence[tuple[str, str]]) -> int:
    """Bytes of the chunks (schema, name): each relation's and, once compressed, its compressed
    relation's with TOAST. (TimescaleDB's size functions walk every chunk of the hypertable: over
    decades, once per month, that is quadratic.)"""
    row = conn.execute(
        "SELECT coalesce(sum(pg_total_relation_size(c.oid) + coalesce(pg_total_relation_size(s.compress_relid),"
        " 0)), 0) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " LEFT JOIN _timescaledb_catalog.compression_settings s ON s.relid = c.oid"
        " WHERE (n.nspname, c.relname) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
        ([schema for schema, _ in chunks], [name for _, name in chunks])).fetchone()
    return int(row[0]) if row else 0


def span_bytes(url: str, table: str, start: datetime, end: datetime) -> int:
    """Bytes of the table's chunks holding any time in [start, end), each chunk once."""
    with connect(url) as conn:
        return chunk_bytes(conn, [(s, n) for s, n, *_ in chunks_between(conn, table, start, end)])
