"""A month's rollups checked against its hourly rows (read.rollup_check) on a real sample loaded into
the test server: right after the load they match; an hourly value changed behind the rollups' back and
a monthly value changed are each named, with the column and the day."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from psycopg import sql

from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.db import connect, rollup_tables
from era5etl.load import load
from era5etl.read.rollup_check import area_ids, check
from era5etl.stage import open_download

pytestmark = pytest.mark.integration

SAMPLE = "grib1_tp_5x9_2023-01_to_2023-11_hourly_expver0001_0005.grib"  # every hour of 2023-01 to 2023-11-21
AREA = Area.parse("-26/-50/-28/-49")  # the sample's 9 x 5 points
MARCH = Month(2023, 3)


def test_the_area_ids_are_its_lattice_points() -> None:
    ids = area_ids(AREA, Grid())
    assert ids.size == 45 and (ids[:-1] < ids[1:]).all()


def test_loaded_rollups_match_and_changes_behind_their_back_are_named(db_url: str, table: str,
                                                                      samples: Path) -> None:
    with open_download([samples / SAMPLE]) as staged:
        load(db_url, table, staged)
    checked = check(db_url, table, MARCH, AREA, Grid())
    assert checked.ok, checked.mismatches
    assert (checked.points, checked.days, checked.hourly_rows, checked.daily_rows, checked.monthly_rows) == \
        (45, 31, 45 * 31 * 24, 45 * 31, 45)
    # November is loaded up to the 21st: not a whole month of daily rows, and the check says so.
    november = check(db_url, table, Month(2023, 11), AREA, Grid())
    assert any("not 45 points x 30 days" in m for m in november.mismatches), november.mismatches

    with connect(db_url, autocommit=True) as conn:
        conn.execute(sql.SQL("UPDATE {} SET total_precipitation = total_precipitation + 30 WHERE time = %s").format(
            sql.Identifier(table)), (datetime(2023, 3, 1, 6, tzinfo=UTC),))
    checked = check(db_url, table, MARCH, AREA, Grid())
    assert any("total_precipitation_sum on 2023-03-01 differs from the hourly rows at 45 point(s)" in m
               for m in checked.mismatches), checked.mismatches

    with connect(db_url, autocommit=True) as conn:
        conn.execute(sql.SQL("UPDATE {} SET total_precipitation_sum = total_precipitation_sum + 1").format(
            sql.Identifier(rollup_tables(table)["month"])))
    checked = check(db_url, table, MARCH, AREA, Grid())
    assert any("monthly rollup's total_precipitation_sum differs" in m for m in checked.mismatches), \
        checked.mismatches
