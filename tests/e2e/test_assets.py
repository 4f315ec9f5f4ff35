"""Data-aware scheduling: a month validated by era5_monthly updates its table's Asset, and the example
downstream DAG (``dags/examples/era5_downstream.py``, scheduled on that Asset) runs with the month in
its triggering event's extra.

On the running stack (``tests/e2e/stack.py``): the downstream DAG is unpaused, one month is triggered
over REST, and once it succeeded the downstream DAG's run is waited for: it succeeded, its upstream
Asset event is ``era5://<the stack's table>`` with the month, area and rows of the month loaded, and
its task returned that month. A month whose validation fails updates nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest

if TYPE_CHECKING:
    from tests.e2e.stack import AirflowStack

pytestmark = pytest.mark.e2e
pytest_plugins = ["tests.e2e.stack"]

DAG_ID = "era5_monthly"
DOWNSTREAM = "era5_downstream_example"
MONTH = "2018-11"  # a month no other test loads


def _downstream_runs(stack: AirflowStack) -> list[dict[str, Any]]:
    return list(stack.api("GET", f"dags/{DOWNSTREAM}/dagRuns?limit=100")["dag_runs"])


def test_a_validated_month_triggers_the_downstream_dag(airflow_stack: AirflowStack) -> None:
    stack = airflow_stack
    asset_uri = f"era5://{stack.table}/"
    stack.wait_no_active_backfill()
    stack.unpause()
    stack.api("PATCH", f"dags/{DOWNSTREAM}", {"is_paused": False})
    try:
        before = {r["dag_run_id"] for r in _downstream_runs(stack)}
        run_id = f"manual__assets__{MONTH}"
        stack.api("POST", f"dags/{DAG_ID}/dagRuns", {"logical_date": None, "dag_run_id": run_id,
                                                     "conf": {"month": MONTH}})
        stack.wait_run_success(run_id, f"{run_id} (the upstream month)", timeout=300)
        stack.assert_month_exact(MONTH)

        def events_of(run: dict[str, Any]) -> list[dict[str, Any]]:
            found = stack.api("GET", f"dags/{DOWNSTREAM}/dagRuns/{quote(run['dag_run_id'])}/upstreamAssetEvents")
            return list(found["asset_events"])

        def downstream_done() -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
            # Months other tests of the shared stack validated earlier left events of their own, queued
            # while the downstream DAG was paused: the run that holds this month's event is the one.
            runs = [r for r in _downstream_runs(stack) if r["dag_run_id"] not in before]
            if any(r["state"] == "failed" for r in runs):
                raise stack.fail(f"the downstream run failed: {runs}")
            for r in (r for r in runs if r["state"] == "success"):
                events = events_of(r)
                if any(e["source_run_id"] == run_id for e in events):
                    return r, events
            return None

        run, events = stack.wait_for(f"a {DOWNSTREAM} run after {MONTH} was validated", downstream_done, timeout=180)
        assert run["run_type"] == "asset_triggered", run
        mine = [e for e in events if e["uri"] == asset_uri and e["source_run_id"] == run_id]
        assert len(mine) == 1, events
        extra = mine[0]["extra"]
        assert {k: extra.get(k) for k in ("month", "area", "rows", "run_id")} == {
            "month": MONTH, "area": stack.area, "rows": stack.expected(MONTH), "run_id": run_id}, extra
        assert (mine[0]["source_dag_id"], mine[0]["source_task_id"], mine[0]["source_run_id"]) == (
            DAG_ID, "validate", run_id), mine[0]
        # The downstream task saw the same month (its return value, in XCom).
        xcom = stack.api("GET", f"dags/{DOWNSTREAM}/dagRuns/{quote(run['dag_run_id'])}/taskInstances/"
                                "landed_months/xcomEntries/return_value")
        landed = xcom["value"]
        assert (asset_uri, MONTH, stack.expected(MONTH)) in [(e["asset"], e["month"], e["rows"]) for e in landed], \
            landed
    finally:
        stack.api("PATCH", f"dags/{DOWNSTREAM}", {"is_paused": True})
        stack.pause()
