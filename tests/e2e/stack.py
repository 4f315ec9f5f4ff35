"""A running Airflow for the end-to-end tests: api-server, scheduler, dag-processor and triggerer.

A pytest plugin (test modules load it with ``pytest_plugins = ["tests.e2e.stack"]``), so the
session-scoped ``airflow_stack`` fixture is defined once and every module shares one stack.

The stack is what a user runs, on this machine, with LocalExecutor:

* its own AIRFLOW_HOME in a temporary folder (the simple auth manager's generated password, a JWT
  secret of its own, the task logs) and its own metadata database on the local server
  (``airflow_e2e_<hex>``, migrated, dropped afterwards), so runs of ``era5_monthly`` by other tests
  (``airflow dags test`` on the checkout's metadata database) can neither be seen nor disturbed;
* one hypertable of its own (``ERA5_TABLE``), a small area (``ERA5_AREA``), retries two seconds
  apart (``ERA5_RETRIES``/``ERA5_RETRY_DELAY_S``), and its own local CDS server
  (``CDSAPI_URL``/``CDSAPI_KEY``), whose faults the tests switch on and off;
* LocalExecutor's workers forked from a forkserver that preloaded ``era5etl.airflow.preload``, as
  ``airflow up`` and the compose file start them;
* ``ERA5_START_MONTH`` set to next month: the schedule creates no run while the tests run (the
  first month has not begun), yet backfills of past months work, since a backfill's runs
  are not held to the DAG's start date (catch-up is off unless ``ERA5_CATCHUP=true``, so an
  unpaused DAG creates no run of a past month either). The DAG starts paused (Airflow's default): a backfill of a
  paused DAG is created but its runs stay queued until the DAG is unpaused (the UI's backfill
  dialog offers "Unpause ... on trigger"; :meth:`AirflowStack.unpause` does it through the API).

Every Airflow process runs in a process group of its own and the whole group is killed in
teardown, whatever happened: the components spawn ``airflow`` subprocesses (LocalExecutor
workers, task supervisors and task processes) that would outlive their parent. Each component
logs to a file of its own; failures quote their tails.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import pytest

from era5etl.cli.database import airflow_environment
from era5etl.cli.stack import PRELOAD
from era5etl.core.grid import Area, Grid, expected_rows
from era5etl.core.months import Month
from era5etl.db import connect, database_url, with_database
from localcds.server import LocalCDS
from tests.e2e.apiserver import clean

VENV_BIN = Path(sys.executable).parent
AIRFLOW = str(VENV_BIN / "airflow")
DAG_ID = "era5_monthly"
SIMPLE_AUTH = "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager"
AREA = "46/7/45/8"  # 25 grid points: a month loads and validates in seconds
COMPONENTS = ("api-server", "scheduler", "dag-processor", "triggerer")
STARTUP_TIMEOUT_S = 180.0
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
T = TypeVar("T")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def next_month(now: datetime | None = None) -> Month:
    return Month.of(now or datetime.now(UTC)).next()


class StackError(AssertionError):
    """The stack did not do what a test waited for; the message carries the components' logs."""


