"""Scale-out on Airflow's CeleryExecutor, run for real: Redis, two Celery workers, one killed mid-load.

The stack (``tests/e2e/celery_stack.py``): Debian's redis-server as the broker, the result backend in
the stack's metadata database, api-server, scheduler, dag-processor and triggerer, and two
``airflow celery worker`` processes (``worker-a``, ``worker-b``) sharing one staging folder.

A backfill of three months of a 1,681-point area (~1.2M rows a month, a load of a few seconds in a
chunk a day: ``ERA5_CHUNK_ROWS=0``; with the default the month is one chunk and one COPY) runs over
both workers. While a ``COPY`` of one month runs (seen in ``pg_stat_activity``, its client port
leading to a task process under one worker), that worker is frozen whole with SIGSTOP and the
server left to finish what it was doing for it; if a chunk's transaction with its COPY is then
still open (it cannot commit: every process that could send or commit a row is stopped), the
worker is killed with SIGKILL, whole: its process group and the task processes' own groups, as
when its host dies. Otherwise (the COPY seen had committed) it is thawed and the next COPY is
taken, so the kill always lands mid-load (a kill that raced the COPY it aimed at is what this test
once did: the month's one COPY committed between the test seeing it and the SIGKILL). The killed
load's task is failed by its missing heartbeat, retried, and runs on the other worker; every month
ends exact (rows = points x hours, no (time, location) twice, validated).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from era5etl.db import connect
from tests.e2e.celery_stack import HEARTBEAT_TIMEOUT_S, WORKERS, celery_stack, kill_worker
from tests.e2e.stack import AirflowStack

pytestmark = pytest.mark.e2e

AREA = "50/0/40/10"  # 1,681 grid points: a load long enough to be caught mid-COPY
MONTHS = ["2020-01", "2020-02", "2020-03"]


@pytest.fixture(scope="module")
def stack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AirflowStack]:
    with celery_stack(request, tmp_path_factory, ERA5_CHUNK_ROWS="0") as s:
        yield s


def _copying(stack: AirflowStack) -> list[tuple[str, int, str, str]]:
    """(worker, task pid, month, query) of each COPY run by a task process under a worker.

    The month is the one of the load task instance whose process that is (Airflow records the task
    process's pid): with two loads at once, a COPY seen must be tied to its own month, not to
    whichever month is loading (a COPY of a month about to finish is gone by the time it is killed).
    """
    import psutil

    with connect(stack.db_url) as conn:
        rows = conn.execute(
            "SELECT client_port, left(query, 200) FROM pg_stat_activity WHERE application_name = 'era5etl'"
            " AND client_port IS NOT NULL AND state = 'active' AND query ILIKE 'COPY %%'").fetchall()
    copies = {int(port): str(query) for port, query in rows}
    if not copies:
        return []
    under = {name: stack.descendants(name) for name in WORKERS if name not in stack.down}
    seen = [(name, c.pid, copies[c.laddr.port]) for c in psutil.net_connections(kind="tcp")
            if c.laddr and c.laddr.port in copies for name, pids in under.items() if c.pid in pids]
    if not seen:
        return []
    with connect(stack.meta_url) as conn:
        loads = dict(conn.execute(
            "SELECT pid, data_interval_start FROM task_instance JOIN dag_run USING (dag_id, run_id)"
            " WHERE task_instance.task_id = 'load' AND task_instance.state = 'running' AND pid = ANY(%s)",
            ([pid for _, pid, _ in seen],)).fetchall())
    return [(name, pid, loads[pid].astimezone(UTC).strftime("%Y-%m"), query)
            for name, pid, query in seen if pid in loads]


def _signal_worker(stack: AirflowStack, name: str, sig: int) -> None:
    """``sig`` to the worker's process group and to the groups of every process under it, until no new
    process appears under it (a process forked while the first groups were stopped is stopped too)."""
    done: set[int] = set()
    while True:
        groups = {stack.procs[name].pid}
        for pid in stack.descendants(name):
            with contextlib.suppress(ProcessLookupError):
                groups.add(os.getpgid(pid))
        if groups <= done:
            return
        for group in groups - done:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, sig)
        done |= groups


def _frozen_mid_load(stack: AirflowStack, tries: list[str]) -> tuple[str, int, str, str] | None:
    """A worker frozen (SIGSTOP) while one of its loads holds a chunk's COPY transaction open: killed,
    that load is certainly cut short. None (the worker thawed) when the COPY seen had committed.
    The worker is frozen as soon as a COPY is seen (the table is not read first: a read can wait on
    the chunk's lock until that COPY commits); ``tries`` collects each attempt's outcome."""
    copies = _copying(stack)
    if not copies:
        return None
    worker, pid, month, query = copies[0]
    _signal_worker(stack, worker, signal.SIGSTOP)
    if stack.frozen_in_copy({pid}):
        return worker, pid, month, query
    _signal_worker(stack, worker, signal.SIGCONT)
    tries.append(f"{month} on {worker} (pid {pid}): its COPY had committed; thawed")
    return None


def test_each_worker_preloaded_the_pipeline_before_forking_its_pool(stack: AirflowStack) -> None:
    """``era5etl.airflow.celery_config``: the worker's main process imported Great Expectations (and with
    it pandas, whose compiled modules are then mapped into it), which Airflow's worker alone does not."""
    for name in WORKERS:
        maps = Path(f"/proc/{stack.procs[name].pid}/maps").read_text()
        assert "/pandas/_libs/" in maps, f"{name}'s main process did not preload era5etl.airflow.preload"


def test_backfill_over_two_workers_one_killed_mid_load(stack: AirflowStack) -> None:
    stack.unpause()
    backfill = stack.backfill("--from-date", "2020-01-01", "--to-date", "2020-03-01", "--max-active-runs", "3",
                              "--dag-run-conf", json.dumps({"area": AREA}))
    tries: list[str] = []
    victim, pid, month, query = stack.wait_for("a Celery worker frozen in a month's load",
                                               lambda: _frozen_mid_load(stack, tries), timeout=400, interval=0.02)
    print(f"\n{len(tries)} earlier freeze(s) found the COPY committed: {tries}")
    killed = kill_worker(stack, victim)  # frozen, it committed nothing since the check
    killed_at = datetime.now(UTC)
    survivor = next(w for w in WORKERS if w != victim)
    print(f"\nkilled {victim} (pids {sorted(killed)}, the COPY's {pid}) while it ran {query!r} for {month}; "
          f"rows then: {stack.rows(month)} of {stack.expected(month, AREA)}")
    assert pid in killed
    # Only the days committed before the kill are in the table; the ledger never claims more.
    rows, distinct = stack.rows(month)
    want = stack.expected(month, AREA)
    assert rows == distinct < want, (month, rows, want)
    entry = stack.ledger(month, AREA)
    assert entry is not None and entry["state"] == "loading", entry

    runs = stack.wait_runs(MONTHS, {"success"}, timeout=600)
    stack.wait_backfill_complete(backfill["id"])
    where: dict[str, dict[str, Any]] = {}
    for m in MONTHS:
        tis = stack.task_instances(runs[m]["dag_run_id"])
        where[m] = {task: (ti["hostname"], ti["try_number"]) for task, ti in tis.items()}
    for m, tasks in where.items():
        print(m, " ".join(f"{task}={host}#{tried}" for task, (host, tried) in tasks.items()))
    hosts = {host for tasks in where.values() for host, _ in tasks.values() if host}
    assert hosts <= set(WORKERS), hosts
    # Both workers ran tasks of the backfill: the victim the load it was frozen and killed in (its other
    # tries, if it took any, may all have been retried on the survivor: a whole run here, 2026-12-01,
    # where the victim had taken only that load and one fetch), the survivor the rest.
    assert hosts | {victim} == set(WORKERS), where
    load = stack.task_instances(runs[month]["dag_run_id"])["load"]
    # The killed try was failed for its missing heartbeat and retried on the worker still alive.
    assert load["try_number"] >= 2 and load["hostname"] == survivor, load
    retried_after = datetime.fromisoformat(load["start_date"]) - killed_at
    print(f"{month}'s load: try {load['try_number']} on {load['hostname']}, started "
          f"{retried_after.total_seconds():.0f} s after the kill (heartbeat timeout {HEARTBEAT_TIMEOUT_S} s)")
    for m in MONTHS:
        stack.assert_month_exact(m, AREA)
    assert stack.loads(month, AREA) == 1  # the killed try recorded no figures

