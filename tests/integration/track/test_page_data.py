"""What the page reads from the real database: only the pipeline's tables, and a fetch's download figures.

* Table chips: the ledger can name tables that no longer exist (dropped by a test or a user) or that
  are not the pipeline's (a plain table of the same name); the page offers only ledger tables that
  exist as hypertables with the weather table's columns.
* A month whose fetch was retried, or rerun, after the download completed records a second fetch
  row that reused the staged file: its bytes in almost no time (issue 13: "80.6 MB/s in 0.00 s").
  The page shows the attempt that downloaded.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from era5etl.core.months import Month
from era5etl.db import connect, drop_table
from era5etl.report.data import load_dashboard
from era5etl.report.page import render_page
from era5etl.serve.extent import default_table
from era5etl.track import ledger, metrics
from era5etl.track.metrics import StepFigures

pytestmark = pytest.mark.integration

AREA = "46/7/45/8"
MONTH = Month(2022, 3)


@pytest.fixture
def leftovers(db_url: str) -> Iterator[tuple[str, str]]:
    """A ledger row for a table that does not exist, and one for a plain (non-hypertable) table."""
    gone, plain = f"gone_{uuid.uuid4().hex[:8]}", f"plain_{uuid.uuid4().hex[:8]}"
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f'CREATE TABLE "{plain}" (time timestamptz, location_id int, latitude real, longitude real)')
    for name in (gone, plain):
        ledger.set_state(db_url, table=name, month=MONTH, area=AREA, grid="0.25", state="loaded", run_id="r")
    yield gone, plain
    with connect(db_url, autocommit=True) as conn:
        drop_table(conn, plain)
        conn.execute("DELETE FROM era5_months WHERE table_name = ANY(%s)", ([gone, plain],))


def test_the_chips_offer_only_existing_pipeline_hypertables(db_url: str, table: str,
                                                            leftovers: tuple[str, str]) -> None:
    # Validated after the leftovers were written: the most recently validated month of any table in
    # the shared database (other tests' tables validate months too), so the default.
    ledger.set_state(db_url, table=table, month=MONTH, area=AREA, grid="0.25", state="validated", run_id="r")
    with connect(db_url) as conn:
        known = {r[0] for r in conn.execute("SELECT DISTINCT table_name FROM era5_months").fetchall()}
        shown = {r["table_name"] for r in ledger.targets(conn)}
        # The leftovers were updated after it, yet the default table is the pipeline's.
        assert default_table(conn) == table
    assert {table, *leftovers} <= known
    assert table in shown and not shown & set(leftovers)
    dashboard = load_dashboard(db_url)
    assert (dashboard.table, dashboard.area) == (table, AREA)
    assert {t.table for t in dashboard.targets} == shown
    html = render_page(dashboard)
    for name in leftovers:
        assert name not in html


def _fetch(db_url: str, table: str, run_id: str, *, seconds: float, reused: bool) -> None:
    figures = StepFigures("fetch", bytes=80_600_000, seconds=seconds, detail={"reused": reused, "parts": 1})
    metrics.record(db_url, run_id=run_id, month=MONTH, table=table, area=AREA, figures=figures)


def test_a_retried_fetch_shows_the_download_not_the_reuse(db_url: str, table: str) -> None:
    ledger.set_state(db_url, table=table, month=MONTH, area=AREA, grid="0.25", state="loaded", run_id="run1")
    _fetch(db_url, table, "run1", seconds=8.0, reused=False)  # the attempt that transferred the bytes
    _fetch(db_url, table, "run1", seconds=0.001, reused=True)  # its retry found the download complete
    dashboard = load_dashboard(db_url, table, AREA)
    month = dashboard.month(MONTH.start.date())
    assert month is not None
    fetch = month.tasks["fetch"]
    assert (fetch.seconds, fetch.reused) == (8.0, False)
    assert fetch.bytes_per_s == pytest.approx(10_075_000)
    html = render_page(dashboard)
    assert "10.1 MB/s" in html and "80.6 GB/s" not in html

    # A later real download (a refetch) is shown in its turn ...
    _fetch(db_url, table, "run2", seconds=4.0, reused=False)
    month = load_dashboard(db_url, table, AREA).month(MONTH.start.date())
    assert month is not None and month.tasks["fetch"].seconds == 4.0

    # ... and a month only ever reused (staged elsewhere) shows what it has.
    other = Month(2022, 4)
    ledger.set_state(db_url, table=table, month=other, area=AREA, grid="0.25", state="loaded", run_id="run3")
    metrics.record(db_url, run_id="run3", month=other, table=table, area=AREA,
                   figures=StepFigures("fetch", bytes=1_000, seconds=0.002, detail={"reused": True}))
    month = load_dashboard(db_url, table, AREA).month(other.start.date())
    assert month is not None and month.tasks["fetch"].reused
