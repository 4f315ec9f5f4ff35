"""The box of the grid points a weather table holds (``era5_extents``, sql/008), kept by the loader.

Every load widens its table's box to the download's points before it writes a row, so the box
always holds every point the table has rows of (a load that fails leaves it as wide as what it
would have written). Reads name the box of a place's or an area's table from this one row instead
of scanning the monthly rollup for its lowest and highest ids and longitude columns, a scan of a
million rows for each month of a global table (docs/benchmarks.md). A table loaded before the
record existed has none: its reads fall back to the scan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from era5etl.core.datasets import LatLonGrid
from era5etl.core.errors import InputError
from era5etl.db.facts import kept
from era5etl.db.tables import rollup_tables, table_ident


@dataclass(frozen=True)
class Extent:
    """Lowest and highest lattice id, and westmost and eastmost longitude column, of a table's points."""

    first_id: int
    last_id: int
    first_column: int
    last_column: int


def extent_of(ids: np.ndarray, grid: LatLonGrid) -> Extent:
    """The extent of lattice ids (1-based, latitude-major from the south, ``grid``'s columns)."""
    columns = (np.asarray(ids, dtype=np.int64) - 1) % grid.lon_count
    return Extent(int(ids.min()), int(ids.max()), int(columns.min()), int(columns.max()))


def union(a: Extent, b: Extent) -> Extent:
    return Extent(min(a.first_id, b.first_id), max(a.last_id, b.last_id), min(a.first_column, b.first_column),
                  max(a.last_column, b.last_column))


def scanned(conn: psycopg.Connection[Any], table: str, grid: LatLonGrid) -> Extent | None:
    """The extent of the points ``table``'s monthly rollup holds, by a scan of it (None when the table
    has no monthly rollup or it holds no row): for a table loaded before its extent was recorded."""
    try:
        monthly = rollup_tables(table)["month"]
    except InputError:
        return None
    found = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table_ident(monthly).as_string(conn),)).fetchone()
    if found != (True,):
        return None
    row = conn.execute(sql.SQL("SELECT min(location_id), max(location_id), min((location_id - 1) % {n}),"
                               " max((location_id - 1) % {n}) FROM {r}").format(
        n=sql.Literal(grid.lon_count), r=table_ident(monthly))).fetchone()
    return None if row is None or row[0] is None else Extent(*(int(v) for v in row))


def widen(conn: psycopg.Connection[Any], table: str, extent: Extent, grid: LatLonGrid) -> None:
    """The table's extent made to hold ``extent`` too. The first time, it also holds the points the
    table already has rows of (a table loaded before the record existed: its monthly rollup scanned)."""
    if recorded(conn, table) is None:
        held = scanned(conn, table, grid)
        extent = extent if held is None else union(extent, held)
    conn.execute(
        "INSERT INTO era5_extents (table_name, first_id, last_id, first_column, last_column)"
        " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (table_name) DO UPDATE SET"
        " first_id = least(era5_extents.first_id, excluded.first_id),"
        " last_id = greatest(era5_extents.last_id, excluded.last_id),"
        " first_column = least(era5_extents.first_column, excluded.first_column),"
        " last_column = greatest(era5_extents.last_column, excluded.last_column), updated_at = now()",
        (table, extent.first_id, extent.last_id, extent.first_column, extent.last_column))


@kept
def recorded(conn: psycopg.Connection[Any], table: str) -> Extent | None:
    """The table's extent, None when no load has recorded one (or before the record exists)."""
    if conn.execute("SELECT to_regclass('era5_extents') IS NOT NULL").fetchone() != (True,):
        return None
    row = conn.execute("SELECT first_id, last_id, first_column, last_column FROM era5_extents WHERE table_name = %s",
                       (table,)).fetchone()
    return None if row is None else Extent(*(int(v) for v in row))


def forget(conn: psycopg.Connection[Any], table: str) -> None:
    if conn.execute("SELECT to_regclass('era5_extents') IS NOT NULL").fetchone() == (True,):
        conn.execute("DELETE FROM era5_extents WHERE table_name = %s", (table,))


__all__ = ["Extent", "extent_of", "forget", "recorded", "scanned", "union", "widen"]
