"""Database access: where the database is, connections, the schema from the repository's sql/.

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
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

from era5etl.core.errors import InputError, first_line

if TYPE_CHECKING:
    from era5etl.core.datasets import Dataset
from era5etl.db.errors import DatabaseError
from era5etl.db.local import LocalTimescale

log = logging.getLogger(__name__)

# The schema's files: the top-level sql/, installed as the package era5etl.sql (pyproject.toml's
# package-dir), so an installed wheel and an editable checkout find them the same way.
SQL_DIR: Traversable = resources.files("era5etl.sql")


def redact(url: str) -> str:
    """The URL with its password replaced, for logs and error messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def with_database(url: str, dbname: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path="/" + dbname))


# No JIT: a read over a table's months plans one scan per chunk, and a plan's cost over 1,020 monthly
# chunks passes jit_above_cost, so PostgreSQL compiled ~10,000 functions before returning a place's
# 85 years (17.7 s of 18.6 s; 0.8 s without). docs/benchmarks.md, "JIT over many chunks".
SESSION_OPTIONS = "-c jit=off"


def session_options(url: str) -> str:
    """The URL's own ``options`` (kept) followed by :data:`SESSION_OPTIONS`."""
    from psycopg.conninfo import conninfo_to_dict

    own = str(conninfo_to_dict(url).get("options") or "")
    return f"{own} {SESSION_OPTIONS}".strip()


@contextlib.contextmanager
def connect(url: str, *, autocommit: bool = False) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
    conn = open_connection(url, autocommit=autocommit)
    try:
        yield conn
    finally:
        conn.close()


def open_connection(url: str, *, autocommit: bool = False) -> psycopg.Connection[tuple[Any, ...]]:
    """A new connection, as :func:`connect` opens it (the caller closes it); DatabaseError when none can be."""
    try:
        return psycopg.connect(url, autocommit=autocommit, connect_timeout=10, application_name="era5etl",
                               options=session_options(url))
    except psycopg.OperationalError as exc:
        raise DatabaseError(f"cannot connect to the database at {redact(url)}: {first_line(exc)}") from None


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


def drop_table(conn: psycopg.Connection[Any], table: str) -> None:
    """Drop a weather table, its rollups and its copy of years (the rollups first: an older version's
    monthly rollup was a continuous aggregate on the daily one, which ``DROP TABLE ... CASCADE`` alone
    refuses)."""
    from era5etl.db import extents
    from era5etl.db.rollups import drop_rollups
    from era5etl.db.years import drop_copy

    drop_rollups(conn, table)
    drop_copy(conn, table)
    conn.execute(sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(table_ident(table)))
    # A table gone is no longer the pipeline's (era5_tables, db.registry): a new one of that name is new.
    if conn.execute("SELECT to_regclass('era5_tables') IS NOT NULL").fetchone() == (True,):
        conn.execute("DELETE FROM era5_tables WHERE table_name = %s", (table,))
    extents.forget(conn, table)


# A table on pressure levels: its key has the level (hPa) between the point and its coordinates.
LEVEL_COLUMN = "level"
# Its columnstore order (docs/datasets.md): an hour's rows level by level, each level's points in id
# order, so a level's map for one hour and one place's profile each decompress few batches.
LEVEL_ORDERBY = "time, level, location_id"


def has_level_column(conn: psycopg.Connection[Any], table: str) -> bool | None:
    """Whether ``table`` has a level column; None when it does not exist."""
    rel = table_ident(table).as_string(conn)
    found = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (rel,)).fetchone()
    if not found or not found[0]:
        return None
    row = conn.execute("SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%s)"
                       " AND attname = %s AND NOT attisdropped)", (rel, LEVEL_COLUMN)).fetchone()
    return bool(row and row[0])


