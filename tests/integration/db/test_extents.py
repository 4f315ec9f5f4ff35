"""The box of the points a table holds, recorded by every load (db.extents): what reads name a
place's table by, equal to a scan of the monthly rollup whatever was loaded, in any order."""

from __future__ import annotations

from datetime import UTC, datetime

from psycopg import sql

from era5etl.core.datasets import SINGLE_LEVELS
from era5etl.db import connect, drop_table, table_ident
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


def test_a_land_box_from_the_antimeridian_is_recorded_over_every_column(db_url: str, table: str,  # type: ignore[no-untyped-def]
                                                                       tmp_path) -> None:
    """A month's job for ERA5-Land around the globe (here a band of 6 rows by the pole, one hour): the
    request the local CDS answers, the stager and the loader's recorded box hold all 3,600 columns,
    -179.9 to 180 (the -180 meridian), not ERA5's -179.75 onwards."""
    from era5etl import settings as config
    from era5etl.core.datasets import LAND
    from era5etl.core.months import Month
    from era5etl.pipeline.job import MonthJob
    from localcds.synth import write_download

    job = MonthJob.create(config.load(), Month.parse("2020-01"), run_id="t", area="90/-180/89.5/180",
                          dataset="land", variables="2m_temperature")
    assert str(job.area) == "90/-179.9/89.5/180"
    request = {**job.request.cds_request(), "day": ["01"], "time": ["01:00"]}
    path = write_download(request, tmp_path / "band.nc", seed=0, now=datetime(2025, 1, 1, tzinfo=UTC),
                          dataset=LAND.collection)
    code, out, err, _ = cli("load-file", str(path), "--table", table, "--dataset", "land")
    assert code == 0, out + err
    with connect(db_url) as conn:
        box = recorded(conn, table)
        assert box is not None
        assert (box.first_column, box.last_column) == (0, LAND.grid.lon_count - 1)
        assert conn.execute(sql.SQL("SELECT min(longitude), max(longitude) FROM {}").format(
            table_ident(table))).fetchone() == (-179.9, 180.0)
