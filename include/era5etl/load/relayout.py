"""``table relayout``: an existing table moved into the tile layout (``db.layout``) chunk by chunk,
from the rows it holds, without a reload from the CDS.

The table first gets the ``tile`` column (NULL in every row it has: no row is rewritten) and the
tile layout's columnstore settings, which TimescaleDB applies to chunks compressed from then on;
every chunk keeps the settings it was compressed with until it is moved, and reads it correctly
with them. Then each chunk whose batches are not yet in tiles is rewritten in one transaction of
its own, under the loader's locks (``load.locks``: a load of the same month waits, as for another
load): its rows are copied aside (a temporary table, gone with the transaction), the chunk emptied
and turned back into an empty row-store chunk (so it takes the table's new settings), and the rows
written back in tile order through direct-to-columnstore INSERT, their tile computed by the server
(``era5_tile``). A reader sees each chunk as it was or as it is moved, never half of it; killed at
any point, the chunk in hand rolls back and a rerun goes on with the chunks not yet moved.

The rollups move the same way, after the hourly table (``table relayout`` moves all three).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql

from era5etl.core.tiles import TILE_COLUMN
from era5etl.db import columnstore_enabled, connect, rollup_tables, split_table, table_ident
from era5etl.db.layout import columnstore_settings
from era5etl.load.chunks import empty_chunk
from era5etl.load.errors import LoadError
from era5etl.load.locks import lock_chunk, lock_month
from era5etl.load.session import INSERT_SETTINGS, apply_settings, lift_decompression_limit

TILES_SEGMENTBY = TILE_COLUMN


@dataclass(frozen=True)
class Chunk:
    schema: str
    name: str
    start: datetime
    end: datetime


@dataclass
class Progress:
    """Where a table's move stands: chunks in tiles, chunks left, and (after a run) what it moved."""

    table: str
    chunks: int
    moved: int
    rows: int = 0
    seconds: float = 0.0

    @property
    def left(self) -> int:
        return self.chunks - self.moved

    def as_dict(self) -> dict[str, Any]:
        return {"table": self.table, "chunks": self.chunks, "in_tiles": self.moved, "left": self.left,
                "rows_moved": self.rows, "seconds": round(self.seconds, 2)}


def _time_column(conn: psycopg.Connection[Any], table: str) -> str:
    """``time`` for a weather table, ``bucket`` for a rollup: what its chunks are ranges of."""
    schema, name = split_table(table)
    row = conn.execute("SELECT column_name FROM timescaledb_information.dimensions WHERE hypertable_schema ="
                       " COALESCE(%s, current_schema()) AND hypertable_name = %s AND dimension_number = 1",
                       (schema, name)).fetchone()
    if row is None:
        raise LoadError(f"{table} is not a hypertable")
    return str(row[0])


def pending(conn: psycopg.Connection[Any], table: str) -> tuple[int, list[Chunk]]:
    """(the table's chunk count, its chunks not yet in tiles, oldest first): a chunk whose batches
    were compressed without the tile segment, or still in the row store with rows."""
    schema, name = split_table(table)
    rows = conn.execute(
        "SELECT c.chunk_schema, c.chunk_name, c.range_start, c.range_end, s.segmentby"
        " FROM timescaledb_information.chunks c"
        " LEFT JOIN timescaledb_information.chunk_columnstore_settings s"
        "   ON s.chunk = format('%%I.%%I', c.chunk_schema, c.chunk_name)::regclass"
        " WHERE c.hypertable_schema = COALESCE(%s, current_schema()) AND c.hypertable_name = %s"
        " ORDER BY c.range_start", (schema, name)).fetchall()
    todo = []
    for chunk_schema, chunk_name, start, end, segmentby in rows:
        if segmentby == TILE_COLUMN:
            continue
        if segmentby is None and not _holds_untiled_rows(conn, sql.Identifier(chunk_schema, chunk_name)):
            continue  # an empty chunk, or one the tiled loader wrote that is not compressed yet
        todo.append(Chunk(str(chunk_schema), str(chunk_name), start, end))
    return len(rows), todo


def _holds_untiled_rows(conn: psycopg.Connection[Any], chunk: sql.Identifier) -> bool:
    has_tile = conn.execute("SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = %s::regclass"
                            " AND attname = %s AND NOT attisdropped)",
                            (chunk.as_string(conn), TILE_COLUMN)).fetchone()
    condition = sql.SQL("tile IS NULL") if has_tile and has_tile[0] else sql.SQL("TRUE")
    row = conn.execute(sql.SQL("SELECT EXISTS (SELECT 1 FROM {} WHERE {})").format(chunk, condition)).fetchone()
    return bool(row and row[0])


