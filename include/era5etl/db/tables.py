"""A table's names and the schema's files: identifiers, a table's rollups, its level column, the
columnstore's presence, and the repository's sql/ rendered with identifiers."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import psycopg
from psycopg import sql

from era5etl.core.errors import InputError
from era5etl.db.facts import kept

# The schema's files: the top-level sql/, installed as the package era5etl.sql (pyproject.toml's
# package-dir), so an installed wheel and an editable checkout find them the same way.
SQL_DIR: Traversable = resources.files("era5etl.sql")



def table_ident(table: str) -> sql.Identifier:
    """A table name as given, optionally schema-qualified (``schema.table``)."""
    if not table or len(table) > 63 * 2 + 1:
        raise ValueError(f"table name {table!r} is empty or too long")
    return sql.Identifier(*table.split(".", 1))


def split_table(table: str) -> tuple[str | None, str]:
    """(schema or None, name) of a table name as given; None means the search path's first schema."""
    parts = table.split(".", 1)
    return (parts[0], parts[1]) if len(parts) == 2 else (None, parts[0])


def render(path: Traversable, **idents: sql.Composable) -> sql.SQL | sql.Composed:
    # A schema file that takes identifiers uses {name} placeholders for them (values are never
    # formatted in); one that takes none is run as written, so its braces (JSON defaults) stay literal.
    text = sql.SQL(path.read_text(encoding="utf-8"))  # a file of ours, never user input
    return text.format(**idents) if idents else text


def licence(conn: psycopg.Connection[Any]) -> str:
    """TimescaleDB's licence on this server: 'timescale' (Community) or 'apache'."""
    row = conn.execute("SELECT current_setting('timescaledb.license', true)").fetchone()
    return str(row[0]) if row and row[0] else "unknown"


def columnstore_available(conn: psycopg.Connection[Any]) -> bool:
    return licence(conn) == "timescale"


def columnstore_enabled(conn: psycopg.Connection[Any], table: str) -> bool:
    """Whether the hypertable's chunks go to the columnstore (TimescaleDB: compression enabled)."""
    schema, name = split_table(table)
    row = conn.execute(
        "SELECT compression_enabled FROM timescaledb_information.hypertables"
        " WHERE hypertable_schema = COALESCE(%s, current_schema()) AND hypertable_name = %s",
        (schema, name)).fetchone()
    return bool(row and row[0])


# A weather table's rollups by the step they aggregate to, and the width of that step's buckets.
ROLLUP_STEPS: dict[str, tuple[str, str]] = {"day": ("_daily", "1 day"), "month": ("_monthly", "1 month")}
MAX_IDENTIFIER = 63  # PostgreSQL's NAMEDATALEN - 1: a longer name is cut, silently


def rollup_tables(table: str) -> dict[str, str]:
    """The rollups of ``table`` by step: ``{"day": "<table>_daily", "month": "<table>_monthly"}``, in
    the table's schema. InputError when a name would be longer than PostgreSQL keeps."""
    schema, name = split_table(table)
    out = {}
    for step, (suffix, _) in ROLLUP_STEPS.items():
        if len((name + suffix).encode()) > MAX_IDENTIFIER:
            raise InputError(f"table name {name!r} is too long for its rollup {name + suffix!r}: PostgreSQL keeps "
                             f"{MAX_IDENTIFIER} bytes of a name; use a name of at most "
                             f"{MAX_IDENTIFIER - max(len(s) for s, _ in ROLLUP_STEPS.values())} characters")
        out[step] = f"{schema}.{name}{suffix}" if schema else name + suffix
    return out



# A table on pressure levels: its key has the level (hPa) between the point and its coordinates.
LEVEL_COLUMN = "level"
# Its columnstore order (docs/datasets.md): an hour's rows level by level, each level's points in id
# order, so a level's map for one hour and one place's profile each decompress few batches.
LEVEL_ORDERBY = "time, level, location_id"


@kept
def has_level_column(conn: psycopg.Connection[Any], table: str) -> bool | None:
    """Whether ``table`` has a level column; None when it does not exist."""
    rel = table_ident(table).as_string(conn)
    found = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (rel,)).fetchone()
    if not found or not found[0]:
        return None
    row = conn.execute("SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%s)"
                       " AND attname = %s AND NOT attisdropped)", (rel, LEVEL_COLUMN)).fetchone()
    return bool(row and row[0])


@kept
def rollup_of(conn: psycopg.Connection[Any], table: str, step: str) -> str | None:
    """The name of ``table``'s rollup to ``step`` ("day" or "month"), None if it has none."""
    try:
        name = rollup_tables(table)[step]
    except InputError:
        return None
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table_ident(name).as_string(conn),)).fetchone()
    return name if row == (True,) else None
