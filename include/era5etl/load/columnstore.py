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
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import psycopg
from psycopg import sql

from era5etl import settings
from era5etl.db import columnstore_available, columnstore_enabled, connect, licence, rollup_tables, table_ident
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
    return finish(url, table, start, end, mode)


def finish(url: str, table: str, start: datetime, end: datetime, mode: Mode = "auto", *,
           measure: bool = True) -> Compression:
    """Finish the span [start, end) of ``table`` and of its daily rollup in the columnstore: every
    chunk still in the row store compressed, and each calendar month's chunks (a global month's
    daily chunks) merged into one. The work follows the chunks the span holds, one listing of each
    table's chunks whatever the span's length: a download over decades finishes as fast per row as
    a month. ``measure=False`` leaves rows and bytes at 0."""
    if mode == "off":
        return Compression("off", reason="ERA5_COMPRESSION=off")
    with connect(url, autocommit=True) as conn:
        reason = unavailable_reason(conn, table)
        if reason is not None:
            log.warning("columnstore unavailable, the month stays in the row store: %s", reason)
            return Compression("unavailable", reason=reason)
        daily = rollup_tables(table)["day"]
        found = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table_ident(daily).as_string(conn),)).fetchone()
        has_rollup = bool(found and found[0])
        relations = [table, daily] if has_rollup else [table]
        result = Compression("compressed")
        listed = {r: chunks_between(conn, r, start, end) for r in relations}
        for relation, chunks in listed.items():
            for schema, name, chunk_start, _, compressed in chunks:
                if compressed:
                    continue
                with conn.transaction(), conn.cursor() as cur:
                    lock_month(cur, table, chunk_start, shared=True)
                    lock_chunk(cur, table, chunk_start)  # a rerun rewriting this chunk finishes first
                    cur.execute("CALL convert_to_columnstore(%s::regclass, if_not_columnstore => true)",
                                (sql.Identifier(schema, name).as_string(conn),))
                if relation == table:
                    result.compressed_now += 1
        result.merged = _merge_months(conn, table, relations, listed[table])
        final = chunks_between(conn, table, start, end) if result.merged else listed[table]
        result.chunks = [f"{schema}.{name}" for schema, name, *_ in final]
        if not measure:
            return result
        rows = conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE time >= %s AND time < %s").format(
            table_ident(table)), (start, end)).fetchone()
        result.rows = int(rows[0]) if rows else 0
        # A month inside a larger chunk (a year's) reports that chunk's bytes: what it occupies with it.
        result.bytes = chunk_bytes(conn, table, [(schema, name) for schema, name, *_ in final])
    return result


def _merge_months(conn: psycopg.Connection[Any], table: str, relations: list[str],
                  chunks: list[tuple[str, str, datetime, datetime, bool]]) -> int:
    """Merge the chunks of each calendar month that has several wholly inside it, the table's and
    its daily rollup's alike, under the month's lock taken alone (it waits for every writer of the
    month's chunks and holds new ones off); returns the table's chunks merged."""
    by_month: dict[tuple[int, int], list[datetime]] = {}
    for _, _, c0, c1, _ in chunks:
        if (c0.year, c0.month) == ((c1 - timedelta(microseconds=1)).year, (c1 - timedelta(microseconds=1)).month):
            by_month.setdefault((c0.year, c0.month), []).append(c0)
    merged = 0
    for (year, month), starts in by_month.items():
        if len(starts) < 2:
            continue
        m0 = datetime(year, month, 1, tzinfo=UTC)
        m1 = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
        with conn.transaction(), conn.cursor() as cur:
            lock_month(cur, table, m0, shared=False)
            # Listed again under the lock: a load of the same month may have merged them first.
            for relation in relations:
                inside = [c for c in chunks_between(conn, relation, m0, m1) if c[2] >= m0 and c[3] <= m1]
                if len(inside) > 1:
                    cur.execute("CALL merge_chunks(%s::regclass[])",
                                ([sql.Identifier(s, n).as_string(conn) for s, n, *_ in inside],))
                    if relation == table:
                        merged += len(inside)
    return merged


def chunk_bytes(conn: psycopg.Connection[Any], table: str, chunks: Sequence[tuple[str, str]]) -> int:
    """Bytes of the chunks (schema, name) of ``table``, compressed parts included
    (``chunks_detailed_size``: one call per load, whatever the number of months)."""
    if not chunks:
        return 0
    row = conn.execute(
        "SELECT coalesce(sum(total_bytes), 0) FROM chunks_detailed_size(%s::regclass)"
        " WHERE (chunk_schema, chunk_name) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
        (table_ident(table).as_string(conn), [schema for schema, _ in chunks], [name for _, name in chunks])).fetchone()
    return int(row[0]) if row else 0


def span_bytes(url: str, table: str, start: datetime, end: datetime) -> int:
    """Bytes of the table's chunks holding any time in [start, end), each chunk once."""
    with connect(url) as conn:
        return chunk_bytes(conn, table, [(s, n) for s, n, *_ in chunks_between(conn, table, start, end)])