def _check_kind(conn: psycopg.Connection[Any], table: str, dataset: Dataset) -> None:
    """A dataset with levels goes to a table with a level column, one without to a table without."""
    levels = has_level_column(conn, table)
    if levels is None or levels == dataset.has_levels:
        return
    if dataset.has_levels:
        raise InputError(f"table {table} has no level column: it holds data without levels, not "
                         f"{dataset.name}; load {dataset.name} into another table (--table, ERA5_TABLE; "
                         f"weather_{dataset.name.replace('-', '_')} by default)")
    raise InputError(f"table {table} has a level column: it holds pressure-level data, not {dataset.name}; "
                     "load it into another table (--table, ERA5_TABLE)")


def _level_table_sql(table: str, dataset: Dataset) -> sql.Composed:
    columns = [sql.SQL("{} real").format(sql.Identifier(v.column)) for v in dataset.base_variables]
    return sql.SQL("CREATE TABLE IF NOT EXISTS {} (time timestamptz NOT NULL, location_id int, {} smallint NOT NULL,"
                   " latitude float4, longitude float4, {})").format(
        table_ident(table), sql.Identifier(LEVEL_COLUMN), sql.SQL(", ").join(columns))


def new_layout(dataset: Dataset, points: int | None) -> str:
    """The layout a new table gets (db.layout, ERA5_LAYOUT): ``auto`` picks tiles when the first load's
    grid points over a 31-day month fit one chunk (ERA5_CHUNK_ROWS): its chunks are then a month or a
    year, a tile's batch holds weeks of its points, and a place's history costs its own rows (the 441
    points of 1940-2024: 4.4 bytes a row). A wider area loads a day per chunk, where a tile's batch is
    its day (768 rows): loads, bytes and maps cost more than they give (docs/benchmarks.md), so it
    gets the time layout; as does an unknown breadth. Tables on pressure levels keep time order (a
    tile's day there would be a block of 922M rows)."""
    from era5etl import settings

    wanted = settings.load()
    if dataset.has_levels:
        return "time"
    if wanted.layout != "auto":
        return wanted.layout
    fits = points is not None and 0 < points * 744 <= wanted.chunk_rows  # ERA5_CHUNK_ROWS=0: days always
    return "tiles" if fits else "time"


def _lay_out(conn: psycopg.Connection[Any], table: str, dataset: Dataset, points: int | None) -> None:
    """A new table's columnstore layout (:func:`new_layout`): in tiles a ``tile`` key column and
    segmentby tile, ordered by (location_id, time); else ordered by (time, location_id)."""
    from era5etl.core.tiles import TILE_COLUMN

    ident = table_ident(table)
    if new_layout(dataset, points) == "tiles":
        conn.execute(sql.SQL("ALTER TABLE {} ADD COLUMN IF NOT EXISTS {} int").format(
            ident, sql.Identifier(TILE_COLUMN)))
        segmentby, orderby = TILE_COLUMN, "location_id, time"
    else:
        segmentby, orderby = "", (LEVEL_ORDERBY if dataset.has_levels else "time, location_id")
    conn.execute(render(SQL_DIR / "020_columnstore.sql", table=ident, segmentby=sql.Literal(segmentby),
                         orderby=sql.Literal(orderby)))