class AirflowStack:
    def __init__(self, work: Path, db_url: str, cds: LocalCDS) -> None:
        self.work = work
        self.db_url = db_url
        self.cds = cds
        self.home = work / "airflow-home"
        self.logs = work / "logs"
        self.staging = work / "staging"
        for folder in (self.home, self.logs, self.staging):
            folder.mkdir(parents=True, exist_ok=True)
        self.table = f"e2e_{uuid.uuid4().hex[:10]}"
        self.area = AREA
        self.meta_db = f"airflow_e2e_{uuid.uuid4().hex[:10]}"
        # The pools the DAG's tasks use, as scripts/setup.sh creates them (a stack may change a size).
        self.pools = {"era5_cds": 4, "era5_db": 2}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.down: set[str] = set()  # components stopped or killed on purpose
        # Every process group started, restarted components' earlier ones too: a scheduler killed
        # alone leaves its LocalExecutor workers behind in its group, and they must not outlive the test.
        self.groups: list[int] = []
        self._token: str | None = None
        self.password = ""
        meta = with_database(db_url, self.meta_db).replace("postgresql://", "postgresql+psycopg2://", 1)
        self.meta_url = with_database(db_url, self.meta_db)
        self.env = {
            **os.environ, **airflow_environment(),
            "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}",
            "AIRFLOW_HOME": str(self.home),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": meta,
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__PARALLELISM": "8",
            # As `airflow up` and the compose file run LocalExecutor: its workers forked from a
            # forkserver that imported Great Expectations and the pipeline once, instead of each task
            # process importing them (seconds a task; Great Expectations alone in every validate).
            "AIRFLOW__SCHEDULER__MP_START_METHOD": "forkserver",
            "AIRFLOW__CORE__MP_FORKSERVER_PRELOAD": PRELOAD,
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{self.url}/execution/",
            "AIRFLOW__CORE__AUTH_MANAGER": SIMPLE_AUTH,
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
            "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_urlsafe(32),
            "AIRFLOW__API__SECRET_KEY": secrets.token_urlsafe(32),
            "AIRFLOW__API__BASE_URL": self.url,
            "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
            "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(free_port()),
            # The DAG file is parsed once at start; re-parsing it every 30 s only costs CPU here.
            "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": "600",
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "600",
            # The tasks of a killed scheduler are found orphaned (its heartbeat older than the
            # threshold) and reset within seconds rather than the default five minutes.
            "AIRFLOW__SCHEDULER__ORPHANED_TASKS_CHECK_INTERVAL": "10",
            "AIRFLOW__SCHEDULER__SCHEDULER_HEALTH_CHECK_THRESHOLD": "15",
            # A task whose process vanished otherwise is failed after this (default 300 s).
            "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": "120",
            # The pipeline's settings, as the DAG's params default to them.
            "ERA5_DATABASE_URL": db_url,
            "ERA5_TABLE": self.table,
            "ERA5_AREA": self.area,
            "ERA5_START_MONTH": str(next_month()),
            "ERA5_RETRIES": "2",
            "ERA5_RETRY_DELAY_S": "2",
            "ERA5_MAX_ACTIVE_RUNS": "4",
            "ERA5_STAGING_DIR": str(self.staging),
            "CDSAPI_URL": cds.url,
            "CDSAPI_KEY": cds.key,
            "ERA5_CDS_POLL_BASE": "0.2",
            "ERA5_CDS_POLL_CAP": "0.5",
            "GX_ANALYTICS_ENABLED": "False",
        }

    # ---------------------------------------------------------------------------------------------
    # Processes

    def migrate(self) -> None:
        with connect(self.db_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.meta_db}"')
        out = self.cli("db", "migrate", timeout=300)
        if out.returncode != 0:
            raise StackError(f"airflow db migrate failed:\n{(out.stdout + out.stderr)[-4000:]}")

    def start(self, component: str, *extra: str, name: str | None = None, env: dict[str, str] | None = None) -> None:
        """Start one component (``api-server``, ``scheduler``, ...) in a process group of its own.

        ``name`` (default: the component) keys it and names its log, ``extra`` arguments and ``env``
        are added to its command line and environment: two ``celery worker`` side by side.
        """
        name = name or component
        self.down.discard(name)
        args = [AIRFLOW, *component.split(), *extra]
        if component == "api-server":
            args += ["--host", "127.0.0.1", "--port", str(self.port), "--workers", "1"]
        with open(self.logs / f"{name}.log", "ab") as out:
            out.write(f"\n==== started {datetime.now(UTC).isoformat()} ====\n".encode())
            out.flush()
            self.procs[name] = subprocess.Popen(args, env={**self.env, **(env or {})}, stdout=out,
                                                stderr=subprocess.STDOUT, start_new_session=True, cwd=self.work)
        self.groups.append(self.procs[name].pid)

    def kill(self, component: str, sig: int = signal.SIGKILL, whole_group: bool = True) -> None:
        """Signal a component (by default its whole process group: workers and tasks too) and reap it.

        With ``whole_group=False`` only the component's own process gets the signal, as with
        ``kill -9 <pid>`` or the OOM killer; what it started lives on, orphaned, in its group.
        """
        proc = self.procs[component]
        self.down.add(component)
        try:
            if whole_group:
                os.killpg(proc.pid, sig)
            else:
                os.kill(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    def stop(self, component: str) -> None:
        """SIGTERM the component's group, then SIGKILL whatever of the group is left after a grace period."""
        proc = self.procs.get(component)
        if proc is None:
            return
        self.down.add(component)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=20)
        # The leader has exited or is stuck: nothing of its group may outlive the test.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def descendants(self, component: str) -> set[int]:
        """The component's process and every process under it (executor workers, task supervisors, tasks)."""
        import psutil

        try:
            root = psutil.Process(self.procs[component].pid)
            return {root.pid, *(p.pid for p in root.children(recursive=True))}
        except psutil.NoSuchProcess:
            return set()

    def frozen_in_copy(self, pids: set[int], timeout: float = 15.0) -> bool:
        """Whether processes a test froze with SIGSTOP (``pids``) hold a chunk's transaction open with a
        COPY in it: killed, they lose that chunk's rows for certain, however far its COPY had got.

        First the server is let finish what it was doing for them: every session of theirs ends up
        waiting on the client (none can commit any more). False when that does not happen within
        ``timeout`` (a session waiting on a lock), or no COPY's transaction is open. The table itself
        is not read here: the frozen transaction may hold its chunk's ACCESS EXCLUSIVE lock (TRUNCATE)."""
        import psutil

        ports = [c.laddr.port for c in psutil.net_connections(kind="tcp") if c.pid in pids and c.laddr]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with connect(self.db_url) as conn:
                row = conn.execute(
                    "SELECT count(*) FILTER (WHERE state <> 'idle' AND wait_event_type IS DISTINCT FROM 'Client'),"
                    " count(*) FILTER (WHERE xact_start IS NOT NULL AND query ILIKE 'COPY %%'"
                    "                  AND state IN ('active', 'idle in transaction'))"
                    " FROM pg_stat_activity WHERE client_port = ANY(%s)", (ports,)).fetchone()
            assert row is not None
            if row[0] == 0:
                return bool(row[1])
            time.sleep(0.05)
        return False

    def close(self) -> None:
        # SIGTERM to every component at once (each shuts down in parallel), then stop() each: what
        # has not exited after its grace period is SIGKILLed with its whole process group.
        for proc in self.procs.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        for component in reversed(list(self.procs)):
            self.stop(component)
        for group in self.groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
        with connect(self.db_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.meta_db}" WITH (FORCE)')
        clean(self.db_url, self.table, str(self.cds.url))

    def log_tails(self, chars: int = 3000) -> str:
        parts = []
        for path in sorted(self.logs.glob("*.log")):
            text = path.read_text(errors="replace")
            parts.append(f"---- {path.name} (last {chars} chars) ----\n{text[-chars:]}")
        return "\n".join(parts)

    def task_log(self, run_id: str, task_id: str) -> str:
        folder = self.home / "logs" / f"dag_id={DAG_ID}" / f"run_id={run_id}" / f"task_id={task_id}"
        return "\n".join(f"---- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(folder.glob("*")))

    def fail(self, message: str) -> StackError:
        return StackError(f"{message}\n{self.log_tails()}")

    def wait_for(self, what: str, check: Callable[[], T | None], timeout: float = 240.0,
                 interval: float = 0.5) -> T:
        """Poll ``check`` until it returns something truthy; fail with the logs after ``timeout``."""
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None and name not in self.down:
                    raise self.fail(f"{name} exited ({proc.returncode}) while waiting for {what}")
            try:
                value = check()
            except (OSError, urllib.error.URLError) as exc:
                last_error, value = exc, None
            if value:
                return value
            time.sleep(interval)
        raise self.fail(f"timed out after {timeout:.0f} s waiting for {what} (last error: {last_error})")

    # ---------------------------------------------------------------------------------------------
    # The REST API and the CLI

    def token(self) -> str:
        if self._token is None:
            body = json.dumps({"username": "admin", "password": self.password}).encode()
            request = urllib.request.Request(f"{self.url}/auth/token", data=body, method="POST",
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=30) as response:
                self._token = str(json.load(response)["access_token"])
        return self._token

    def api(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.url}/api/v2/{path.lstrip('/')}", data=data, method=method,
                                         headers={"Authorization": f"Bearer {self.token()}",
                                                  "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                text = response.read().decode()
        except urllib.error.HTTPError as exc:
            raise StackError(f"{method} {path}: HTTP {exc.code} {exc.read().decode(errors='replace')}") from None
        return json.loads(text) if text else None

    def cli(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        return subprocess.run([AIRFLOW, *args], env=self.env, capture_output=True, text=True, timeout=timeout,
                              cwd=self.work)

    def pause(self, paused: bool = True) -> None:
        self.api("PATCH", f"dags/{DAG_ID}", {"is_paused": paused})

    def unpause(self) -> None:
        self.pause(False)

    def is_paused(self) -> bool:
        return bool(self.api("GET", f"dags/{DAG_ID}")["is_paused"])

    # ---------------------------------------------------------------------------------------------
    # The browser: Debian's chromium driven by Playwright, as in test_ui.py

    def browser(self, pw: Any) -> Any:
        return pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)

    def login(self, page: Any, path: str) -> None:
        """Open ``path`` in the UI, signing in on the login page it redirects to."""
        page.goto(self.url + path)
        page.get_by_label("Username").fill("admin")
        page.get_by_label("Password").fill(self.password)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(f"**{path.split('?')[0]}**")

    def runs(self) -> dict[str, dict[str, Any]]:
        """The DAG's runs by month (YYYY-MM of the logical date)."""
        out = self.api("GET", f"dags/{DAG_ID}/dagRuns?limit=100&order_by=logical_date")
        return {run["logical_date"][:7]: run for run in out["dag_runs"] if run.get("logical_date")}

    def task_instances(self, run_id: str) -> dict[str, dict[str, Any]]:
        out = self.api("GET", f"dags/{DAG_ID}/dagRuns/{run_id}/taskInstances")
        return {ti["task_id"]: ti for ti in out["task_instances"]}

    def backfills(self) -> list[dict[str, Any]]:
        return list(self.api("GET", f"backfills?dag_id={DAG_ID}&limit=100")["backfills"])

    def wait_run_success(self, run_id: str, what: str, timeout: float = 300.0) -> None:
        """Wait until the run ``run_id`` succeeds; fail at once, with its task instances, if it fails."""
        def done() -> bool:
            state = self.api("GET", f"dags/{DAG_ID}/dagRuns/{quote(run_id)}")["state"]
            if state == "failed":
                raise self.fail(f"{run_id} failed: {self.task_instances(run_id)}")
            return bool(state == "success")

        self.wait_for(what, done, timeout=timeout)

    def wait_runs(self, months: list[str], states: set[str], timeout: float = 300.0) -> dict[str, dict[str, Any]]:
        """Wait until each month has a run in one of ``states``; fail at once if one ends in another."""
        final = {"success", "failed"}

        def check() -> dict[str, dict[str, Any]] | None:
            runs = self.runs()
            chosen = {m: runs[m] for m in months if m in runs}
            for month, run in chosen.items():
                if run["state"] in final and run["state"] not in states:
                    raise self.fail(f"the run of {month} ended {run['state']}, not {states}:\n"
                                    f"{json.dumps(self.task_instances(run['dag_run_id']), indent=1)[:4000]}")
            if len(chosen) == len(months) and all(r["state"] in states for r in chosen.values()):
                return chosen
            return None

        return self.wait_for(f"runs of {months} in {states}", check, timeout=timeout, interval=1.0)

    def newest_backfill(self) -> dict[str, Any]:
        return max(self.backfills(), key=lambda b: int(b["id"]))

    def backfill(self, *args: str) -> dict[str, Any]:
        """``airflow backfill create`` for the DAG; returns the backfill it created (from the REST API)."""
        self.wait_no_active_backfill()
        before = {b["id"] for b in self.backfills()}
        out = self.cli("backfill", "create", "--dag-id", DAG_ID, *args)
        if out.returncode != 0:
            raise self.fail(f"airflow backfill create {' '.join(args)} failed:\n{(out.stdout + out.stderr)[-3000:]}")
        created = [b for b in self.backfills() if b["id"] not in before]
        if len(created) != 1:
            raise self.fail(f"airflow backfill create {' '.join(args)} made {created}:\n{out.stdout[-2000:]}")
        return created[0]

    def wait_no_active_backfill(self) -> None:
        """Airflow runs one backfill per DAG at a time; the scheduler marks one complete every 30 s."""
        self.wait_for("the DAG's earlier backfills marked complete",
                      lambda: all(b["completed_at"] for b in self.backfills()), timeout=120)

    def backfill_runs(self, backfill_id: int) -> dict[str, tuple[str | None, str | None]]:
        """What a backfill did per month: (run id, None) for a run it created or cleared, (None, reason) if not."""
        with connect(self.meta_url) as conn:
            rows = conn.execute(
                "SELECT b.logical_date, r.run_id, b.exception_reason FROM backfill_dag_run b"
                " LEFT JOIN dag_run r ON r.id = b.dag_run_id WHERE b.backfill_id = %s", (backfill_id,)).fetchall()
        return {f"{d:%Y-%m}": (run_id, reason) for d, run_id, reason in rows}

    def scheduler_heartbeat(self) -> datetime | None:
        with connect(self.meta_url) as conn:
            row = conn.execute("SELECT max(latest_heartbeat) FROM job WHERE job_type = 'SchedulerJob'"
                               " AND state = 'running'").fetchone()
        return row[0] if row else None

    def wait_backfill_complete(self, backfill_id: int, timeout: float = 120.0) -> dict[str, Any]:
        return self.wait_for(f"backfill {backfill_id} marked complete",
                             lambda: (b := self.api("GET", f"backfills/{backfill_id}")) and b["completed_at"] and b,
                             timeout=timeout)

    # ---------------------------------------------------------------------------------------------
    # The data

    def expected(self, month: str, area: str | None = None) -> int:
        return expected_rows(Month.parse(month), Area.parse(area or self.area), Grid())

    def rows(self, month: str) -> tuple[int, int]:
        """(rows, distinct (time, location_id)) of the month in the stack's table."""
        m = Month.parse(month)
        with connect(self.db_url) as conn:
            if conn.execute("SELECT to_regclass(%s)", (self.table,)).fetchone() == (None,):
                return 0, 0
            row = conn.execute(
                f'SELECT count(*), count(DISTINCT (time, location_id)) FROM "{self.table}"'
                " WHERE time >= %s AND time < %s", (m.start, m.end)).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    def ledger(self, month: str, area: str | None = None) -> dict[str, Any] | None:
        with connect(self.db_url) as conn:
            cur = conn.execute(
                "SELECT state, rows, expected_rows, run_id, error, validated_at, validation_failed"
                " FROM era5_months WHERE table_name = %s AND month = %s AND area = %s",
                (self.table, Month.parse(month).start.date(), str(Area.parse(area or self.area))))
            row = cur.fetchone()
            names = [d.name for d in cur.description or []]
        return dict(zip(names, row, strict=True)) if row else None

    def loads(self, month: str, area: str | None = None) -> int:
        """How many times the month was loaded (the load step's figures in era5_metrics)."""
        with connect(self.db_url) as conn:
            row = conn.execute(
                "SELECT count(*) FROM era5_metrics WHERE table_name = %s AND month = %s AND area = %s"
                " AND task = 'load'", (self.table, Month.parse(month).start.date(), str(Area.parse(area or self.area)))
            ).fetchone()
        return int(row[0]) if row else 0

    def assert_month_exact(self, month: str, area: str | None = None) -> None:
        """The month holds exactly its rows, once each, and the ledger says validated with that count."""
        want = self.expected(month, area)
        assert self.rows(month) == (want, want), (month, self.rows(month), want)
        entry = self.ledger(month, area)
        assert entry is not None, month
        assert (entry["state"], entry["rows"], entry["expected_rows"]) == ("validated", want, want), entry
        assert entry["validated_at"] is not None and entry["validation_failed"] == [], entry


def _wait_ready(stack: AirflowStack) -> None:
    def healthy() -> bool:
        if stack.procs["api-server"].poll() is not None:
            raise stack.fail("the api-server exited")
        try:
            with urllib.request.urlopen(f"{stack.url}/api/v2/monitor/health", timeout=10) as response:
                health = json.load(response)
        except (OSError, urllib.error.URLError):
            return False
        wanted = ("metadatabase", "scheduler", "triggerer", "dag_processor")
        return all((health.get(k) or {}).get("status") == "healthy" for k in wanted)

    stack.wait_for("every component healthy", healthy, timeout=STARTUP_TIMEOUT_S)
    stack.password = json.loads((stack.home / "simple_auth_manager_passwords.json.generated").read_text())["admin"]

    def parsed() -> bool:
        try:
            dag = stack.api("GET", f"dags/{DAG_ID}")
        except StackError as exc:
            if "404" in str(exc):
                return False
            raise
        return bool(dag)

    stack.wait_for(f"{DAG_ID} parsed", parsed, timeout=STARTUP_TIMEOUT_S)
    errors = stack.api("GET", "importErrors")
    if errors["total_entries"]:
        raise stack.fail(f"DAG import errors: {errors}")
    for name, slots in stack.pools.items():
        stack.api("POST", "pools", {"name": name, "slots": slots, "include_deferred": False})


@contextlib.contextmanager
def running_stack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                  derived: Callable[[AirflowStack], dict[str, str]] | None = None,
                  pools: dict[str, int] | None = None, **settings: str) -> Iterator[AirflowStack]:
    """A stack started and torn down around the block; ``settings`` override its environment, and so
    does ``derived(stack)``, for settings made of the stack's own names (its metadata database);
    ``pools`` override the sizes of the DAG's pools."""
    work = tmp_path_factory.mktemp("airflow-stack")
    db_url = database_url()
    with LocalCDS() as cds:
        stack = AirflowStack(work, db_url, cds)
        stack.pools.update(pools or {})
        stack.env.update(settings)
        if derived is not None:
            stack.env.update(derived(stack))
        try:
            stack.migrate()
            for component in COMPONENTS:
                stack.start(component)
            _wait_ready(stack)
            yield stack
        finally:
            stack.close()
            # A failed session keeps the components' logs and the task logs for a look afterwards.
            if os.environ.get("ERA5_E2E_KEEP") or request.session.testsfailed:
                print(f"\nthe Airflow stack's logs are kept in {work}")
            else:
                shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="session")
def airflow_stack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AirflowStack]:
    with running_stack(request, tmp_path_factory) as stack:
        yield stack
