"""``python -m era5bench backfill``: a backfill over a range of months through the one-command stack,
as a user runs it, with the figures that decide whether it keeps up.

It starts ``python -m era5etl airflow up`` (the local CDS, Airflow's api-server, scheduler,
dag-processor and triggerer, at the stack's defaults: nothing here changes a setting but the home,
the ports, the metadata database, the table and the staging folder, all of their own), creates a
backfill of ``--months`` months from ``--from`` through the REST API, samples the staging folder's
size every half second while it runs, and prints:

* **wall time per month**: from the backfill's creation to its last run finished, over the months;
* **task work per month**: the seconds the steps recorded in ``era5_metrics``, by step;
* **Airflow's overhead**: wall minus work, a month (work runs ``max_active_runs`` months at once, so
  the overhead can be negative: it is what a month costs beyond its own work at that concurrency);
* **failures and retries**: runs not successful, task tries beyond the first;
* **CPU a month** by component (``era5bench.cpu``: the scheduler, its executor's task processes, the
  api-server, the database server, ...) and how busy the machine was: whether the wall time is the
  machine's work or Airflow's waiting;
* **each task's wait and run** (medians): from its predecessor's end to its own start, and its run,
  from Airflow's task instances;
* **staging**: the high-water mark of the staging folder and what it holds at the end;
* **exactness**: every month's rows counted against the area's grid points x hours, and its ledger
  state, before any figure is printed (a fast wrong run is no figure).

Then it stops the stack (``airflow down``: every process group it started).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from tempfile import mkdtemp
from typing import Any

from era5bench import cpu
from era5etl import settings
from era5etl.core.grid import Area, Grid, expected_rows
from era5etl.core.months import Month
from era5etl.core.ports import free_port
from era5etl.db import connect, database_url, drop_table, with_database
from era5etl.track.metrics import task_seconds

DAG_ID = "era5_monthly"


class _Api:
    def __init__(self, url: str, password: str) -> None:
        self.url = url
        body = json.dumps({"username": "admin", "password": password}).encode()
        request = urllib.request.Request(f"{url}/auth/token", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            self.token = str(json.load(response)["access_token"])

    def __call__(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.url}/api/v2/{path}", data=data, method=method,
                                         headers={"Authorization": f"Bearer {self.token}",
                                                  "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                text = response.read().decode()
        except urllib.error.HTTPError as exc:
            raise SystemExit(f"{method} {path}: HTTP {exc.code} {exc.read().decode(errors='replace')}") from None
        return json.loads(text) if text else None


def _folder_bytes(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(FileNotFoundError):  # removed while walked: the retention at work
                total += os.stat(os.path.join(root, name)).st_size
    return total


class _Sampler(threading.Thread):
    """The staging folder's size every half second; its high-water mark."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path, self.peak, self.stopped = path, 0, threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            self.peak = max(self.peak, _folder_bytes(self.path))
            self.stopped.wait(0.5)


