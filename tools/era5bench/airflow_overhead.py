"""``python -m era5bench airflow-overhead``: how much of a backfill's wall time is the pipeline's own work.

It starts an isolated Airflow (api-server, scheduler, dag-processor, triggerer with LocalExecutor, its
own metadata database, local CDS and table: the end-to-end tests' stack, ``tests/e2e/stack.py``), then
for each ``--area`` runs ``airflow backfill create`` over ``--months`` months and prints, per month:

* **wall**: the backfill's wall time (from ``backfill create`` to its last run finished) divided by
  the months, i.e. what a month costs in a backfill at that concurrency, and each run's own mean
  duration (started to finished);
* **work**: the seconds the tasks themselves recorded in ``era5_metrics`` (fetch, stage, load,
  validate, compress), summed per run, and which task took what;
* the overhead (wall minus work), how many fetch tasks deferred, and what share of the validate
  task's log lines Great Expectations' "Skipping registering function" noise is.

Every month is checked exact (rows, ledger) before figures are printed: a fast wrong run is no figure.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from tempfile import mkdtemp
from typing import Any

from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.paths import PROJECT_ROOT
from era5etl.db import connect, database_url
from era5etl.track.metrics import task_seconds

GX_NOISE = "Skipping registering function"
DEFAULT_AREAS = ["46/7/45/8", "50/5/45/10"]  # 25 and 441 grid points


@dataclass
class AreaFigures:
    area: str
    points: int
    months: int
    wall_s: float
    wall_per_month_s: float
    run_mean_s: float
    work_per_month_s: float
    overhead_per_month_s: float
    work_by_task_s: dict[str, float] = field(default_factory=dict)
    deferred_fetches: int = 0
    fetch_tries: int = 0
    validate_log_lines: int = 0
    gx_noise_lines: int = 0


def _stack_module() -> Any:
    """The end-to-end tests' stack (``tests/e2e/stack.py``), imported from the checkout."""
    if str(PROJECT_ROOT) not in sys.path:
        sys.path.insert(0, str(PROJECT_ROOT))
    import tests.e2e.stack as stack

    return stack


def _wait_runs(stack: Any, run_ids: list[str], timeout: float) -> dict[str, tuple[str, float, float]]:
    """Wait until every run finished; (state, start epoch, end epoch) by run id."""
    def check() -> dict[str, tuple[str, float, float]] | None:
        with connect(stack.meta_url) as conn:
            rows = conn.execute(
                "SELECT run_id, state, coalesce(start_date, queued_at), end_date FROM dag_run"
                " WHERE dag_id = 'era5_monthly' AND run_id = ANY(%s)", (run_ids,)).fetchall()
        done = {r[0]: (str(r[1]), r[2].timestamp(), r[3].timestamp()) for r in rows
                if r[1] in ("success", "failed") and r[3] is not None}
        failed = [r for r, v in done.items() if v[0] == "failed"]
        if failed:
            with connect(stack.meta_url) as conn:
                tasks = conn.execute("SELECT run_id, task_id, state, try_number FROM task_instance WHERE run_id ="
                                     " ANY(%s) AND state NOT IN ('success', 'skipped')", (failed,)).fetchall()
                events = conn.execute("SELECT run_id, task_id, event, left(extra, 400) FROM log WHERE run_id ="
                                      " ANY(%s) AND event IN ('state mismatch', 'failed')", (failed,)).fetchall()
            raise stack.fail(f"runs failed: {failed}; tasks {tasks}; events {events}")
        return done if len(done) == len(run_ids) else None

    result: dict[str, tuple[str, float, float]] = stack.wait_for(f"{len(run_ids)} runs finished", check,
                                                                timeout=timeout, interval=1.0)
    return result


def _log_counts(stack: Any, run_ids: list[str], since: float) -> tuple[int, int, int, int]:
    """(validate log lines, of which GX noise, fetch tasks that deferred, fetch attempts) over the runs,
    from the attempts logged since ``since`` (a reprocessed run keeps its earlier attempts' logs)."""
    lines = noise = deferred = tries = 0
    for run_id in run_ids:
        base = stack.home / "logs" / "dag_id=era5_monthly" / f"run_id={run_id}"
        for path in (p for p in (base / "task_id=validate").glob("attempt=*.log") if p.stat().st_mtime >= since):
            text = path.read_text(errors="replace").splitlines()
            lines += len(text)
            noise += sum(GX_NOISE in line for line in text)
        fetch_logs = [p for p in (base / "task_id=fetch").glob("attempt=*.log")
                      if ".trigger." not in p.name and p.stat().st_mtime >= since]
        tries += len(fetch_logs)
        deferred += any("deferring" in p.read_text(errors="replace") for p in fetch_logs)
    return lines, noise, deferred, tries