def ensure_schema(url: str, table: str = "weather", chunk_interval: str = "1 day",
                  dataset: Dataset | None = None, created_by: str = "era5etl", points: int | None = None) -> bool:
    """Create the extension, the pipeline's own tables, the hypertable ``table`` and its rollups if
    missing; True when this call made the table.

    ``dataset`` (single levels by default) says the table's kind: one on pressure levels has a
    ``level`` column (and its rollups a row per level); an existing table of the other kind is refused, and so
    is an existing table the pipeline did not make (:mod:`era5etl.db.registry`), before any change. A
    new table is made and registered in one transaction: a failure leaves no half-made table."""
    from era5etl.core.datasets import SINGLE_LEVELS
    from era5etl.core.names import check_table
    from era5etl.db import registry

    dataset = dataset or SINGLE_LEVELS
    if dataset.monthly and chunk_interval in ("1 day", "86400 seconds"):  # the hourly default: a day a chunk
        chunk_interval = MONTHLY_MEANS_CHUNK
    ident = table_ident(check_table(table))
    with connect(url, autocommit=True) as conn:
        # Two first runs at once would both try CREATE; a session lock keeps them in line.
        conn.execute("SELECT pg_advisory_lock(hashtext('era5etl.schema'))")
        try:
            for name in BOOKKEEPING_SQL:
                conn.execute(render(SQL_DIR / name))
            found = conn.execute("SELECT to_regclass(%s)", (ident.as_string(conn),)).fetchone()
            new = found is None or found[0] is None
            if new:
                registry.check_new(conn, table, dataset.has_levels)
            else:
                _check_kind(conn, table, dataset)
                registry.claim(conn, table, dataset.name, dataset.has_levels, created_by)
            with conn.transaction():
                _make_table(conn, table, chunk_interval, dataset, new, points)
                if new:
                    registry.register(conn, table, dataset.name, created_by)
            return new
        finally:
            conn.execute("SELECT pg_advisory_unlock(hashtext('era5etl.schema'))")


# A table of monthly means holds a month in a row where an hourly table holds an hour: ten years a
# chunk is 120 rows a point (a global decade 125M rows, 87 hours' worth of a global hourly table).
MONTHLY_MEANS_CHUNK = "3653 days"

# The pipeline's own bookkeeping, made (if missing) before any weather table.
BOOKKEEPING_SQL = ("001_extension.sql", "002_pipeline_tables.sql", "003_cds_jobs.sql", "004_validation.sql",
                   "005_land_points.sql", "006_tables.sql", "007_tiles.sql", "008_extents.sql",
                   "009_regions.sql", "011_year_copies.sql")


def _make_table(conn: psycopg.Connection[Any], table: str, chunk_interval: str, dataset: Dataset, new: bool,
                points: int | None = None) -> None:
    """The hypertable and, for a dataset without levels, its rollups: made where missing."""
    from era5etl.db.rollups import ensure_rollups

    ident = table_ident(table)
    if dataset.has_levels:
        conn.execute(_level_table_sql(table, dataset))
    else:
        conn.execute(render(SQL_DIR / "010_weather_hypertable.sql", table=ident))
    conn.execute(
        "SELECT create_hypertable(%s::regclass, by_range('time', %s::interval),"
        " create_default_indexes => false, if_not_exists => true)",
        (ident.as_string(conn), chunk_interval),
    )
    # A new table gets the columnstore where the licence has it; an existing one keeps the
    # layout it has (a table someone set to the row store stays there).
    if new and columnstore_available(conn):
        _lay_out(conn, table, dataset, points)
    if dataset.monthly:
        return  # monthly means are months already
    # New and existing tables alike: a table made before the rollups existed gets them now
    # (empty: the loader fills them as it loads), with a column per aggregate of each column.
    ensure_rollups(conn, table, columnstore_enabled(conn, table))


def discard_new(url: str, table: str) -> None:
    """Undo a table this run made and then failed to fill (its first load): the table, its rollups and
    its registration go, so a failed first load leaves nothing behind."""
    from era5etl.db import registry

    with connect(url) as conn, conn.transaction():
        drop_table(conn, table)
        registry.forget(conn, table)


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


__all__ = ["LEVEL_COLUMN", "LEVEL_ORDERBY", "ROLLUP_STEPS", "SQL_DIR", "DatabaseError", "LocalTimescale",
           "airflow_database_url", "columnstore_available", "columnstore_enabled", "connect", "database_url",
           "discard_new", "drop_table", "ensure_schema", "has_level_column", "licence", "open_connection", "redact",
           "rollup_tables",
           "split_table", "table_ident", "with_database"]
