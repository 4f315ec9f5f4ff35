"""A weather table's rollups in the database: making them, their columns, and the SQL that computes
them from the hourly rows where the loader cannot (:mod:`era5etl.load.rollup` computes them in the
client for every whole UTC day it loads; :mod:`era5etl.core.rollups` says which aggregates).

* ``ensure_rollups``: ``<table>_daily`` and ``<table>_monthly`` as hypertables on ``bucket``
  (sql/030_rollups.sql), in the columnstore where the licence has it, with a value column for each
  aggregate of each data column the table has (added when the table gains a column).
* ``daily_from_hourly``: the statement that recomputes a day's rollup rows inside a box from the
  hourly rows, for a day a load holds only some hours of (a file of 3-hourly steps, a file cut
  mid-day) and to rebuild rollups made by an older version of the pipeline.
* ``months_from_daily``: the statement that aggregates daily rows to partial monthly figures, for the
  days of a month a load did not aggregate itself.

Rollups made by versions before 0.2 were continuous aggregates refreshed after each month. They are
recognised and refused with the command that rebuilds them (``python -m era5etl rollups rebuild``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import psycopg
from psycopg import sql

from era5etl.core.datasets import LatLonGrid
from era5etl.core.errors import InputError
from era5etl.core.rollups import KEY_COLUMNS, rolled_up, sources, value_columns
from era5etl.core.tiles import TILE_COLUMN
from era5etl.db.facts import kept
from era5etl.db.layout import has_tile_column
from era5etl.db.tables import LEVEL_COLUMN, SQL_DIR, has_level_column, render, rollup_tables, split_table, table_ident

log = logging.getLogger(__name__)

# The monthly rollup's chunks: ten years, so a point's series over decades plans a few chunks.
MONTHLY_CHUNK = timedelta(days=3650)
ORDER = "bucket, location_id"
LEVEL_ORDER = "bucket, level, location_id"  # a table on pressure levels' rollups: as its rows go (time, level, id)
TILES_ORDER = "location_id, bucket"  # a tiled table's rollups (db.layout)


class LegacyRollups(InputError):
    """The table's rollups are an older version's continuous aggregates."""


@kept
def data_columns(conn: psycopg.Connection[Any], table: str) -> list[str]:
    """The table's data columns (every float4 column but latitude and longitude), in column order."""
    rows = conn.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attnum > 0 AND NOT attisdropped"
        " AND atttypid = 'real'::regtype AND attname NOT IN ('latitude', 'longitude') ORDER BY attnum",
        (table_ident(table).as_string(conn),)).fetchall()
    return [str(r[0]) for r in rows]


def _columns(conn: psycopg.Connection[Any], relation: str) -> list[str]:
    rows = conn.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attnum > 0 AND NOT attisdropped"
        " ORDER BY attnum", (table_ident(relation).as_string(conn),)).fetchall()
    return [str(r[0]) for r in rows]


def is_legacy(conn: psycopg.Connection[Any], table: str) -> bool:
    """Whether ``table``'s daily rollup is an older version's continuous aggregate (a view)."""
    row = conn.execute("SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)",
                       (table_ident(rollup_tables(table)["day"]).as_string(conn),)).fetchone()
    return row is not None and row[0] == "v"


