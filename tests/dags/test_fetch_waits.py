"""The DAG's fetch task waits for its month's publication itself: deferred on Airflow's DateTimeTrigger
while the month is not out (no worker slot, no timeout), straight on to the CDS once it is.

The operator is the one the DAG file builds, run with a task context as the task runner gives it; the
published month is fetched for real from the local CDS into a staging folder of the test.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from era5etl.core.months import Month
from era5etl.pipeline.schedule import publication_target

AREA = "46/7/45.75/7.25"  # 2 x 2 points: a month's download is small


@pytest.fixture(scope="module")
def fetch() -> Any:
    from airflow.dag_processing.dagbag import DagBag

    from tests.dags.test_integrity import DAG_FILE

    bag = DagBag(dag_folder=str(DAG_FILE.parent))
    return bag.dags["era5_monthly"].get_task("fetch")


def _context(task: Any, run: Month, **params: Any) -> dict[str, Any]:
    """What the task runner hands the operator: the run's params (the DAG's defaults, resolved), its id
    and its data interval (a scheduled run of the month ``run``)."""
    values = {**task.dag.params.dump(), **params}
    return {"params": values, "run_id": f"scheduled__{run.start.isoformat()}",
            "data_interval_start": run.start, "data_interval_end": run.end, "logical_date": run.start}


def test_a_month_not_yet_published_defers_until_its_publication(fetch: Any) -> None:
    from airflow.providers.standard.triggers.temporal import DateTimeTrigger
    from airflow.sdk.exceptions import TaskDeferred

    under_way = Month.of(datetime.now(UTC))
    with pytest.raises(TaskDeferred) as deferred:
        fetch.execute(_context(fetch, under_way))
    trigger = deferred.value.trigger
    assert isinstance(trigger, DateTimeTrigger)
    assert trigger.moment == publication_target(under_way)  # its end plus ERA5_PUBLICATION_DELAY
    assert trigger.end_from_trigger is False  # the triggerer resumes the task, into the fetch
    assert deferred.value.method_name == "published"
    assert deferred.value.timeout is None  # the 48 h are the CDS queue's, not the publication's
    # The month param wins over the interval, as for the rest of the run.
    with pytest.raises(TaskDeferred) as deferred:
        fetch.execute(_context(fetch, Month(2022, 1), month=str(under_way)))
    assert deferred.value.trigger.moment == publication_target(under_way)


def test_a_failed_publication_wait_fails_without_retries_a_failed_cds_wait_keeps_them(fetch: Any) -> None:
    from airflow.sdk.exceptions import AirflowFailException, TaskDeferralError

    failure = {"error": "Trigger failure"}  # what the scheduler resumes a task with when its trigger failed
    with pytest.raises(AirflowFailException, match="publication failed"):
        fetch.resume_execution("__fail__", failure, _context(fetch, Month.of(datetime.now(UTC))))
    with pytest.raises(TaskDeferralError):  # a published month: the trigger was the CDS queue's
        fetch.resume_execution("__fail__", failure, _context(fetch, Month(2022, 1)))


def test_a_published_month_goes_straight_to_the_fetch(fetch: Any, cds: Any, table: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in {"CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(tmp_path)}.items():
        monkeypatch.setenv(name, value)
    month = Month(2022, 1)
    submitted = len(cds.requests)
    out = fetch.execute(_context(fetch, month, table=table, area=AREA, variables=["2m_temperature"]))
    # The task's log (Airflow's structured logger writes it to stdout outside the task runner).
    assert f"published since {publication_target(month).isoformat()}: nothing to wait for" in capsys.readouterr().out
    assert out["month"] == "2022-01" and out["bytes"] > 0 and not out["reused"]
    assert all(Path(f).is_file() and Path(f).is_relative_to(tmp_path) for f in out["files"])
    assert len(cds.requests) > submitted  # asked the CDS now, not after a wait


def test_a_table_the_pipeline_may_not_write_fails_the_fetch_at_once(fetch: Any, db_url: str) -> None:
    """Issue 47: a refused table was retried three times. A user's own table of that name: refused, and
    failed without the task's retries (no retry makes the table the pipeline's)."""
    import uuid

    from airflow.sdk.exceptions import AirflowFailException

    from era5etl.db import connect

    name = f"users_own_{uuid.uuid4().hex[:8]}"
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {name} (note text)")
    try:
        with pytest.raises(AirflowFailException, match=name):
            fetch.execute(_context(fetch, Month(2022, 1), table=name, area=AREA))
    finally:
        with connect(db_url, autocommit=True) as conn:
            conn.execute(f"DROP TABLE {name}")
