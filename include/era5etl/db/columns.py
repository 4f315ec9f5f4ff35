"""The weather table's data columns: the six it is created with, and a column for any other
catalogued variable, added the first time a load asks for it (``ALTER TABLE ... ADD COLUMN``:
nullable, no default, so no existing row or compressed chunk is rewritten)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import psycopg
from psycopg import sql

from era5etl.core.variables import Variable
from era5etl.db.connect import connect
from era5etl.db.facts import kept
from era5etl.db.rollups import ensure_rollups
from era5etl.db.tables import columnstore_enabled, rollup_tables, table_ident

log = logging.getLogger(__name__)


@kept
def table_columns(conn: psycopg.Connection[tuple[Any, ...]], table: str) -> list[str]:
    """The table's columns in their order (empty if it does not exist)."""
    rows = conn.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attnum > 0 AND NOT attisdropped"
        " ORDER BY attnum", (table_ident(table).as_string(conn),)).fetchall()
    return [str(r[0]) for r in rows]


def _has_rollups(conn: psycopg.Connection[tuple[Any, ...]], table: str) -> bool:
    daily = table_ident(rollup_tables(table)["day"]).as_string(conn)
    found = conn.execute("SELECT to_regclass(%s)", (daily,)).fetchone()
    return found is not None and found[0] is not None


def ensure_columns(url: str, table: str, variables: Iterable[Variable]) -> list[str]:
    """Add the columns of ``variables`` the table lacks (float4, like the six); returns those added."""
    wanted = list(dict.fromkeys(v.column for v in variables))
    with connect(url, autocommit=True) as conn:
        have = set(table_columns(conn, table))
        added = [c for c in wanted if c not in have]
        for column in added:
            conn.execute(sql.SQL("ALTER TABLE {} ADD COLUMN IF NOT EXISTS {} real").format(
                table_ident(table), sql.Identifier(column)))
        if added and _has_rollups(conn, table):
            # The rollups aggregate every data column: theirs follow (era5etl.core.rollups). A table of
            # monthly means has none (its rows are months): none are made here.
            ensure_rollups(conn, table, columnstore_enabled(conn, table))
    if added:
        log.info("table %s: added column(s) %s", table, ", ".join(added))
    return added
