"""The reads people make, timed (read.timing.measure) on a real sample loaded into the test server: each
read's row count is the table's own (a year of one point is its hours, an hour slice its points), its
timings ordered, and an empty table refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from era5etl.load import load
from era5etl.read.timing import TARGETS_MS, measure
from era5etl.stage import open_download

pytestmark = pytest.mark.integration

SAMPLE = "newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc"  # 5 x 5 points, 288 hours


def test_each_read_counts_the_tables_rows_and_is_timed(db_url: str, table: str, samples: Path) -> None:
    with open_download([samples / SAMPLE]) as staged:
        load(db_url, table, staged)
        hours, points = len(staged.valid_time), staged.points
    figures = {f.query: f for f in measure(db_url, table, runs=3)}
    assert list(figures) == list(TARGETS_MS)
    assert figures["place, one year (hourly)"].rows == hours  # less than a year loaded: all of it
    assert figures["place, all years (hourly)"].rows == hours
    assert figures["hour slice (all points)"].rows == points == 25
    for f in figures.values():
        assert f.runs == 3 and 0 < f.min_ms <= f.median_ms <= f.max_ms, f


def test_an_empty_table_is_refused(db_url: str, table: str) -> None:
    with pytest.raises(ValueError, match="is empty: load something first"):
        measure(db_url, table, runs=1)
