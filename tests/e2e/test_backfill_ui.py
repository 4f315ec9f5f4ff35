"""A user backfills three months from the Airflow UI, one fails at the CDS, and a clear in the UI reruns it.

Everything goes through a running Airflow (api-server, scheduler, dag-processor, triggerer,
LocalExecutor; see ``tests/e2e/stack.py``) and a real headless Chromium: the backfill is started
from the DAG page's Trigger dialog (Backfill, a date range, "Unpause ... on trigger"), and the
failed month is rerun with the run page's Clear dialog ("Clear only failed tasks"). The local CDS
refuses the failing month's job (``LocalCDS.fail_months``) as the real one refuses a request
MARS cannot serve; the fault is removed before the clear. The table and the ledger are checked
row for row: each month exactly its rows, no (time, location) twice, validated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest

if TYPE_CHECKING:
    from tests.e2e.stack import AirflowStack

pytestmark = pytest.mark.e2e
pytest_plugins = ["tests.e2e.stack"]  # the running Airflow, shared by the e2e modules that use it

DAG_ID = "era5_monthly"
MONTHS = ["2022-03", "2022-04", "2022-05"]  # months no other test loads
FAILING = "2022-04"
UI_TIMEOUT_MS = 30_000


def _pick(page: object, field: int, date: str) -> None:
    """Type a date (YYYY/MM/DD) and midnight into the dialog's From (0) or To (1) picker."""
    dialog = page.get_by_role("dialog")  # type: ignore[attr-defined]
    dialog.get_by_test_id("datetime-input").nth(field).click()
    popover = page.locator("[data-scope=popover][data-part=content][data-state=open]")  # type: ignore[attr-defined]
    popover.get_by_placeholder("YYYY/MM/DD").fill(date)
    popover.get_by_placeholder("HH:mm").fill("00:00")
    page.keyboard.press("Escape")  # type: ignore[attr-defined]


def test_backfill_from_the_ui_then_clear_the_failed_month(airflow_stack: AirflowStack) -> None:
    from playwright.sync_api import expect, sync_playwright

    stack = airflow_stack
    stack.pause()  # as Airflow creates it (other tests may have unpaused it)
    stack.wait_no_active_backfill()  # the UI would refuse a second one (409)
    before = {b["id"] for b in stack.backfills()}
    stack.cds.fail_months.add(FAILING)
    try:
        with sync_playwright() as pw:
            browser = stack.browser(pw)
            try:
                page = browser.new_context(viewport={"width": 1440, "height": 1100}).new_page()
                page.set_default_timeout(UI_TIMEOUT_MS)
                expect.set_options(timeout=UI_TIMEOUT_MS)
                stack.login(page, f"/dags/{DAG_ID}")

                # The backfill dialog: three months, up to three at once, unpausing the DAG.
                page.get_by_role("button", name="Trigger Dag").click()
                dialog = page.get_by_role("dialog")
                dialog.get_by_text("Backfill", exact=True).click()
                expect(dialog.get_by_text(f"Run Backfill - {DAG_ID}")).to_be_visible()
                _pick(page, 0, "2022/03/01")
                _pick(page, 1, "2022/05/01")
                expect(dialog.get_by_text("3 runs will be triggered.")).to_be_visible()
                expect(dialog.get_by_role("radio", name="Missing Runs")).to_be_checked()
                dialog.locator("input[name=max_active_runs]").fill("3")
                expect(dialog.get_by_role("checkbox", name=f"Unpause {DAG_ID} on trigger")).to_be_checked()
                # The DAG's params as defaults (month empty: each run's data interval is its month).
                expect(dialog.locator("#element_month")).to_have_value("")
                expect(dialog.locator("#element_table")).to_have_value(stack.table)
                run = dialog.get_by_role("button", name="Run Backfill")
                expect(run).to_be_enabled()
                run.click()
                # The UI's confirmation (Chakra can render one toast in two regions at once: the first).
                expect(page.get_by_text("Backfill generated").first).to_be_visible()

                backfills = [b for b in stack.backfills() if b["id"] not in before]
                assert len(backfills) == 1, backfills
                backfill = backfills[0]
                assert (backfill["from_date"][:10], backfill["to_date"][:10]) == ("2022-03-01", "2022-05-01")
                assert (backfill["reprocess_behavior"], backfill["max_active_runs"]) == ("none", 3)
                assert stack.is_paused() is False

                ok = [m for m in MONTHS if m != FAILING]
                runs = stack.wait_runs(ok, {"success"})
                failed = stack.wait_runs([FAILING], {"failed"})[FAILING]
                assert {r["run_type"] for r in [*runs.values(), failed]} == {"backfill"}
                # Each run is named by the month it loads (the grid and the run page show these names).
                assert failed["dag_run_id"] == "backfill__2022-04-01T00:00:00+00:00", failed
                for month in ok:
                    stack.assert_month_exact(month)
                # The refused month: its fetch failed with retries left (the CDS would answer the same,
                # so the operator does not use them), nothing was loaded, and the ledger says why.
                tis = stack.task_instances(failed["dag_run_id"])
                fetch_try = int(tis["fetch"]["try_number"])
                assert tis["fetch"]["state"] == "failed" and fetch_try <= tis["fetch"]["max_tries"], tis["fetch"]
                assert tis["load"]["state"] == "upstream_failed"
                assert stack.rows(FAILING) == (0, 0)
                entry = stack.ledger(FAILING)
                assert entry is not None and entry["state"] == "failed" and entry["error"].startswith("fetch:"), entry
                assert "the same request would fail again" in entry["error"], entry
                stack.wait_backfill_complete(backfill["id"])

                # The fault is gone; the user clears the failed run's failed tasks in the UI.
                stack.cds.fail_months.clear()
                page.goto(f"{stack.url}/dags/{DAG_ID}/runs/{quote(failed['dag_run_id'], safe='')}")
                expect(page.get_by_text("Failed").first).to_be_visible()
                page.get_by_role("button", name="Press shift+c to clear").click()
                clear = page.get_by_role("dialog")
                expect(clear.get_by_text(f"Clear Dag Run: {failed['dag_run_id']}")).to_be_visible()
                clear.get_by_role("button", name="Clear only failed tasks").click()
                not_done = sum(1 for ti in tis.values() if ti["state"] != "success")
                expect(clear.get_by_text(f"Affected Tasks: {not_done}")).to_be_visible()
                clear.get_by_role("button", name="Confirm").click()
                expect(clear).to_be_hidden()

                rerun = stack.wait_runs([FAILING], {"success"})[FAILING]
                assert rerun["dag_run_id"] == failed["dag_run_id"]
                page.reload()
                expect(page.get_by_text("Success").first).to_be_visible()
            finally:
                browser.close()
    finally:
        stack.cds.fail_months.discard(FAILING)

    # The cleared month holds exactly the rows of a clean first load; the others were not touched.
    for month in MONTHS:
        stack.assert_month_exact(month)
    # The failed fetch ran once more (its publication check passed at once: the month is long out) and
    # the tasks it had held back ran once.
    tis = stack.task_instances(rerun["dag_run_id"])
    assert tis["fetch"]["try_number"] == fetch_try + 1, tis
    assert {t: tis[t]["try_number"] for t in ("stage", "load", "validate")} == {
        "stage": 1, "load": 1, "validate": 1}, tis
