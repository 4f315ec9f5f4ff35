"""Many fetch tasks deferring and resuming at once: none is lost to apache/airflow#72716, none needs a retry.

Airflow 3.3 fails a resumed deferred task when the executor's report of the deferring process's exit
("success") is processed after the resumed attempt is already queued or running ("reported that the
task instance ... finished with state success, but the task instance's state attribute is running",
then "404 Task Instance not found"). Seen here: 5 of 47 fetch tasks of a backfill went up for retry.
It needs a trigger that fires within a scheduler loop of its deferral while the scheduler is busy.

The test makes that situation as dense as it can on the session's stack: eight months backfilled at
once, every CDS job held in the local CDS's queue past the operator's in-worker watch, so every fetch
defers, and the jobs leave the queue together, so the triggers fire and the tasks resume together
while the machine's two cores load, validate and compress the months that resumed first. Then:
every run succeeded, every fetch succeeded on its first try (the stack retries tasks, so a lost one
would show a second try; with ``ERA5_RETRIES=0`` it would have failed), the scheduler logged no
"state mismatch", every fetch deferred and resumed, and every month is exact.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from era5etl.db import connect

if TYPE_CHECKING:
    from tests.e2e.stack import AirflowStack

pytestmark = pytest.mark.e2e
pytest_plugins = ["tests.e2e.stack"]  # the running Airflow, shared by the e2e modules that use it

YEAR = "2019"  # months no other test uses
FROM, TO = "2019-01-01", "2019-08-01"  # eight runs
QUEUE_S = 14.0  # each job's time in the CDS queue: longer than the fetch's watch (ERA5_CDS_DEFER_AFTER, 10 s)
# The local CDS writes each job's file in a thread, and netCDF4/HDF5 is not thread-safe (two files
# written at the same instant crashed the emulator's process): the jobs leave the queue 1.5 s apart,
# all within the triggers' and resumed tasks' window all the same.
STAGGER_S = 1.5


def _month_of(month: int) -> Callable[[dict[str, Any]], bool]:
    def match(request: dict[str, Any]) -> bool:
        return YEAR in json.dumps(request.get("year")) and request.get("month") == [f"{month:02d}"]
    return match


def _fetch_instances(stack: AirflowStack, run_ids: list[str]) -> list[tuple[str, str, int]]:
    with connect(stack.meta_url) as conn:
        rows = conn.execute("SELECT run_id, state, try_number FROM task_instance WHERE dag_id = 'era5_monthly'"
                            " AND task_id = 'fetch' AND run_id = ANY(%s)", (run_ids,)).fetchall()
    return [(str(r), str(s), int(t)) for r, s, t in rows]


def _fetch_log(stack: AirflowStack, run_id: str) -> str:
    """The fetch's task logs of a run, whole (the trigger's own logs apart)."""
    folder = stack.home / "logs" / "dag_id=era5_monthly" / f"run_id={run_id}" / "task_id=fetch"
    return "\n".join(p.read_text(errors="replace") for p in sorted(folder.glob("attempt=*.log")))


def test_many_fetches_defer_and_resume_at_once_and_none_is_lost(airflow_stack: AirflowStack) -> None:
    stack = airflow_stack
    faults = [stack.cds.inject("job", "queue", seconds=QUEUE_S + STAGGER_S * i, times=None, match=_month_of(i + 1))
              for i in range(8)]
    try:
        backfill = stack.backfill("--from-date", FROM, "--to-date", TO, "--max-active-runs", "8")
        if stack.is_paused():
            stack.unpause()
        made = stack.backfill_runs(int(backfill["id"]))
        run_ids = sorted(r for r, _ in made.values() if r)
        assert len(run_ids) == 8, made

        def finished() -> dict[str, str] | None:
            with connect(stack.meta_url) as conn:
                rows = conn.execute("SELECT run_id, state FROM dag_run WHERE dag_id = 'era5_monthly'"
                                    " AND run_id = ANY(%s)", (run_ids,)).fetchall()
            states = {str(r): str(s) for r, s in rows}
            done = all(s in ("success", "failed") for s in states.values()) and len(states) == len(run_ids)
            return states if done else None

        states = stack.wait_for("the eight runs finished", finished, timeout=600, interval=2.0)
    finally:
        for fault in faults:
            stack.cds.faults.remove(fault)
    fetches = _fetch_instances(stack, run_ids)
    logs = {run_id: _fetch_log(stack, run_id) for run_id in run_ids}
    assert set(states.values()) == {"success"}, (states, fetches, logs)

    # Each fetch succeeded on its first try: no Airflow retry rescued one.
    assert sorted(fetches) == [(r, "success", 1) for r in run_ids], fetches
    with connect(stack.meta_url) as conn:
        mismatches = conn.execute("SELECT run_id, extra FROM log WHERE event = 'state mismatch'"
                                  " AND dag_id = 'era5_monthly' AND run_id = ANY(%s)", (run_ids,)).fetchall()
    assert mismatches == []

    # ... and each one did defer (its job outlasted the watch in the worker) and resume.
    for run_id, text in logs.items():
        assert "deferring, the worker slot is free" in text, (run_id, text[-3000:])
        assert "CDS jobs left the queue" in text, (run_id, text[-3000:])
    assert all(fault.hits >= 1 for fault in faults)

    # Every month loaded exactly (the months the runs loaded, as their metrics say).
    with connect(stack.db_url) as conn:
        months = conn.execute("SELECT DISTINCT to_char(month, 'YYYY-MM') FROM era5_metrics"
                              " WHERE table_name = %s AND run_id = ANY(%s) AND task = 'load'",
                              (stack.table, run_ids)).fetchall()
    assert len(months) == 8, months
    for (month,) in months:
        stack.assert_month_exact(month)


def test_a_job_the_cds_finishes_at_once_is_fetched_without_deferring(airflow_stack: AirflowStack) -> None:
    """No triggerer round trip (seconds a month) when the job is done within the operator's watch."""
    stack = airflow_stack
    backfill = stack.backfill("--from-date", "2019-10-01", "--to-date", "2019-10-01")
    if stack.is_paused():
        stack.unpause()
    run_ids = [r for r, _ in stack.backfill_runs(int(backfill["id"])).values() if r]
    assert len(run_ids) == 1
    stack.wait_for("the run finished", lambda: _fetch_instances(stack, run_ids) and all(
        s in ("success", "failed") for _, s, _ in _fetch_instances(stack, run_ids)), timeout=300)
    assert _fetch_instances(stack, run_ids) == [(run_ids[0], "success", 1)]
    text = _fetch_log(stack, run_ids[0])
    assert "submitted as CDS job" in text and "deferring" not in text, text[-3000:]
    assert not list((stack.home / "logs" / "dag_id=era5_monthly" / f"run_id={run_ids[0]}" / "task_id=fetch")
                    .glob("*.trigger.*"))