def prepare(conn: psycopg.Connection[Any], table: str) -> None:
    """The tile column and the tile layout's settings (for the chunks compressed from now on)."""
    if not columnstore_enabled(conn, table):
        raise LoadError(f"{table} is not in the columnstore (the Apache licence, or set so by hand): "
                        "a row-store table has no tile layout; its chunks keep their per-chunk indexes")
    ident = table_ident(table)
    orderby = f"location_id, {_time_column(conn, table)}"
    conn.execute(sql.SQL("ALTER TABLE {} ADD COLUMN IF NOT EXISTS {} int").format(ident, sql.Identifier(TILE_COLUMN)))
    if columnstore_settings(conn, table) != (TILES_SEGMENTBY, orderby.replace(" ", "")):
        conn.execute(sql.SQL("ALTER TABLE {} SET (timescaledb.segmentby = {}, timescaledb.orderby = {})").format(
            ident, sql.Literal(TILES_SEGMENTBY), sql.Literal(orderby)))


def move_chunk(conn: psycopg.Connection[Any], table: str, chunk: Chunk, lock_as: str | None = None) -> int:
    """One chunk into tiles, in one transaction; the rows moved. ``lock_as``: the weather table whose
    loads write ``table`` (a rollup), whose locks the move takes as a load of it does."""
    ident, target = table_ident(table), sql.Identifier(chunk.schema, chunk.name)
    owner = lock_as or table
    with conn.transaction(), conn.cursor() as cur:
        lock_month(cur, owner, chunk.start, shared=True)
        lock_chunk(cur, owner, chunk.start)
        if lock_as is not None:  # the monthly rows of a load are written under this lock (load.monthly)
            monthly = rollup_tables(owner)["month"]
            cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s), 0)", (f"era5etl.monthly {monthly}",))
        lift_decompression_limit(cur)
        columns = [r[0] for r in cur.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped"
            " AND attname <> %s ORDER BY attnum", (ident.as_string(conn), TILE_COLUMN))]
        names = sql.SQL(", ").join(map(sql.Identifier, columns))
        cur.execute(sql.SQL("CREATE TEMPORARY TABLE era5_relayout ON COMMIT DROP AS SELECT {} FROM {}").format(
            names, target))
        rows = int(max(cur.rowcount, 0))
        # Emptied and back in the row store, empty: the rows written next make its compressed part
        # anew with the table's settings.
        empty_chunk(cur, target, compressed=True)
        cur.execute("CALL convert_to_rowstore(%s::regclass, if_columnstore => true)", (target.as_string(conn),))
        apply_settings(cur, INSERT_SETTINGS)
        cur.execute(sql.SQL("INSERT INTO {} ({}, {}) SELECT {}, era5_tile(location_id) FROM era5_relayout"
                            " ORDER BY era5_tile(location_id), location_id, {}").format(
            target, names, sql.Identifier(TILE_COLUMN), names, sql.Identifier(_time_column(conn, table))))
        # Whatever the server kept in the row store (direct compression off on a server, say) is
        # compressed here, in the same transaction.
        cur.execute("CALL convert_to_columnstore(%s::regclass, if_not_columnstore => true)", (target.as_string(conn),))
    return rows


def relayout(url: str, table: str, on_chunk: Callable[[Chunk, int, Progress], None] | None = None,
             lock_as: str | None = None) -> Progress:
    """Move every chunk of ``table`` (a weather table or a rollup: the caller moves each) not yet in
    tiles; resumable (a chunk is moved or not)."""
    began = time.perf_counter()
    with connect(url, autocommit=True) as conn:
        found = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table_ident(table).as_string(conn),)).fetchone()
        if not found or not found[0]:
            raise LoadError(f"{table} does not exist")
        prepare(conn, table)
        total, todo = pending(conn, table)
        progress = Progress(table, total, total - len(todo))
        for chunk in todo:
            progress.rows += move_chunk(conn, table, chunk, lock_as)
            progress.moved += 1
            if on_chunk is not None:
                on_chunk(chunk, progress.rows, progress)
    progress.seconds = time.perf_counter() - began
    return progress


def status(url: str, table: str) -> Progress:
    with connect(url) as conn:
        total, todo = pending(conn, table)
    return Progress(table, total, total - len(todo))
