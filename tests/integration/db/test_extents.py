"""The box of the points a table holds, recorded by every load (db.extents): what reads name a
place's table by, equal to a scan of the monthly rollup whatever was loaded, in any order."""

from __future__ import annotations

from era5etl.core.datasets import SINGLE_LEVELS
from era5etl.db import connect, drop_table
from era5etl.db.extents import recorded, scanned
from era5etl.read.points import loaded_bounds, nearest_point

from ..helpers import cli

GRID = SINGLE_LEVELS.grid
# 25 points, 39.5..40.5 N, 8.5..7.5 W; and 45 points of southern Brazil, 28..26 S, 50..49 W.
PORTUGAL = "newcds_accum_tp_2025-05_hourly_expver0005.nc"
BRAZIL = "grib1_tp_5x9_2023-01_to_2023-11_hourly_expver0001_0005.grib"


def _load(samples, table: str, name: str) -> None:  # type: ignore[no-untyped-def]
    code, out, err, _ = cli("load-file", str(samples / name), "--table", table)
    assert code == 0, out + err


def test_each_load_widens_the_extent_and_reads_name_the_box_by_it(db_url: str, table: str, samples) -> None:  # type: ignore[no-untyped-def]
    _load(samples, table, PORTUGAL)
    with connect(db_url) as conn:
        assert recorded(conn, table) == scanned(conn, table, GRID)
        assert str(loaded_bounds(conn, table)) == "40.5/-8.5/39.5/-7.5"
    _load(samples, table, BRAZIL)
    with connect(db_url) as conn:
        assert recorded(conn, table) == scanned(conn, table, GRID)  # the union of both boxes
        assert str(loaded_bounds(conn, table)) == "40.5/-50/-28/-7.5"
        assert (nearest_point(conn, table, -27.1, -49.4).latitude, nearest_point(conn, table, 40.0, -8.0).latitude) == (
            -27.0, 40.0)


def test_a_table_loaded_before_the_record_reads_by_the_scan_and_its_next_load_keeps_every_point(
        db_url: str, table: str, samples) -> None:  # type: ignore[no-untyped-def]
    _load(samples, table, BRAZIL)
    with connect(db_url, autocommit=True) as conn:
        conn.execute("DELETE FROM era5_extents WHERE table_name = %s", (table,))  # as a table of an older version
        assert recorded(conn, table) is None
        assert str(loaded_bounds(conn, table)) == "-26/-50/-28/-49"  # scanned
    _load(samples, table, PORTUGAL)
    with connect(db_url, autocommit=True) as conn:
        assert recorded(conn, table) == scanned(conn, table, GRID)  # the older points kept, not only the new box
        drop_table(conn, table)
        assert recorded(conn, table) is None
