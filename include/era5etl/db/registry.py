"""The pipeline's weather tables (``era5_tables``, sql/006): which tables it may write to.

A table is registered when the pipeline creates it (:func:`era5etl.db.ensure_schema`). An existing
table that is not registered is the pipeline's only when it is recognisably so, a table made before
this registry: the ledger ``era5_months`` names it, or it is a weather hypertable (``time``,
``location_id``, ``latitude``, ``longitude``) with its two rollups (or, on pressure levels, its
``level`` column). Such a table is registered on first sight; any other table (a user's, Airflow's,
a catalog's) is refused with :class:`NotOurTable` before anything is changed.
"""

from __future__ import annotations

from typing import Any

import psycopg

from era5etl.core.datasets import FILE_DATASETS, SINGLE_LEVELS, Dataset, by_name
from era5etl.core.errors import InputError
from era5etl.core.names import DERIVED_SUFFIXES
from era5etl.db.facts import kept
from era5etl.db.tables import LEVEL_COLUMN, SQL_DIR, render, rollup_tables, table_ident

# The columns every weather table starts with, and their types (sql/010 and db._level_table_sql).
WEATHER_KEY = {"time": "timestamp with time zone", "location_id": "integer", "latitude": "real",
               "longitude": "real"}


class NotOurTable(InputError):
    """The table exists and the pipeline did not make it: nothing is written to it."""


def _exists(conn: psycopg.Connection[Any], table: str) -> bool:
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table_ident(table).as_string(conn),)).fetchone()
    return row == (True,)


def registered(conn: psycopg.Connection[Any], table: str) -> bool:
    return conn.execute("SELECT 1 FROM era5_tables WHERE table_name = %s", (table,)).fetchone() is not None


def register(conn: psycopg.Connection[Any], table: str, dataset: str, created_by: str) -> None:
    conn.execute("INSERT INTO era5_tables (table_name, dataset, created_by) VALUES (%s, %s, %s)"
                 " ON CONFLICT (table_name) DO NOTHING", (table, dataset, created_by))


def forget(conn: psycopg.Connection[Any], table: str) -> None:
    conn.execute("DELETE FROM era5_tables WHERE table_name = %s", (table,))


def names(conn: psycopg.Connection[Any]) -> list[str]:
    """Every registered table, by name ([] before the registry exists)."""
    if not _exists(conn, "era5_tables"):
        return []
    return [str(r[0]) for r in conn.execute("SELECT table_name FROM era5_tables ORDER BY table_name")]


def _in_ledger(conn: psycopg.Connection[Any], table: str) -> bool:
    return conn.execute("SELECT 1 FROM era5_months WHERE table_name = %s LIMIT 1", (table,)).fetchone() is not None


def _weather_shaped(conn: psycopg.Connection[Any], table: str, has_levels: bool) -> str | None:
    """None when ``table`` is a weather hypertable of the pipeline's shape, else what it lacks."""
    rel = table_ident(table).as_string(conn)
    if conn.execute("SELECT 1 FROM timescaledb_information.hypertables h JOIN pg_class c ON c.relname ="
                    " h.hypertable_name JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname ="
                    " h.hypertable_schema WHERE c.oid = to_regclass(%s)", (rel,)).fetchone() is None:
        return "it is not a hypertable"
    have = dict(conn.execute("SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute"
                             " WHERE attrelid = to_regclass(%s) AND attnum > 0 AND NOT attisdropped",
                             (rel,)).fetchall())
    wrong = [f"{c} {t}" for c, t in WEATHER_KEY.items() if have.get(c) != t]
    if wrong:
        return f"it lacks the weather table's column(s) {', '.join(wrong)}"
    if has_levels:
        return None if LEVEL_COLUMN in have else f"it has no {LEVEL_COLUMN} column"
    missing = [n for n in rollup_tables(table).values() if not _exists(conn, n)]
    return f"it has no rollup(s) {', '.join(missing)}" if missing else None


