"""With ``ERA5_CATCHUP=true`` the schedule catches up month by month from the start month, on a running Airflow.

A stack of its own (``tests/e2e/stack.py``), started as a user starts a new installation: with
``ERA5_START_MONTH`` three months back and catch-up on (it is off by default: see
``test_first_start.py`` for a backfill that loads nothing else). Unpausing the DAG is all it takes:
the scheduler creates one ``scheduled`` run per month since then, each named by its month
(``scheduled__YYYY-MM-01...``) with exactly that month as its data interval; each finished month is
loaded and validated exactly, and the month under way has a run whose fetch waits, deferred, for
its publication.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from era5etl.core.months import Month
from tests.e2e.stack import AirflowStack, running_stack

pytestmark = pytest.mark.e2e

NOW = Month.of(datetime.now(UTC))


MONTHS = [NOW.plus(-3), NOW.plus(-2), NOW.plus(-1)]


@pytest.fixture(scope="module")
def catchup_stack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[AirflowStack]:
    with running_stack(request, tmp_path_factory, ERA5_START_MONTH=str(MONTHS[0]),
                       ERA5_CATCHUP="true") as stack:
        yield stack


def test_the_schedule_catches_up_month_by_month_from_the_start_month(catchup_stack: AirflowStack) -> None:
    stack = catchup_stack
    assert stack.is_paused() and stack.runs() == {}  # a new installation: nothing runs until unpaused
    stack.unpause()
    runs = stack.wait_runs([str(m) for m in MONTHS], {"success"}, timeout=420)
    assert {r["run_type"] for r in runs.values()} == {"scheduled"}, runs
    for m in MONTHS:
        run = runs[str(m)]
        assert run["dag_run_id"] == f"scheduled__{m.start.isoformat()}", run
        assert (run["data_interval_start"][:10], run["data_interval_end"][:10]) == (
            m.start.date().isoformat(), m.end.date().isoformat()), run
        # Every task ran (a run whose tasks were left out would succeed too, with nothing loaded).
        tis = stack.task_instances(run["dag_run_id"])
        assert {t: ti["state"] for t, ti in tis.items()} == {t: "success" for t in (
            "fetch", "stage", "load", "validate")}, tis
        stack.assert_month_exact(str(m))
    # The month under way: its run exists (named by it) and its fetch waits for the month's publication.
    runs = stack.runs()
    assert set(runs) == {str(m) for m in [*MONTHS, NOW]}, runs
    assert runs[str(NOW)]["state"] == "running", runs[str(NOW)]
    waiting = stack.task_instances(runs[str(NOW)]["dag_run_id"])
    assert {t: ti["state"] for t, ti in waiting.items()} == {
        "fetch": "deferred", "stage": None, "load": None, "validate": None}, waiting
    assert stack.rows(str(NOW)) == (0, 0)
