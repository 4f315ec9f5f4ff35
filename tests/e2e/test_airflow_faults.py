"""Backfills from ``airflow backfill create`` and the faults a long backfill meets, on a running Airflow.

The stack (``tests/e2e/stack.py``) is a real api-server, scheduler, dag-processor and triggerer
with LocalExecutor, its own metadata database, and its own local CDS. Each test uses months of its
own in the stack's table and checks the table and the ledger row for row: every month exactly its
rows, no (time, location) twice, validated.

* Reprocess behaviours: with one month loaded, one failed and one never run, ``none`` creates a
  run for the missing month only, ``failed`` reruns the failed month only, ``completed`` reruns
  all three; the load counts in ``era5_metrics`` show which months were loaded again.
* A backfill of a paused DAG is created but does not start: its runs wait, queued, until the DAG
  is unpaused (Airflow 3.3 starts no run of a paused DAG, backfill runs included).
* The task process SIGKILLed in the middle of a COPY (seen in pg_stat_activity, frozen with SIGSTOP
  by the pid that holds that connection, and killed once a chunk's COPY transaction is seen open
  in it: a COPY that committed before the freeze is let go and the next one taken, so the kill
  always lands mid-load): the chunks it had committed stay, the one in flight is rolled back, and
  the retry Airflow makes leaves the month exact.
* The scheduler killed with SIGKILL mid-backfill, with its executor's workers and their tasks (a
  crashed scheduler container), then started again: the backfill finishes and every month is exact.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from typing import TYPE_CHECKING

import pytest

from era5etl.core.months import Month
from era5etl.db import connect

if TYPE_CHECKING:
    from tests.e2e.stack import AirflowStack

pytestmark = pytest.mark.e2e
pytest_plugins = ["tests.e2e.stack"]  # the running Airflow, shared by the e2e modules that use it

BIG_AREA = "50/0/40/10"  # 1,681 grid points: ~1.2M rows a month, a load of a few seconds
# The killed load's month: a year no other test loads, so its chunks are made for it; with a chunk
# a day (ERA5_CHUNK_ROWS=0 in the scheduler the test restarts) the load is ~30 transactions.
KILLED_MONTH = "2017-10"


def _states(stack: AirflowStack, months: list[str]) -> dict[str, str]:
    runs = stack.runs()
    return {m: runs[m]["state"] for m in months if m in runs}


def test_backfill_cli_reprocess_behaviours(airflow_stack: AirflowStack) -> None:
    stack = airflow_stack
    done, failing, missing = "2021-06", "2021-07", "2021-08"
    months = [done, failing, missing]

    # A paused DAG: the backfill's runs are created, queued, and stay so while the scheduler works.
    stack.pause()
    stack.cds.fail_months.add(failing)
    try:
        first = stack.backfill("--from-date", "2021-06-01", "--to-date", "2021-07-01", "--max-active-runs", "3")
        assert {m: r[1] for m, r in stack.backfill_runs(first["id"]).items()} == {done: None, failing: None}
        beat = stack.wait_for("a scheduler heartbeat", stack.scheduler_heartbeat)
        stack.wait_for("two more scheduler heartbeats", lambda: (b := stack.scheduler_heartbeat()) and (
            b - beat).total_seconds() >= 9)
        assert _states(stack, months) == {done: "queued", failing: "queued"}
        stack.unpause()
        stack.wait_runs([done], {"success"})
        stack.wait_runs([failing], {"failed"})
        stack.wait_backfill_complete(first["id"])
    finally:
        stack.cds.fail_months.discard(failing)
    stack.assert_month_exact(done)
    assert stack.rows(failing) == (0, 0) and stack.ledger(failing)["state"] == "failed"  # type: ignore[index]
    runs = stack.runs()
    assert {m: stack.loads(m) for m in months} == {done: 1, failing: 0, missing: 0}

    # none: only the month without a run gets one; the others are left as they are.
    none = stack.backfill("--from-date", "2021-06-01", "--to-date", "2021-08-01", "--reprocess-behavior", "none",
                          "--max-active-runs", "3")
    assert none["reprocess_behavior"] == "none"
    made = stack.backfill_runs(none["id"])
    assert made == {done: (None, "already exists"), failing: (None, "already exists"),
                    missing: (f"backfill__{Month.parse(missing).start.isoformat()}", None)}, made
    stack.wait_runs([missing], {"success"})
    stack.wait_backfill_complete(none["id"])
    assert _states(stack, months) == {done: "success", failing: "failed", missing: "success"}
    assert {m: stack.loads(m) for m in months} == {done: 1, failing: 0, missing: 1}

    # failed: the failed month's run is cleared and runs again; the successful ones are not touched.
    failed = stack.backfill("--from-date", "2021-06-01", "--to-date", "2021-08-01", "--reprocess-behavior",
                            "failed", "--max-active-runs", "3")
    made = stack.backfill_runs(failed["id"])
    assert made == {done: (None, "already exists"), failing: (runs[failing]["dag_run_id"], None),
                    missing: (None, "already exists")}, made
    stack.wait_runs([failing], {"success"})
    stack.wait_backfill_complete(failed["id"])
    assert {m: stack.loads(m) for m in months} == {done: 1, failing: 1, missing: 1}
    for month in months:
        stack.assert_month_exact(month)

    # completed: every month is run again, successful or not, and each still holds its rows once.
    completed = stack.backfill("--from-date", "2021-06-01", "--to-date", "2021-08-01", "--reprocess-behavior",
                               "completed", "--max-active-runs", "3")
    made = stack.backfill_runs(completed["id"])
    assert {m: (r[0] is not None, r[1]) for m, r in made.items()} == {m: (True, None) for m in months}, made
    stack.wait_runs(months, {"success"})
    stack.wait_backfill_complete(completed["id"])
    assert {m: stack.loads(m) for m in months} == {done: 2, failing: 2, missing: 2}
    for month in months:
        stack.assert_month_exact(month)


def _copying(stack: AirflowStack) -> tuple[int, set[int], str] | None:
    """A task process of the stack running a COPY: its pid, its connections' backend pids, the query."""
    import psutil

    with connect(stack.db_url) as conn:
        rows = conn.execute(
            "SELECT client_port, pid, left(query, 200) FROM pg_stat_activity WHERE application_name = 'era5etl'"
            " AND client_port IS NOT NULL").fetchall()
    backends = {int(port): (int(pid), str(query)) for port, pid, query in rows}
    ours = stack.descendants("scheduler")
    held: dict[int, set[int]] = {}
    copying: dict[int, str] = {}
    for c in psutil.net_connections(kind="tcp"):
        if c.pid in ours and c.laddr and c.laddr.port in backends:
            backend, query = backends[c.laddr.port]
            held.setdefault(c.pid, set()).add(backend)
            if query.upper().startswith("COPY "):
                copying[c.pid] = query
    for pid, query in copying.items():
        return pid, held[pid], query
    return None


