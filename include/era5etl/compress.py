"""Compression of loaded months (TimescaleDB's columnstore), when the server's licence allows it.

Compression is a feature of TimescaleDB's Community (TSL) edition. The Apache-licensed build, the
one Debian packages and this project's local server runs, has hypertables but no compression: there
a month is reported ``unavailable`` with the reason, and the pipeline carries on with the month
uncompressed. With the licence (the compose stack's ``timescale/timescaledb`` image) each month is
compressed once it has been validated, segmented by ``location_id`` and ordered by time, the layout
that keeps one place's history a short read; the ratio is recorded in the metrics.

Why here and not ``add_compression_policy``: a policy job compresses chunks on its own clock, which
could be while a rerun of the same month is rewriting them. Compressing in the pipeline, after the
month's validation and under the loader's per-chunk lock, means a chunk is only ever compressed
whole and proven, and a reload decompresses it first (``load._write_chunk``).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import psycopg
from psycopg import sql

from era5etl.db import SQL_DIR, connect, split_table, table_ident
from era5etl.load import lock_chunk
from era5etl.months import InputError

log = logging.getLogger(__name__)

Mode = Literal["auto", "off"]
MODES: tuple[Mode, ...] = ("auto", "off")
SETTINGS_SQL: Path = SQL_DIR / "020_compression.sql"


def mode_from_env(env: dict[str, str] | None = None) -> Mode:
    """ERA5_COMPRESSION: ``auto`` (default: compress validated months when the licence allows) or ``off``."""
    raw = ((os.environ if env is None else env).get("ERA5_COMPRESSION") or "auto").strip().lower()
    for mode in MODES:
        if raw == mode:
            return mode
    raise InputError(f"ERA5_COMPRESSION={raw!r} must be one of: {', '.join(MODES)}")


@dataclass
class Compression:
    """What compressing one month did: chunks compressed and the bytes before and after."""

    state: Literal["compressed", "unavailable", "off"]
    reason: str = ""
    chunks: list[str] = field(default_factory=list)
    before_bytes: int = 0
    after_bytes: int = 0

    @property
    def ratio(self) -> float | None:
        return self.before_bytes / self.after_bytes if self.after_bytes else None

    def as_dict(self) -> dict[str, Any]:
        return {"state": self.state, "reason": self.reason, "chunks": len(self.chunks),
                "before_bytes": self.before_bytes, "after_bytes": self.after_bytes,
                "ratio": round(self.ratio, 3) if self.ratio else None}


def licence(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute("SELECT current_setting('timescaledb.license', true)").fetchone()
    return str(row[0]) if row and row[0] else "unknown"


def unavailable_reason(conn: psycopg.Connection[Any]) -> str | None:
    """Why this server cannot compress, or None when it can."""
    edition = licence(conn)
    if edition != "timescale":
        return (f"TimescaleDB's licence on this server is {edition!r}; compression needs the Community "
                "licence (timescaledb.license = 'timescale', e.g. the timescale/timescaledb image)")
    return None


def overlapping_chunks(conn: psycopg.Connection[Any], table: str, start: datetime, end: datetime
                       ) -> list[tuple[str, str, datetime, bool]]:
    """(schema, name, range_start, is_compressed) of the table's chunks holding any time in [start, end)."""
    schema, name = split_table(table)
    rows = conn.execute(
        "SELECT chunk_schema, chunk_name, range_start, is_compressed FROM timescaledb_information.chunks"
        " WHERE hypertable_schema = COALESCE(%s, current_schema()) AND hypertable_name = %s"
        " AND range_start < %s AND range_end > %s ORDER BY range_start",
        (schema, name, end, start),
    ).fetchall()
    return [(str(s), str(n), r, bool(c)) for s, n, r, c in rows]


def enable(conn: psycopg.Connection[Any], table: str) -> None:
    """Turn on compression settings for the hypertable, once (sql/020_compression.sql)."""
    schema, name = split_table(table)
    row = conn.execute(
        "SELECT compression_enabled FROM timescaledb_information.hypertables"
        " WHERE hypertable_schema = COALESCE(%s, current_schema()) AND hypertable_name = %s",
        (schema, name),
    ).fetchone()
    if row is None:
        raise InputError(f"{table} is not a hypertable")
    if not row[0]:
        conn.execute(sql.SQL(SETTINGS_SQL.read_text()).format(table=table_ident(table)))


def compress_month(url: str, table: str, start: datetime, end: datetime, mode: Mode = "auto") -> Compression:
    """Compress every chunk holding [start, end), or say why not; never fails a month for lack of licence."""
    if mode == "off":
        return Compression("off", reason="ERA5_COMPRESSION=off")
    with connect(url, autocommit=True) as conn:
        reason = unavailable_reason(conn)
        if reason is not None:
            log.warning("compression unavailable, months stay uncompressed: %s", reason)
            return Compression("unavailable", reason=reason)
        enable(conn, table)
        result = Compression("compressed")
        for schema, name, chunk_start, compressed in overlapping_chunks(conn, table, start, end):
            if not compressed:
                with conn.transaction(), conn.cursor() as cur:
                    # The loader's per-chunk lock: a rerun rewriting this chunk finishes first.
                    lock_chunk(cur, table, chunk_start)
                    cur.execute("SELECT compress_chunk(%s::regclass, if_not_compressed => true)",
                                (sql.Identifier(schema, name).as_string(conn),))
            result.chunks.append(f"{schema}.{name}")
        stats = conn.execute(
            sql.SQL("SELECT chunk_schema || '.' || chunk_name, before_compression_total_bytes,"
                    " after_compression_total_bytes FROM chunk_compression_stats({}::regclass)").format(
                sql.Literal(table_ident(table).as_string(conn))),
        ).fetchall()
        mine = set(result.chunks)
        for full, before, after in stats:
            if full in mine and before is not None and after is not None:
                result.before_bytes += int(before)
                result.after_bytes += int(after)
        return result

