"""The month that makes its year whole copies the year place-major (``pipeline.steps.years_step``,
``ERA5_YEAR_COPIES=auto``): twelve months of one point through the real pipeline (the local CDS
through ``cdsapi``, load, validation, compression), a chunk a month; the copy holds exactly the
year's rows, and a rerun of one of its months forgets the year until it is whole again."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from era5etl import settings
from era5etl.core.months import Month
from era5etl.db import connect
from era5etl.db.years import copied_years, copy_name
from era5etl.fetch import Credentials
from era5etl.pipeline.job import MonthJob
from era5etl.pipeline.steps import run_month
from tests.integration.helpers import forget

AREA = "46/7/46/7"  # one grid point: 744 rows a 31-day month


@pytest.fixture
def table(db_url: str) -> Iterator[str]:
    name = f"yc_{uuid.uuid4().hex[:10]}"
    yield name
    forget(db_url, name)


def _month(url: str, cds: Any, table: str, month: str, staging: Path, run: str = "") -> dict[str, Any]:
    job = MonthJob.create(settings.load(), Month.parse(month), run_id=f"years_{month}{run}", area=AREA, table=table)
    summary = run_month(url, job, Credentials(cds.url, cds.key))
    assert summary["success"]
    return summary


def test_the_month_that_makes_a_year_whole_copies_it(db_url: str, cds: Any, table: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ERA5_STAGING_DIR", str(tmp_path))
    monkeypatch.setenv("ERA5_CHUNK_ROWS", "744")  # a month a chunk, as a global table has
    steps = {}
    for m in range(1, 13):
        steps[m] = [s["task"] for s in _month(db_url, cds, table, f"2023-{m:02d}", tmp_path)["steps"]]
    assert all("years" not in s for m, s in steps.items() if m < 12)
    assert steps[12][-1] == "years"
    with connect(db_url) as conn:
        assert copied_years(conn, table) == [2023]
        for one, other in ((f"{table} WHERE time < '2024-01-01'", copy_name(table)), (copy_name(table), table)):
            assert conn.execute(f"SELECT count(*) FROM (SELECT * FROM {one} EXCEPT ALL SELECT * FROM {other}) d"
                                ).fetchone() == (0,)
        assert conn.execute(f"SELECT count(*) FROM {copy_name(table)}").fetchone() == (8760,)
        figures = conn.execute("SELECT rows FROM era5_metrics WHERE table_name = %s AND task = 'years'",
                               (table,)).fetchall()
    assert figures == [(8760,)]

    # June again: the year leaves the copy's record while its month is rewritten, and the month,
    # validated again, makes the year whole again: copied anew.
    steps_again = [s["task"] for s in _month(db_url, cds, table, "2023-06", tmp_path, "_again")["steps"]]
    assert steps_again[-1] == "years"
    with connect(db_url) as conn:
        assert copied_years(conn, table) == [2023]
        assert conn.execute(f"SELECT count(*) FROM {copy_name(table)}").fetchone() == (8760,)

    monkeypatch.setenv("ERA5_YEAR_COPIES", "off")
    steps_off = [s["task"] for s in _month(db_url, cds, table, "2023-07", tmp_path, "_off")["steps"]]
    assert "years" not in steps_off
    with connect(db_url) as conn:  # July rewritten: forgotten, and not copied with the setting off
        assert copied_years(conn, table) == []