def _frozen_mid_copy(stack: AirflowStack) -> tuple[int, set[int], str] | None:
    """A task process running a COPY, frozen (SIGSTOP) while a chunk's COPY transaction is open: killed,
    it certainly leaves the month short. None (the process thawed) when the COPY seen had committed."""
    found = _copying(stack)
    if found is None:
        return None
    pid = found[0]
    try:
        os.kill(pid, signal.SIGSTOP)
    except ProcessLookupError:
        return None
    if stack.frozen_in_copy({pid}):
        return found
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGCONT)
    return None


def _alive(stack: AirflowStack, backends: set[int]) -> bool:
    with connect(stack.db_url) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", (list(backends),)).fetchone()
    return bool(row and row[0])


def test_task_killed_mid_copy_then_retried(airflow_stack: AirflowStack) -> None:
    stack = airflow_stack
    month = KILLED_MONTH
    want = stack.expected(month, BIG_AREA)
    # A chunk a day for this test's loads (the scheduler's LocalExecutor forks the task processes):
    # with the default the month is one chunk and one COPY, which the kill could find committed.
    stack.stop("scheduler")
    stack.start("scheduler", env={"ERA5_CHUNK_ROWS": "0"})
    try:
        _kill_mid_copy_then_retried(stack, month, want)
    finally:
        stack.stop("scheduler")
        stack.start("scheduler")