def ensure_rollups(conn: psycopg.Connection[Any], table: str, columnstore: bool) -> list[str]:
    """The table's two rollups, made when missing, and a value column for each aggregate of each of
    its data columns; returns the value columns added. LegacyRollups for an older version's. The
    daily rollup's chunk interval is the hourly table's, so where chunks are made by interval (the
    Apache licence) a day's rollup rows fall in the chunk of the day's hourly rows."""
    names = rollup_tables(table)
    if is_legacy(conn, table):
        raise LegacyRollups(
            f"{table}'s rollups are continuous aggregates made by an earlier version of era5etl; the loader now "
            f"writes them itself. Rebuild them once from the hourly rows with `python -m era5etl rollups rebuild "
            f"--table {table}` (it drops {names['day']} and {names['month']} and refills them)")
    exists = {step: conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table_ident(n).as_string(conn),)).fetchone()
              for step, n in names.items()}
    tiled = columnstore and has_tile_column(conn, table)
    levels = bool(has_level_column(conn, table))
    if not all(e == (True,) for e in exists.values()):
        if any(e == (True,) for e in exists.values()):
            raise InputError(f"{table} has only one of its rollups ({', '.join(names.values())}); drop it "
                             "(`python -m era5etl rollups rebuild` makes both again)")
        conn.execute(render(SQL_DIR / "030_rollups.sql", daily=table_ident(names["day"]),
                             monthly=table_ident(names["month"])))
        schema, name = split_table(table)
        found = conn.execute(
            "SELECT time_interval FROM timescaledb_information.dimensions WHERE hypertable_schema ="
            " COALESCE(%s, current_schema()) AND hypertable_name = %s AND column_name = 'time'",
            (schema, name)).fetchone()
        chunk_interval = found[0] if found and found[0] is not None else timedelta(days=1)
        for step, interval in (("day", chunk_interval), ("month", MONTHLY_CHUNK)):
            ident = table_ident(names[step])
            if levels:  # a row per (bucket, level, point): the level is a key, as in the hourly table
                conn.execute(sql.SQL("ALTER TABLE {} ADD COLUMN {} smallint NOT NULL").format(
                    ident, sql.Identifier(LEVEL_COLUMN)))
            conn.execute("SELECT create_hypertable(%s::regclass, by_range('bucket', %s::interval),"
                         " create_default_indexes => false)", (ident.as_string(conn), interval))
            if columnstore and tiled:
                # As the hourly table (db.layout): a place's rollup rows in its tile's batches.
                conn.execute(sql.SQL("ALTER TABLE {} ADD COLUMN {} int").format(ident, sql.Identifier(TILE_COLUMN)))
                conn.execute(render(SQL_DIR / "020_columnstore.sql", table=ident, segmentby=sql.Literal(TILE_COLUMN),
                                     orderby=sql.Literal(TILES_ORDER)))
            elif columnstore:
                conn.execute(render(SQL_DIR / "020_columnstore.sql", table=ident, segmentby=sql.Literal(""),
                                     orderby=sql.Literal(LEVEL_ORDER if levels else ORDER)))
            else:
                # The row store: one place's history and one bucket's map each need an index.
                conn.execute(sql.SQL("CREATE INDEX ON {} ({})").format(
                    ident, sql.SQL("location_id, level, bucket" if levels else "location_id, bucket")))
                conn.execute(sql.SQL("CREATE INDEX ON {} (bucket)").format(ident))
    wanted = value_columns(data_columns(conn, table))
    added: list[str] = []
    for step in ("day", "month"):
        have = set(_columns(conn, names[step]))
        for column in wanted:
            if column not in have:
                conn.execute(sql.SQL("ALTER TABLE {} ADD COLUMN {} real").format(
                    table_ident(names[step]), sql.Identifier(column)))
                if step == "day":
                    added.append(column)
    return added


# The rows of the points between %(south)s and %(north)s.
LATITUDES = sql.SQL("latitude BETWEEN %(south)s AND %(north)s")


def box_filter(grid: LatLonGrid) -> sql.Composed:
    """The rollup rows of the points inside %(south)s..%(north)s and the longitude columns
    %(col0)s..%(col1)s of ``grid`` (:func:`box_params`): a rollup has no longitude, its id fixes it."""
    return sql.SQL("{} AND (location_id - 1) %% {} BETWEEN %(col0)s AND %(col1)s").format(
        LATITUDES, sql.Literal(grid.lon_count))


def box_params(grid: LatLonGrid, south: float, north: float, west: float, east: float) -> dict[str, Any]:
    """The parameters of :func:`box_filter` for a box in degrees (as the hourly rows hold them)."""
    col0, col1 = grid.column_range(west, east)
    return {"south": south, "north": north, "col0": col0, "col1": col1}


def rollup_columns(conn: psycopg.Connection[Any], table: str) -> tuple[str, ...]:
    """The value columns the rollups of ``table`` hold for its data columns."""
    return value_columns(data_columns(conn, table))


def _aggregate(variable: str, agg: str) -> sql.Composable:
    """The SQL aggregate of hourly rows giving rollup column ``<variable>_<agg>``, in float8, as float4."""
    parts = sources(variable)
    if len(parts) == 2:
        u, v = (sql.Identifier(p) for p in parts)
        value: sql.Composable = sql.SQL("sqrt({}::float8 ^ 2 + {}::float8 ^ 2)").format(u, v)
    else:
        value = sql.SQL("{}::float8").format(sql.Identifier(parts[0]))
    fn = {"min": "min", "max": "max", "mean": "avg", "sum": "sum"}[agg]
    return sql.SQL("{}({})::float4").format(sql.SQL(fn), value)


