"""Airflow's REST API as a client uses it: trigger one month, backfill a range, clear a failed month.

Plain HTTP against the running stack (``tests/e2e/stack.py``), as docs/operating.md's curl commands do: a
JWT from ``POST /auth/token``, then ``/api/v2``. The local CDS refuses the triggered month's job
first (``LocalCDS.fail_months``); once the fault is gone, clearing the run's failed tasks over REST
loads it. Every month ends exactly loaded and validated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest

from era5etl.core.months import Month

if TYPE_CHECKING:
    from tests.e2e.stack import AirflowStack

pytestmark = pytest.mark.e2e
pytest_plugins = ["tests.e2e.stack"]

DAG_ID = "era5_monthly"
TRIGGERED = "2018-06"  # months no other test loads
BACKFILLED = ["2018-08", "2018-09"]


def test_trigger_backfill_and_clear_over_rest(airflow_stack: AirflowStack) -> None:
    stack = airflow_stack
    stack.wait_no_active_backfill()
    stack.unpause()  # backfill runs start only on an unpaused DAG; catch-up is off, so nothing else runs
    stack.cds.fail_months.add(TRIGGERED)
    try:
        # One month: no logical date (the month comes from conf), a run id naming it.
        run_id = f"manual__{TRIGGERED}"
        run = stack.api("POST", f"dags/{DAG_ID}/dagRuns",
                        {"logical_date": None, "dag_run_id": run_id, "conf": {"month": TRIGGERED}})
        assert (run["dag_run_id"], run["logical_date"], run["conf"]["month"]) == (run_id, None, TRIGGERED), run
        # Without "logical_date" Airflow 3.3 refuses the body (docs/operating.md says to send null).
        with pytest.raises(AssertionError, match="HTTP 422"):
            stack.api("POST", f"dags/{DAG_ID}/dagRuns", {"conf": {"month": TRIGGERED}})

        # A range of months: each month whose 1st is inside is one run, named by the month.
        backfill = stack.api("POST", "backfills", {
            "dag_id": DAG_ID, "from_date": f"{BACKFILLED[0]}-01T00:00:00Z", "to_date": f"{BACKFILLED[-1]}-01T00:00:00Z",
            "max_active_runs": 2, "reprocess_behavior": "none", "run_backwards": False, "dag_run_conf": {}})
        assert backfill["dag_id"] == DAG_ID and backfill["completed_at"] is None, backfill
        assert set(stack.backfill_runs(int(backfill["id"]))) == set(BACKFILLED)

        def failed() -> dict[str, str] | None:
            state = stack.api("GET", f"dags/{DAG_ID}/dagRuns/{quote(run_id)}")["state"]
            if state == "success":
                raise stack.fail(f"{run_id} succeeded although the CDS refused it")
            return {"state": state} if state == "failed" else None

        stack.wait_for(f"{run_id} failed at the CDS", failed, timeout=300)
        runs = stack.wait_runs(BACKFILLED, {"success"})
        assert {m: r["dag_run_id"] for m, r in runs.items()} == {
            m: f"backfill__{Month.parse(m).start.isoformat()}" for m in BACKFILLED}
        for month in BACKFILLED:
            stack.assert_month_exact(month)
        assert stack.rows(TRIGGERED) == (0, 0)
    finally:
        stack.cds.fail_months.discard(TRIGGERED)

    # Clear the failed month's failed tasks (and what follows them), as the UI's "Clear only failed tasks".
    cleared = stack.api("POST", f"dags/{DAG_ID}/clearTaskInstances", {
        "dry_run": False, "dag_run_id": run_id, "only_failed": True, "include_downstream": True,
        "reset_dag_runs": True})
    assert "fetch" in {ti["task_id"] for ti in cleared["task_instances"]}, cleared

    stack.wait_run_success(run_id, f"{run_id} rerun", timeout=300)
    stack.assert_month_exact(TRIGGERED)
    stack.wait_backfill_complete(int(backfill["id"]))
    stack.pause()
