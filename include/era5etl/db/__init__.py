"""Database access: where the database is, connections, the schema from the package's sql/.

When ``ERA5_DATABASE_URL`` is set that server is used and nothing is provisioned. Otherwise the
checkout runs its own PostgreSQL 17 + TimescaleDB Community server (``db.local``), a copy of the
machine's server image (``db.image``: TimescaleDB built from its release source once per machine).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

from era5etl.core.errors import InputError
from era5etl.db.errors import DatabaseError
from era5etl.db.local import LocalTimescale

log = logging.getLogger(__name__)

# The schema's files are package data (era5etl/sql/), so an installed wheel finds them as a checkout does.
SQL_DIR: Traversable = resources.files("era5etl") / "sql"


def redact(url: str) -> str:
    """The URL with its password replaced, for logs and error messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def with_database(url: str, dbname: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path="/" + dbname))


@contextlib.contextmanager
def connect(url: str, *, autocommit: bool = False) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
    try:
        conn = psycopg.connect(url, autocommit=autocommit, connect_timeout=10, application_name="era5etl")
    except psycopg.OperationalError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DatabaseError(f"cannot connect to the database at {redact(url)}: {first}") from None
    try:
        yield conn
    finally:
        conn.close()


def table_ident(table: str) -> sql.Identifier:
    """A table name as given, optionally schema-qualified (``schema.table``)."""
    if not table or len(table) > 63 * 2 + 1:
        raise ValueError(f"table name {table!r} is empty or too long")
    return sql.Identifier(*table.split(".", 1))


def split_table(table: str) -> tuple[str | None, str]:
    """(schema or None, name) of a table name as given; None means the search path's first schema."""
    parts = table.split(".", 1)
    return (parts[0], parts[1]) if len(parts) == 2 else (None, parts[0])


def _render(path: Traversable, **idents: sql.Composable) -> sql.SQL | sql.Composed:
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


def drop_table(conn: psycopg.Connection[Any], table: str) -> None:
    """Drop a weather table and its rollups (the rollups first: an older version's monthly rollup was
    a continuous aggregate on the daily one, which ``DROP TABLE ... CASCADE`` alone refuses)."""
    from era5etl.db.rollups import drop_rollups

    drop_rollups(conn, table)
    conn.execute(sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(table_ident(table)))


def ensure_schema(url: str, table: str = "weather", chunk_interval: str = "1 day") -> None:
    """Create the extension, the pipeline's own tables, the hypertable ``table`` and its rollups if missing."""
    from era5etl.db.rollups import ensure_rollups

    ident = table_ident(table)
    with connect(url, autocommit=True) as conn:
        # Two first runs at once would both try CREATE; a session lock keeps them in line.
        conn.execute("SELECT pg_advisory_lock(hashtext('era5etl.schema'))")
        try:
            conn.execute(_render(SQL_DIR / "001_extension.sql"))
            conn.execute(_render(SQL_DIR / "002_pipeline_tables.sql"))
            conn.execute(_render(SQL_DIR / "003_cds_jobs.sql"))
            conn.execute(_render(SQL_DIR / "004_validation.sql"))
            conn.execute(_render(SQL_DIR / "005_land_points.sql"))
            found = conn.execute("SELECT to_regclass(%s)", (ident.as_string(conn),)).fetchone()
            new = found is None or found[0] is None
            conn.execute(_render(SQL_DIR / "010_weather_hypertable.sql", table=ident))
            conn.execute(
                "SELECT create_hypertable(%s::regclass, by_range('time', %s::interval),"
                " create_default_indexes => false, if_not_exists => true)",
                (ident.as_string(conn), chunk_interval),
            )
            # A new table gets the columnstore where the licence has it; an existing one keeps the
            # layout it has (a table someone set to the row store stays there).
            if new and columnstore_available(conn):
                conn.execute(_render(SQL_DIR / "020_columnstore.sql", table=ident,
                                     orderby=sql.Literal("time, location_id")))
            # New and existing tables alike: a table made before the rollups existed gets them now
            # (empty: the loader fills them as it loads), with a column per aggregate of each column.
            ensure_rollups(conn, table, columnstore_enabled(conn, table))
        finally:
            conn.execute("SELECT pg_advisory_unlock(hashtext('era5etl.schema'))")


def database_url() -> str:
    """The pipeline's database: ``ERA5_DATABASE_URL``, else the local server (provisioned on demand)."""
    from era5etl import settings

    url = settings.load().database_url
    if url:
        return url
    return LocalTimescale().up()


def airflow_database_url() -> str:
    """Airflow's metadata database on the same server, so LocalExecutor can run tasks in parallel."""
    return with_database(database_url(), "airflow")


__all__ = ["ROLLUP_STEPS", "SQL_DIR", "DatabaseError", "LocalTimescale", "airflow_database_url",
           "columnstore_available", "columnstore_enabled", "connect", "database_url", "drop_table", "ensure_schema",
           "licence", "redact", "rollup_tables", "split_table", "table_ident", "with_database"]
