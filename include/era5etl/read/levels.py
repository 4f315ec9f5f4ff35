"""The level a read of a table on pressure levels asks for: required there, refused elsewhere.

A table on pressure levels (a ``level`` column, db.LEVEL_COLUMN) holds one row per hour, level and
point, so a series or a map without a level would mix levels; one without levels has no level to
choose. Either mistake is a ReadError that says what to give instead."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from era5etl.db import has_level_column, table_ident
from era5etl.read.errors import ReadError


def check_level(conn: psycopg.Connection[Any], table: str, level: int | None) -> int | None:
    """``level`` when the table has levels and holds that one; None for a table without levels
    (asked for none). ReadError otherwise, naming the levels the table holds."""
    on_levels = has_level_column(conn, table)
    if not on_levels:
        if level is not None:
            raise ReadError(f"{table} has no pressure levels (it holds single-level data): leave --level out")
        return None
    held = [int(r[0]) for r in conn.execute(sql.SQL(
        "SELECT DISTINCT level FROM {} ORDER BY level").format(table_ident(table))).fetchall()]
    if level is None:
        raise ReadError(f"{table} is on pressure levels: give a level in hPa (--level, or level= over HTTP), "
                        f"one of {', '.join(map(str, held)) or 'none loaded yet'}")
    if level not in held:
        raise ReadError(f"{table} holds no rows at {level} hPa; its levels are {', '.join(map(str, held)) or 'none'}")
    return level


def level_filter(level: int | None) -> sql.Composable:
    """`` AND level = %(level)s`` when a level is read, nothing otherwise."""
    return sql.SQL(" AND level = %(level)s") if level is not None else sql.SQL("")
