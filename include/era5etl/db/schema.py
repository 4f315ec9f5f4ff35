"""The schema: the pipeline's own tables, a weather hypertable with its layout and rollups made (in one
transaction, registered) or checked, and a table dropped with everything made from it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql

from era5etl import settings
from era5etl.core.datasets import SINGLE_LEVELS
from era5etl.core.errors import InputError
from era5etl.core.names import check_table
from era5etl.core.tiles import TILE_COLUMN
from era5etl.db import extents, registry
from era5etl.db.connect import connect
from era5etl.db.rollups import drop_rollups, ensure_rollups
from era5etl.db.tables import (
    LEVEL_COLUMN,
    LEVEL_ORDERBY,
    SQL_DIR,
    columnstore_available,
    columnstore_enabled,
    has_level_column,
    render,
    table_ident,
)
from era5etl.db.years import drop_copy

if TYPE_CHECKING:
    from era5etl.core.datasets import Dataset


def drop_table(conn: psycopg.Connection[Any], table: str) -> None:
    """Drop a weather table, its rollups and its copy of years (the rollups first: an older version's
    monthly rollup was a continuous aggregate on the daily one, which ``DROP TABLE ... CASCADE`` alone
    refuses)."""
    drop_rollups(conn, table)
    drop_copy(conn, table)
    conn.execute(sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(table_ident(table)))
    # A table gone is no longer the pipeline's (era5_tables, db.registry): a new one of that name is new.
    if conn.execute("SELECT to_regclass('era5_tables') IS NOT NULL").fetchone() == (True,):
        conn.execute("DELETE FROM era5_tables WHERE table_name = %s", (table,))
    extents.forget(conn, table)


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
    with connect(url) as conn, conn.transaction():
        drop_table(conn, table)
        registry.forget(conn, table)