def claim(conn: psycopg.Connection[Any], table: str, dataset: str, has_levels: bool, created_by: str) -> None:
    """An existing ``table`` the pipeline may write to: registered, or recognisably its own (then
    registered now); NotOurTable, having changed nothing, otherwise."""
    if registered(conn, table):
        return
    if _in_ledger(conn, table):
        register(conn, table, dataset, f"{created_by} (adopted: named in era5_months)")
        return
    why = _weather_shaped(conn, table, has_levels)
    if why is None:
        register(conn, table, dataset, f"{created_by} (adopted: a weather hypertable)")
        return
    raise NotOurTable(f"table {table} exists and is not one of the pipeline's ({why}; it is not in era5_tables "
                      "nor in the ledger era5_months): nothing was changed; load into another --table, or drop "
                      "or rename that table yourself")


def require_ours(conn: psycopg.Connection[Any], table: str, created_by: str) -> None:
    """For a command that changes an existing weather table of single levels (``rollups rebuild``):
    NotOurTable, having changed nothing, unless the table exists and is the pipeline's (:func:`claim`)."""
    if not _exists(conn, table):
        raise NotOurTable(f"table {table} does not exist")
    for name in ("002_pipeline_tables.sql", "006_tables.sql"):  # the bookkeeping claim reads (IF NOT EXISTS)
        conn.execute(render(SQL_DIR / name))
    claim(conn, table, "single-levels", False, created_by)


def require_known(conn: psycopg.Connection[Any], table: str) -> None:
    """For a command that records verdicts on a table (``validate``): NotOurTable, having written
    nothing, unless ``table`` exists and is registered or named in the ledger."""
    if not _exists(conn, table):
        raise NotOurTable(f"table {table} does not exist: nothing to validate")
    if _exists(conn, "era5_tables") and (registered(conn, table) or _in_ledger(conn, table)):
        return
    raise NotOurTable(f"table {table} is not one of the pipeline's (it is not in era5_tables nor in the ledger "
                      "era5_months): nothing was validated or recorded")


def check_new(conn: psycopg.Connection[Any], table: str, has_levels: bool) -> None:
    """A table about to be made: NotOurTable when a name the pipeline would derive from it is taken
    already, or when it is the rollup of a registered table."""
    for suffix in DERIVED_SUFFIXES:
        if table.endswith(suffix) and registered(conn, table[: -len(suffix)]):
            raise NotOurTable(f"{table} is a name the pipeline derives from its table {table[: -len(suffix)]} "
                              f"(its {suffix[1:]} {'copy' if suffix == '_years' else 'rollup'}): "
                              "choose another --table")
    if has_levels:
        return
    taken = [n for n in rollup_tables(table).values() if _exists(conn, n)]
    if taken:
        raise NotOurTable(f"table {table} would have rollup(s) {', '.join(taken)}, which exist already and are not "
                          "its own: nothing was created; choose another --table")


@kept
def table_dataset(conn: psycopg.Connection[Any], table: str) -> Dataset:
    """The dataset ``table`` was loaded with, as the ledger records its months, else as the table registry
    records it (a table load-file made), else single levels: whose lattice numbers its points."""
    found = conn.execute("SELECT to_regclass('era5_months') IS NOT NULL").fetchone()
    if not found or not found[0]:
        return SINGLE_LEVELS
    row = conn.execute("SELECT dataset FROM era5_months WHERE table_name = %s AND dataset IS NOT NULL"
                       " ORDER BY updated_at DESC LIMIT 1", (table,)).fetchone()
    if row is None and conn.execute("SELECT to_regclass('era5_tables') IS NOT NULL").fetchone() == (True,):
        # A table load-file made has no month in the ledger; the registry says what it was made for.
        row = conn.execute("SELECT dataset FROM era5_tables WHERE table_name = %s", (table,)).fetchone()
    return by_name(str(row[0]), FILE_DATASETS) if row and row[0] else SINGLE_LEVELS