def _wait(what: str, check: Any, timeout: float, interval: float = 1.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            found = check()
        except (OSError, ValueError, KeyError):
            found = None
        if found:
            return found
        time.sleep(interval)
    raise SystemExit(f"timed out after {timeout:.0f} s waiting for {what}")


def run(first: Month, months: int, area: str, table: str, timeout: float, keep: bool) -> dict[str, Any]:
    url = database_url()
    with connect(url, autocommit=True) as conn:
        drop_table(conn, table)
        for bookkeeping in ("era5_months", "era5_metrics", "era5_validation_days"):
            # A fresh database has none of them yet (the first month's task creates them).
            if conn.execute("SELECT to_regclass(%s)", (bookkeeping,)).fetchone() != (None,):
                conn.execute(f"DELETE FROM {bookkeeping} WHERE table_name = %s", (table,))
    home = Path(mkdtemp(prefix="era5-backfill-"))
    staging = home / "staging"
    meta = f"bench_airflow_{os.getpid()}"
    port = free_port()
    env = {**os.environ, "ERA5_TABLE": table, "ERA5_AREA": area, "ERA5_STAGING_DIR": str(staging),
           "ERA5_VALIDATION_DIR": str(home / "validation")}
    log = open(home / "airflow-up.log", "wb")  # noqa: SIM115 (closed in finally)
    stack = subprocess.Popen([sys.executable, "-m", "era5etl", "airflow", "up", "--home", str(home / "airflow"),
                              "--port", str(port), "--cds-port", str(free_port()), "--metadata-db", meta],
                             env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    sampler = _Sampler(staging)
    try:
        _wait("airflow up", lambda: b"Airflow is up" in (home / "airflow-up.log").read_bytes(), timeout=300)
        password = json.loads((home / "airflow" / "simple_auth_manager_passwords.json.generated").read_text())["admin"]
        api = _Api(f"http://127.0.0.1:{port}", password)
        _wait("the DAG parsed", lambda: api("GET", f"dags/{DAG_ID}"), timeout=300)
        api("PATCH", f"dags/{DAG_ID}", {"is_paused": False})
        last = first
        for _ in range(months - 1):
            last = last.next()
        stack_state = json.loads((home / "airflow" / "era5-stack.json").read_text())
        groups = {name: int(group) for name, group in stack_state["groups"].items()}
        sampler.start()
        cpu_before = cpu.snapshot(groups)
        began = time.time()
        backfill = api("POST", "backfills", {
            "dag_id": DAG_ID, "from_date": first.start.isoformat(), "to_date": last.start.isoformat(),
            "max_active_runs": settings.load().max_active_runs, "reprocess_behavior": "completed",
            "dag_run_conf": {}})
        meta_url = with_database(url, meta)

        def finished() -> list[tuple[str, str, float, float]] | None:
            with connect(meta_url) as conn:
                rows = conn.execute("SELECT run_id, state, start_date, end_date FROM dag_run WHERE backfill_id = %s",
                                    (backfill["id"],)).fetchall()
            done = [(str(r), str(s), a.timestamp(), b.timestamp()) for r, s, a, b in rows
                    if s in ("success", "failed") and b is not None]
            return done if len(rows) >= months and len(done) == len(rows) else None

        runs = _wait(f"{months} runs finished", finished, timeout=timeout, interval=2.0)
        wall = max(end for *_, end in runs) - began
        cpu_spent = cpu.spent(cpu_before, cpu.snapshot(groups), per=len(runs))
        sampler.stopped.set()
        sampler.join()
        run_ids = [r for r, *_ in runs]
        with connect(meta_url) as conn:
            retries = conn.execute("SELECT count(*) FILTER (WHERE try_number > 1), coalesce(sum(greatest("
                                   "try_number - 1, 0)), 0) FROM task_instance WHERE run_id = ANY(%s)",
                                   (run_ids,)).fetchone() or (0, 0)
        figures = _figures(url, table, area, first, months, run_ids)
        handover = _handover(meta_url, run_ids)
        failed = [r for r, state, *_ in runs if state != "success"]
        return {"area": area, "points": Area.parse(area).points(Grid()), "months": len(runs),
                "from": str(first), "to": str(last), "wall_s": round(wall, 1),
                "wall_per_month_s": round(wall / len(runs), 2), **figures,
                "overhead_per_month_s": round(wall / len(runs) - figures["work_per_month_s"], 2),
                "failed_runs": failed, "tasks_retried": int(retries[0]), "retries": int(retries[1]),
                "staging_peak_mb": round(sampler.peak / 1e6, 1),
                "staging_end_mb": round(_folder_bytes(staging) / 1e6, 1),
                "cpu_per_month": cpu_spent, "handover_s": handover,
                "settings": {"max_active_runs": settings.load().max_active_runs,
                             "keep_downloads": str(getattr(settings.load(), "keep_downloads", "-"))}}
    finally:
        sampler.stopped.set()
        with_group = stack.pid
        try:
            os.killpg(with_group, signal.SIGTERM)
            stack.wait(timeout=120)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(with_group, signal.SIGKILL)
        log.close()
        if keep:
            print(f"the stack's home is kept in {home}", file=sys.stderr)
        else:
            shutil.rmtree(home, ignore_errors=True)
            with connect(url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{meta}" WITH (FORCE)')


def _handover(meta_url: str, run_ids: list[str]) -> dict[str, dict[str, float]]:
    """Per task, the medians (s) of its wait from its predecessor's end (the run's start for the
    first) to its own start, and of its run, from Airflow's task instances: where a month's wall time
    goes between the steps' own work."""
    with connect(meta_url) as conn:
        rows = conn.execute(
            "SELECT ti.run_id, ti.task_id, ti.start_date, ti.end_date, r.start_date FROM task_instance ti"
            " JOIN dag_run r ON r.dag_id = ti.dag_id AND r.run_id = ti.run_id"
            " WHERE ti.dag_id = %s AND ti.run_id = ANY(%s) AND ti.start_date IS NOT NULL AND ti.end_date IS NOT NULL"
            " ORDER BY ti.run_id, ti.start_date", (DAG_ID, run_ids)).fetchall()
    waits: dict[str, list[float]] = {}
    runs: dict[str, list[float]] = {}
    previous: dict[str, Any] = {}
    for run_id, task, start, end, run_start in rows:
        waits.setdefault(task, []).append((start - previous.get(run_id, run_start)).total_seconds())
        runs.setdefault(task, []).append((end - start).total_seconds())
        previous[run_id] = end
    return {task: {"wait": round(statistics.median(waits[task]), 2), "run": round(statistics.median(runs[task]), 2)}
            for task in waits}


def _figures(url: str, table: str, area: str, first: Month, months: int, run_ids: list[str]) -> dict[str, Any]:
    """Each month exact (rows and ledger), then the steps' own seconds."""
    parsed = Area.parse(area)
    month, inexact = first, []
    with connect(url) as conn:
        for _ in range(months):
            rows = conn.execute(f'SELECT count(*) FROM "{table}" WHERE time >= %s AND time < %s',
                                (month.start, month.end)).fetchone()
            ledger = conn.execute("SELECT state FROM era5_months WHERE table_name = %s AND month = %s AND area = %s",
                                  (table, month.start.date(), str(parsed))).fetchone()
            want = expected_rows(month, parsed, Grid())
            if not rows or rows[0] != want or not ledger or ledger[0] != "validated":
                inexact.append(f"{month}: {rows[0] if rows else 0:,} rows of {want:,}, ledger "
                               f"{ledger[0] if ledger else None}")
            month = month.next()
        work = task_seconds(conn, table, str(parsed), run_ids)
    n = len(run_ids)
    return {"exact": not inexact, "inexact": inexact, "work_per_month_s": round(sum(work.values()) / n, 2),
            "work_by_step_s": {t: round(s / n, 2) for t, s in work.items()}}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m era5bench backfill", description=__doc__.split("\n\n")[0])
    p.add_argument("--from", dest="first", type=Month.parse, default=Month(2015, 1),
                   help="first month, YYYY-MM (default 2015-01)")
    p.add_argument("--months", type=int, default=120, help="how many months (default 120: 2015-2024)")
    p.add_argument("--area", default=str(settings.load().area), help="N/W/S/E (default ERA5_AREA's)")
    p.add_argument("--table", default="bench_backfill", help="the table (dropped first; default bench_backfill)")
    p.add_argument("--timeout", type=float, default=4 * 3600.0, help="seconds the backfill may take")
    p.add_argument("--keep", action="store_true", help="keep the stack's home (logs) afterwards")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    Area.parse(args.area)
    result = run(args.first, args.months, args.area, args.table, args.timeout, args.keep)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"backfill {result['from']}..{result['to']} of {result['area']} ({result['points']} points): "
              f"{result['months']} months in {result['wall_s']:.0f} s")
        print(f"  wall per month   {result['wall_per_month_s']:6.2f} s")
        print(f"  work per month   {result['work_per_month_s']:6.2f} s   "
              + ", ".join(f"{t} {s:.2f}" for t, s in result["work_by_step_s"].items()))
        print(f"  overhead         {result['overhead_per_month_s']:6.2f} s a month")
        print(f"  failed runs {len(result['failed_runs'])}, tasks retried {result['tasks_retried']} "
              f"({result['retries']} retries)")
        c = result["cpu_per_month"]
        print(f"  CPU a month      {c['machine_busy_s']:6.2f} s of the machine ({c['machine_busy_share']:.0%} busy): "
              + ", ".join(f"{k} {v:.2f}" for k, v in c["by_component_s"].items()))
        print("  median wait / run per task: " + ", ".join(
            f"{t} {h['wait']:.2f}/{h['run']:.2f}" for t, h in result["handover_s"].items()))
        print(f"  staging: peak {result['staging_peak_mb']:.1f} MB, at the end {result['staging_end_mb']:.1f} MB")
        print(f"  exact: {'every month' if result['exact'] else result['inexact']}")
    return 0 if result["exact"] and not result["failed_runs"] else 1
