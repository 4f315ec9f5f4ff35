"""Which layout a weather table (or a rollup) has in the columnstore: what ``table list`` shows, what
the loader sends its rows in, and whether a read can name a place's tile.

* ``tiles``: segmented by ``tile`` (``core.tiles``), each tile's batches ordered by
  (location_id, time): a place decodes its own tile's rows (sql/020_columnstore.sql);
* ``moving``: segmented by tile from now on, with chunks of the time layout left to move
  (``table relayout``), read correctly meanwhile (without naming the tile);
* ``time``: no segmentby, ordered by time then place (what tables made before the tiles have):
  a batch holds one hour's neighbours, so a place decodes a batch of other places for every hour;
* ``rowstore``: not in the columnstore (the Apache licence, or a table set so by hand).
"""

from __future__ import annotations

from typing import Any, Literal

import psycopg

from era5etl.core.tiles import TILE_COLUMN
from era5etl.db.facts import kept
from era5etl.db.tables import columnstore_enabled, table_ident

Layout = Literal["tiles", "moving", "time", "rowstore"]
# The columnstore settings of each layout, as TimescaleDB reports them (segmentby, orderby without
# spaces or quotes); a table on pressure levels has the level between time and place.
TILES_ORDER = (TILE_COLUMN, "location_id,time")
TILES_ORDER_LEVELS = (TILE_COLUMN, "location_id,level,time")
TIME_ORDER = ("", "time,location_id")
TIME_ORDER_LEVELS = ("", "time,level,location_id")


def columnstore_settings(conn: psycopg.Connection[Any], table: str) -> tuple[str, str] | None:
    """(segmentby, orderby) of a hypertable in the columnstore, normalised; None otherwise."""
    if not columnstore_enabled(conn, table):
        return None
    row = conn.execute(
        "SELECT coalesce(segmentby, ''), coalesce(orderby, '')"
        " FROM timescaledb_information.hypertable_columnstore_settings WHERE hypertable = %s::regclass",
        (table_ident(table).as_string(conn),)).fetchone()
    if row is None:
        return None
    return str(row[0]).replace('"', "").replace(" ", ""), str(row[1]).replace('"', "").replace(" ", "")


def table_layout(conn: psycopg.Connection[Any], table: str) -> Layout:
    """The layout ``table`` has: ``moving`` while ``table relayout`` has chunks left to move (a chunk
    compressed in time order, its rows without a tile)."""
    found = columnstore_settings(conn, table)
    if found is None:
        return "rowstore"
    if found[0] != TILE_COLUMN:
        return "time"
    return "tiles" if in_tiles(conn, table) else "moving"


@kept
def in_tiles(conn: psycopg.Connection[Any], table: str) -> bool:
    """Whether every row of ``table`` has its tile, so a read may name a place's tile: the table has
    the tile column and no chunk is compressed without the tile segment (a chunk of the time layout,
    whose rows have no tile, until ``table relayout`` moves it). Catalogue lookups only."""
    if not has_tile_column(conn, table):
        return False
    row = conn.execute(
        "SELECT NOT EXISTS (SELECT 1 FROM timescaledb_information.chunk_columnstore_settings"
        " WHERE hypertable = %s::regclass AND segmentby IS DISTINCT FROM %s)",
        (table_ident(table).as_string(conn), TILE_COLUMN)).fetchone()
    return bool(row and row[0])


@kept
def has_tile_column(conn: psycopg.Connection[Any], table: str) -> bool:
    """Whether ``table`` has the ``tile`` key column (then a place's reads name its tile)."""
    row = conn.execute("SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%s)"
                       " AND attname = %s AND NOT attisdropped)",
                       (table_ident(table).as_string(conn), TILE_COLUMN)).fetchone()
    return bool(row and row[0])