def daily_from_hourly(table: str, data: Sequence[str], tiled: bool = False, levels: bool = False) -> sql.Composed:
    """INSERT of the daily rollup rows of the UTC days in %(days)s (timestamptz[]) for the points in
    the box %(south)s..%(north)s, %(west)s..%(east)s, aggregated from the hourly rows of ``table``
    (whose data columns are ``data``; ``tiled``: the daily rollup is laid out in tiles, each row with
    its point's tile). Rows without a location_id (a grid off the 0.25 degree lattice) have no grid
    point to roll up to and are left out. ``levels``: the table is on pressure levels, a row per
    (day, level, point), of the levels in %(levels)s only."""
    rolled = rolled_up(data)
    values = [f"{variable}_{agg}" for variable, aggs in rolled.items() for agg in aggs]
    exprs = [_aggregate(variable, agg) for variable, aggs in rolled.items() for agg in aggs]
    tile = (TILE_COLUMN,) if tiled else ()
    level = (LEVEL_COLUMN,) if levels else ()
    return sql.SQL(
        "INSERT INTO {daily} ({columns}) SELECT time_bucket('1 day'::interval, time), location_id, {level}"
        "min(latitude), count(*), {tile}{exprs} FROM {table} WHERE location_id IS NOT NULL"
        " AND time >= %(first)s AND time < %(last)s AND time_bucket('1 day'::interval, time) = ANY(%(days)s)"
        " AND latitude BETWEEN %(south)s AND %(north)s AND longitude BETWEEN %(west)s AND %(east)s{filter}"
        " GROUP BY {keys} ORDER BY {keys}").format(
        daily=table_ident(rollup_tables(table)["day"]),
        columns=sql.SQL(", ").join(map(sql.Identifier, (*KEY_COLUMNS[:2], *level, *KEY_COLUMNS[2:], *tile, *values))),
        level=sql.SQL("level, " if levels else ""), keys=sql.SQL("1, 3, 2" if levels else "1, 2"),
        filter=level_filter(levels),
        tile=sql.SQL("era5_tile(location_id), " if tiled else ""), exprs=sql.SQL(", ").join(exprs),
        table=table_ident(table))


def other_hours(relation: sql.Composable, gaps: int, levels: bool = False) -> sql.Composed:
    """SELECT of whether ``relation`` (a weather table, or one of its chunks) holds a row inside the box
    %(south)s..%(north)s, %(west)s..%(east)s (of the levels in %(levels)s on pressure levels) in one of
    ``gaps`` time ranges, each open at both ends: %(lo0)s < time < %(hi0)s, and so on, between
    %(first)s and %(last)s. A day's gaps between the hours a load brings say whether the table holds
    any other hour of that day. Ranges, not ``time <> ALL(hours)``: the columnstore skips every batch
    whose time range lies outside them (measured on a global day, 24.9M rows, none outside the load's
    24 hours: 11-39 ms against 0.3-2.1 s)."""
    ranges = _ranges("time", ">", gaps)
    return sql.SQL(
        "SELECT EXISTS (SELECT 1 FROM {table} WHERE time >= %(first)s AND time < %(last)s AND ({ranges})"
        " AND latitude BETWEEN %(south)s AND %(north)s"
        " AND longitude BETWEEN %(west)s AND %(east)s{filter})").format(
        table=relation, ranges=ranges, filter=level_filter(levels))


def other_days(table: str, gaps: int, grid: LatLonGrid, levels: bool = False) -> sql.Composed:
    """SELECT of whether the daily rollup of ``table`` holds a row inside the box (:func:`box_filter` on
    ``grid``; of the levels in %(levels)s on pressure levels) on a day in one of ``gaps`` ranges
    %(lo0)s <= bucket < %(hi0)s, and so on: whether a month holds days besides a load's. Ranges, as in
    :func:`other_hours`, so the columnstore skips the batches of the load's own days."""
    ranges = _ranges("bucket", ">=", gaps)
    return sql.SQL("SELECT EXISTS (SELECT 1 FROM {daily} WHERE ({ranges}) AND {box}{filter})").format(
        daily=table_ident(rollup_tables(table)["day"]), ranges=ranges, box=box_filter(grid),
        filter=level_filter(levels))


