"""The bench's tables in the database: created fresh (with the product's indexes), counted, inspected and
dropped; and the server's settings the figures depend on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql

from era5bench.common import log
from era5etl.db import connect, drop_table as db_drop_table, ensure_schema, table_ident


def column_list(columns: Sequence[str]) -> sql.Composable:
    return sql.SQL(", ").join(map(sql.Identifier, columns))


def product_indexes() -> list[tuple[str, str]]:
    """The indexes the product keeps on every chunk, as (name suffix, definition after ``ON table``)."""
    from era5etl import load

    return list(getattr(load, "CHUNK_INDEXES", ()))


def create_table(url: str, name: str, kind: str, template: str, *, bare: bool = False) -> None:
    """A fresh table: the product's hypertable (ensure_schema), or a plain one with the same columns and
    indexes (``LIKE`` the product's hypertable: its indexes, no TimescaleDB trigger). Unless ``bare``, the
    table also gets the indexes the loader builds per chunk, so every method ends with the same indexes."""
    drop_table(url, name)
    if kind == "hypertable":
        ensure_schema(url, name)
    else:
        with connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE TABLE {} (LIKE {} INCLUDING ALL)").format(table_ident(name),
                                                                                   table_ident(template)))
    if bare:
        return
    base = name.split(".")[-1]
    with connect(url, autocommit=True) as conn:
        for suffix, definition in product_indexes():
            conn.execute(sql.SQL("CREATE INDEX {} ON {} " + definition).format(  # definition: load's constant
                sql.Identifier(f"{base}_{suffix}"), table_ident(name)))


def drop_table(url: str, name: str) -> None:
    with connect(url, autocommit=True) as conn:
        db_drop_table(conn, name)


def cleanup(url: str, names: Sequence[str]) -> None:
    """Drop the bench's tables on the way out without hiding why the run stopped (often the server went away)."""
    for name in names:
        try:
            drop_table(url, name)
        except Exception as exc:
            log(f"bench: could not drop {name} ({exc}); drop it by hand")


def count_rows(url: str, table: str) -> int:
    with connect(url) as conn:
        row = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(table_ident(table))).fetchone()
    return int(row[0]) if row else 0


def checkpoint(url: str) -> bool:
    """Flush dirty pages outside the timed part; False when not allowed (not a superuser)."""
    try:
        with connect(url, autocommit=True) as conn:
            conn.execute("CHECKPOINT")
    except psycopg.Error:
        return False
    return True


def server_settings(url: str) -> dict[str, str]:
    names = ("fsync", "synchronous_commit", "full_page_writes", "wal_level", "shared_buffers", "max_wal_size",
             "server_version", "timescaledb.license")
    out: dict[str, str] = {}
    with connect(url) as conn:
        for n in names:
            try:
                row = conn.execute(sql.SQL("SHOW {}").format(sql.Identifier(n))).fetchone()
            except psycopg.Error:
                conn.rollback()
                continue
            out[n] = str(row[0]) if row else ""
        ext = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'").fetchone()
        out["timescaledb"] = str(ext[0]) if ext else ""
    return out


def durable(settings: dict[str, str]) -> bool:
    return (settings.get("fsync") == "on" and settings.get("full_page_writes") == "on"
            and settings.get("synchronous_commit") in ("on", "remote_write", "remote_apply"))


def table_facts(url: str, table: str) -> dict[str, Any]:
    """What the loaded hypertable holds besides rows: its indexes (its own and its chunks'), whether it
    is WAL-logged, its size."""
    schema, _, base = table.rpartition(".")
    with connect(url) as conn:
        regclass = table_ident(table).as_string(conn)
        own = conn.execute("SELECT indexdef FROM pg_indexes WHERE tablename = %s ORDER BY indexname",
                           (base,)).fetchall()
        chunks = conn.execute(
            "SELECT c.chunk_schema, c.chunk_name, (SELECT count(*) FROM pg_indexes i WHERE i.schemaname ="
            " c.chunk_schema AND i.tablename = c.chunk_name) FROM timescaledb_information.chunks c"
            " WHERE c.hypertable_schema = COALESCE(NULLIF(%s, ''), current_schema()) AND c.hypertable_name = %s"
            " ORDER BY c.range_start", (schema, base)).fetchall()
        first = conn.execute("SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND tablename = %s"
                             " ORDER BY indexname", (chunks[0][0], chunks[0][1])).fetchall() if chunks else []
        persistence = conn.execute("SELECT relpersistence FROM pg_class WHERE oid = %s::regclass",
                                   (regclass,)).fetchone()
        size = conn.execute("SELECT pg_size_pretty(hypertable_size(%s::regclass))", (regclass,)).fetchone()
    return {"indexes": [r[0] for r in own], "chunk_count": len(chunks),
            "indexes_per_chunk": sorted({int(c[2]) for c in chunks}),
            "first_chunk_indexes": [r[0] for r in first],
            "logged": bool(persistence and persistence[0] == "p"), "size": size[0] if size else None}