def run_area(stack: Any, area: str, first: Month, months: int, max_active_runs: int, timeout: float) -> AreaFigures:
    last = first
    for _ in range(months - 1):
        last = last.next()
    began = time.time()
    backfill = stack.backfill("--from-date", first.start.date().isoformat(), "--to-date", last.start.date().isoformat(),
                              "--reprocess-behavior", "completed", "--max-active-runs", str(max_active_runs),
                              "--dag-run-conf", json.dumps({"area": area}))
    if stack.is_paused():
        stack.unpause()
    made = stack.wait_for("the backfill's runs created",
                          lambda: (r := stack.backfill_runs(int(backfill["id"]))) and len(r) >= months and r,
                          timeout=120)
    run_ids = [run_id for run_id, _ in made.values() if run_id]
    finished = _wait_runs(stack, run_ids, timeout)
    wall = max(end for _, _, end in finished.values()) - began
    durations = [end - start for _, start, end in finished.values()]
    loaded = Month.parse(min(made))
    for _ in range(len(made)):
        stack.assert_month_exact(str(loaded), area)
        loaded = loaded.next()
    with connect(stack.db_url) as conn:
        per_task = task_seconds(conn, stack.table, str(Area.parse(area)), run_ids)
    work = sum(per_task.values())
    n = len(run_ids)
    lines, noise, deferred, tries = _log_counts(stack, run_ids, began)
    return AreaFigures(
        area=area, points=Area.parse(area).points(Grid()), months=n, wall_s=round(wall, 1),
        wall_per_month_s=round(wall / n, 2), run_mean_s=round(statistics.fmean(durations), 2),
        work_per_month_s=round(work / n, 2), overhead_per_month_s=round((wall - work) / n, 2),
        work_by_task_s={t: round(s / n, 2) for t, s in per_task.items()}, deferred_fetches=deferred,
        fetch_tries=tries, validate_log_lines=lines, gx_noise_lines=noise)


def print_figures(figures: list[AreaFigures], settings: dict[str, str]) -> None:
    print("Airflow overhead: " + ", ".join(f"{k}={v}" for k, v in settings.items()))
    for f in figures:
        print(f"\n{f.area} ({f.points} points), {f.months} months in {f.wall_s:.1f} s")
        print(f"  wall per month  {f.wall_per_month_s:7.2f} s   (a run, started to done: {f.run_mean_s:.2f} s)")
        print(f"  work per month  {f.work_per_month_s:7.2f} s   "
              + ", ".join(f"{t} {s:.2f}" for t, s in f.work_by_task_s.items()))
        share = 100 * (1 - f.work_per_month_s * f.months / f.wall_s) if f.wall_s else 0.0
        print(f"  overhead        {f.overhead_per_month_s:7.2f} s a month ({share:.0f}% of the wall time)")
        print(f"  fetch tasks deferred: {f.deferred_fetches} of {f.months} ({f.fetch_tries} attempts); "
              f"validate logs: {f.gx_noise_lines} of {f.validate_log_lines} lines GX's '{GX_NOISE}'")


def _one_synthetic_download_at_a_time() -> None:
    """The local CDS writes each job's NetCDF in a thread of its own, and netCDF4's HDF5 is not
    thread-safe: two months written at once here failed a job with "NetCDF: HDF error" (a fault
    of the emulator, not of the pipeline). The benchmark's CDS writes one file at a time."""
    from localcds import synth  # the job runner calls synth.write_download

    lock = threading.Lock()
    write = synth.write_download

    def locked(*args: Any, **kwargs: Any) -> Any:
        with lock:
            return write(*args, **kwargs)

    synth.write_download = locked


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m era5bench airflow-overhead", description=__doc__.split("\n\n")[0])
    p.add_argument("--months", type=int, default=24, help="months per backfill (default 24)")
    p.add_argument("--from", dest="first", type=Month.parse, default=Month(2022, 1),
                   help="first month, YYYY-MM (default 2022-01)")
    p.add_argument("--area", action="append", help="N/W/S/E; repeat for several (default: 25 and 441 points)")
    p.add_argument("--max-active-runs", type=int, default=4, help="months at once (default 4)")
    p.add_argument("--parallelism", type=int, default=8, help="Airflow's [core] parallelism (default 8)")
    p.add_argument("--retries", type=int, default=0,
                   help="ERA5_RETRIES (default 0: a task Airflow loses fails the backfill instead of being retried)")
    p.add_argument("--preload", default="",
                   help="modules for Airflow's LocalExecutor workers to import once, in a forkserver, so every task "
                        "process starts with them (e.g. great_expectations); default: none, plain fork")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds a backfill may take (default 1800)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    areas = args.area or DEFAULT_AREAS
    for area in areas:
        Area.parse(area)
    stack_mod = _stack_module()
    from localcds.server import LocalCDS

    _one_synthetic_download_at_a_time()

    work = Path(mkdtemp(prefix="era5-overhead-"))
    settings = {"parallelism": str(args.parallelism), "max_active_runs": str(args.max_active_runs),
                "executor": "LocalExecutor", "retries": str(args.retries), "preload": args.preload or "-"}
    figures: list[AreaFigures] = []
    with LocalCDS() as cds:
        stack = stack_mod.AirflowStack(work, database_url(), cds)
        stack.env.update({"AIRFLOW__CORE__PARALLELISM": str(args.parallelism),
                          "ERA5_MAX_ACTIVE_RUNS": str(args.max_active_runs), "ERA5_RETRIES": str(args.retries)})
        if args.preload:
            stack.env.update({"AIRFLOW__SCHEDULER__MP_START_METHOD": "forkserver",
                              "AIRFLOW__CORE__MP_FORKSERVER_PRELOAD": args.preload})
        try:
            stack.migrate()
            for component in stack_mod.COMPONENTS:
                stack.start(component)
            stack_mod._wait_ready(stack)
            for area in areas:
                figures.append(run_area(stack, area, args.first, args.months, args.max_active_runs, args.timeout))
        except BaseException:
            print(f"the stack's logs are kept in {work}", file=sys.stderr)
            raise
        finally:
            stack.close()
    shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps({"settings": settings, "areas": [asdict(f) for f in figures]}, indent=1))
    else:
        print_figures(figures, settings)
    return 0


__all__ = ["AreaFigures", "build_parser", "main", "run_area"]
