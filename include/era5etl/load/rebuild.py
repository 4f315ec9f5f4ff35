"""Rollups rebuilt from the hourly rows, all at once: for a table whose rollups were made by an
earlier version of the pipeline (continuous aggregates refreshed after each month), or lost.

The loader keeps the rollups as it loads; this is the one-off path, SQL over the hourly rows a month
at a time (``db.rollups.daily_from_hourly``), then the months from the days (``load.monthly``). It
costs what aggregating the table costs in PostgreSQL (a global month: minutes), so it is a command a
user runs once, never part of a load.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

import numpy as np
from psycopg import sql

from era5etl.core.datasets import PRESSURE_LEVELS
from era5etl.core.months import Month
from era5etl.db import columnstore_available, columnstore_enabled, connect, has_level_column, table_ident
from era5etl.db.registry import require_ours
from era5etl.db.rollups import daily_from_hourly, data_columns, drop_rollups, ensure_rollups
from era5etl.db.years import drop_daily_copy
from era5etl.load.chunks import daily_rollup_chunks
from era5etl.load.monthly import write_monthly
from era5etl.load.rollup import MonthlyRollup
from era5etl.load.writer import Footprint, copy_settings, rollups_in_tiles

log = logging.getLogger(__name__)

# The whole globe as a load's footprint: every row of the table (its longitude columns are every column of
# any lattice's ids).
_WORLD = Footprint(90.0, -180.0, -90.0, 180.0)


def rebuild(url: str, table: str, on_month: Callable[[str, int], None] | None = None) -> dict[str, int]:
    """Drop ``table``'s rollups, make them again and fill them from its hourly rows; returns the
    months, daily and monthly rows written."""
    with connect(url, autocommit=True) as conn:
        require_ours(conn, table, "rollups rebuild")  # never another's table, nor its <table>_daily
        drop_rollups(conn, table)
        drop_daily_copy(conn, table)  # made from the rollup dropped: copied again by the next `table years`
        ensure_rollups(conn, table, columnstore_enabled(conn, table))
        data = tuple(data_columns(conn, table))
        levels = bool(has_level_column(conn, table))
        found = conn.execute(sql.SQL("SELECT min(time), max(time) FROM {}").format(table_ident(table))).fetchone()
    out = {"months": 0, "daily_rows": 0, "monthly_rows": 0}
    if not found or found[0] is None:
        return out
    months = [Month.of(found[0])]
    while months[-1].end <= found[1]:
        months.append(months[-1].next())
    _daily_chunks(url, table, found[0], months)
    settings, _ = copy_settings(url, table)
    # On pressure levels every level ERA5 has: a rollup row per (bucket, level, point).
    world = replace(_WORLD, rollups_tiled=rollups_in_tiles(url, table), levels=PRESSURE_LEVELS.levels if levels else ())
    for each in months:
        month, after, days = each.start, each.end, each.day_starts()
        with connect(url) as conn, conn.transaction():
            params = {**world.rollup_params(), "first": month, "last": after, "days": days}
            cur = conn.execute(daily_from_hourly(table, data, world.rollups_tiled, levels), params)
            daily = max(cur.rowcount, 0)
        if daily:
            monthly, _ = write_monthly(url, table, world, [np.datetime64(month.replace(tzinfo=None), "M")],
                                       MonthlyRollup(), None, data, settings)
            out["months"] += 1
            out["daily_rows"] += daily
            out["monthly_rows"] += monthly
            if on_month:
                on_month(str(each), daily)
    return out


def _daily_chunks(url: str, table: str, first: datetime, months: list[Month]) -> None:
    """The daily rollup's chunks over ``months``, made as a load makes them
    (``load.chunks.daily_rollup_chunks``: a decade where one fits, for the rows of the table's first
    hour, ``first``); an INSERT would make one of the hourly table's interval each, a chunk a day."""
    with connect(url) as conn:
        chunk_api = columnstore_available(conn)
        row = conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE time = %s").format(table_ident(table)),
                           (first,)).fetchone()
    daily_rollup_chunks(url, table, [(m.start, m.end) for m in months], chunk_api, int(row[0]) if row else 0)