def _ranges(column: str, low: str, gaps: int) -> sql.Composed:
    """``gaps`` time ranges of ``column`` ORed: %(lo0)s ``low`` column < %(hi0)s, and so on (``low``: ">" or
    ">=")."""
    return sql.SQL(" OR ").join(
        sql.SQL("({c} {low} {lo} AND {c} < {hi})").format(c=sql.Identifier(column), low=sql.SQL(low),
                                                         lo=sql.Placeholder(f"lo{i}"), hi=sql.Placeholder(f"hi{i}"))
        for i in range(gaps))


def level_filter(levels: bool) -> sql.Composable:
    """The rows of the levels in %(levels)s, for a table on pressure levels (nothing otherwise)."""
    return sql.SQL(" AND level = ANY(%(levels)s)") if levels else sql.SQL("")


def months_from_daily(table: str, data: Sequence[str], grid: LatLonGrid, levels: bool = False
                      ) -> tuple[sql.Composed, list[str]]:
    """SELECT of partial monthly figures per (month, location_id) from the daily rollup rows in the
    months %(months)s (timestamptz[]) inside the box (:func:`box_filter` on ``grid``), leaving out the
    days %(skip)s (the days the loader aggregated itself). Returns the statement and the name of each
    output column after (month, location_id, latitude, hours): per variable and aggregate ``min``/``max`` the
    extreme, ``mean`` the hour-weighted sum and its weight, ``sum`` the sum and how many days had
    one. A daily mean is weighted by its day's hours: exact where a variable is present in all or
    none of a day's hours, as ERA5 downloads are. ``levels``: the table is on pressure levels, the
    second column is then the level (after the month) and only the levels in %(levels)s are read."""
    exprs: list[sql.Composable] = []
    names: list[str] = []
    for variable, aggs in rolled_up(data).items():
        for agg in aggs:
            col = sql.Identifier(f"{variable}_{agg}")
            if agg in ("min", "max"):
                exprs.append(sql.SQL("{}({})").format(sql.SQL(agg), col))
                names.append(f"{variable}_{agg}")
            elif agg == "mean":
                exprs.append(sql.SQL("sum({}::float8 * hours)").format(col))
                exprs.append(sql.SQL("coalesce(sum(hours) FILTER (WHERE {} IS NOT NULL), 0)").format(col))
                names += [f"{variable}_mean.total", f"{variable}_mean.count"]
            else:
                exprs.append(sql.SQL("sum({}::float8)").format(col))
                exprs.append(sql.SQL("count({})").format(col))
                names += [f"{variable}_sum.total", f"{variable}_sum.count"]
    statement = sql.SQL(
        "SELECT time_bucket('1 month'::interval, bucket), {level}location_id, min(latitude), sum(hours),"
        " {exprs} FROM {daily} WHERE bucket >= %(first)s AND bucket < %(last)s"
        " AND time_bucket('1 month'::interval, bucket) = ANY(%(months)s) AND NOT (bucket = ANY(%(skip)s))"
        " AND {box}{filter} GROUP BY {keys} ORDER BY {keys}").format(
        exprs=sql.SQL(", ").join(exprs), box=box_filter(grid), daily=table_ident(rollup_tables(table)["day"]),
        level=sql.SQL("level, " if levels else ""), filter=level_filter(levels),
        keys=sql.SQL("1, 2, 3" if levels else "1, 2"))
    return statement, names


def drop_rollups(conn: psycopg.Connection[Any], table: str) -> None:
    """Drop the rollups of ``table``, whichever kind (a legacy monthly continuous aggregate depends on
    the daily one, so the monthly goes first)."""
    try:
        names = rollup_tables(table)
    except InputError:  # a name too long to have rollups
        return
    for step in ("month", "day"):
        kind = conn.execute("SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)",
                            (table_ident(names[step]).as_string(conn),)).fetchone()
        if kind is not None:
            what = sql.SQL("MATERIALIZED VIEW" if kind[0] == "v" else "TABLE")
            conn.execute(sql.SQL("DROP {} IF EXISTS {} CASCADE").format(what, table_ident(names[step])))