def _kill_mid_copy_then_retried(stack: AirflowStack, month: str, want: int) -> None:
    stack.unpause()
    backfill = stack.backfill("--from-date", f"{month}-01", "--to-date", f"{month}-01",
                              "--dag-run-conf", json.dumps({"area": BIG_AREA}))
    # pg_stat_activity's active query is read while it runs (application_name "era5etl" is the
    # core's), and the client port of its connection leads to the task process that holds it.
    pid, backends, query = stack.wait_for("a task frozen in a COPY into the month's chunks",
                                          lambda: _frozen_mid_copy(stack), timeout=300, interval=0.02)
    os.kill(pid, signal.SIGKILL)
    stack.wait_for("the killed task's database sessions to end", lambda: not _alive(stack, backends), timeout=60)
    # The transactions in flight died with the process: only chunks committed before the kill remain.
    rows, distinct = stack.rows(month)
    assert rows == distinct < want, (rows, want, query)
    entry = stack.ledger(month, BIG_AREA)
    assert entry is not None and entry["state"] == "loading", entry  # never more than the table holds

    run = stack.wait_runs([month], {"success"}, timeout=300)[month]
    stack.wait_backfill_complete(backfill["id"])
    tis = stack.task_instances(run["dag_run_id"])
    assert tis["load"]["try_number"] == 2, tis["load"]  # the retry Airflow made after the kill
    assert stack.loads(month, BIG_AREA) == 1  # the killed try recorded no figures
    stack.assert_month_exact(month, BIG_AREA)


def test_scheduler_killed_mid_backfill_then_restarted(airflow_stack: AirflowStack) -> None:
    stack = airflow_stack
    months = ["2021-01", "2021-02", "2021-03"]
    stack.unpause()
    backfill = stack.backfill("--from-date", "2021-01-01", "--to-date", "2021-03-01", "--max-active-runs", "3")

    def running() -> dict[tuple[str, str], int]:
        """(month, task) -> try number of the tasks of the months' runs in the running state now."""
        runs = {m: r for m, r in stack.runs().items() if m in months}
        return {(m, ti["task_id"]): int(ti["try_number"]) for m, r in runs.items()
                for ti in stack.task_instances(r["dag_run_id"]).values() if ti["state"] == "running"}

    def working() -> dict[tuple[str, str], int] | None:
        """:func:`running`, once every month's run has started and one of them is in the middle of the
        pipeline's own work on the data: staging, loading or validating a month."""
        runs = {m: r for m, r in stack.runs().items() if m in months}
        if len(runs) < len(months) or any(r["state"] != "running" for r in runs.values()):
            return None
        now = running()
        return now if any(task in ("stage", "load", "validate") for _, task in now) else None

    stack.wait_for("tasks of the backfill running", working, timeout=300, interval=0.3)
    # SIGKILL to the scheduler's process group: its LocalExecutor workers and the tasks they supervise
    # die with it, as when a scheduler's container or machine dies.
    # (SIGKILL to the scheduler's process alone leaves its LocalExecutor workers running, and one of
    # them, forked with the scheduler's metadata connection, can hold the dead scheduler's open
    # transaction and its row locks: the restarted scheduler then skips the locked runs until that
    # old process group is killed. Kill a crashed scheduler's whole group before restarting it.)
    stack.kill("scheduler")
    # What the kill interrupted: the tasks still running once it is dead. Not the poll's list: a task
    # can end between the poll and the kill (CI, 2026-12-02: a fetch that pushed its result then).
    interrupted = running()
    assert interrupted, "the kill interrupted no task"
    assert all(state == "running" for state in _states(stack, months).values())
    stack.start("scheduler")
    stack.wait_runs(months, {"success"}, timeout=420)
    stack.wait_backfill_complete(backfill["id"])
    runs = stack.runs()
    # Each task the kill interrupted was found dead (no heartbeat) and run again by the new scheduler.
    for (month, task), tried in interrupted.items():
        ti = stack.task_instances(runs[month]["dag_run_id"])[task]
        assert ti["state"] == "success" and ti["try_number"] > tried, (month, task, ti)
    for month in months:
        stack.assert_month_exact(month)
