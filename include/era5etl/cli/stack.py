"""``python -m era5etl airflow up|down|status``: Airflow and the local CDS for this checkout, in one command.

``up`` starts the local TimescaleDB, migrates Airflow's metadata database, creates the DAG's pools,
starts the local CDS (``python -m localcds``; ``--real-cds`` leaves ``CDSAPI_URL``/``CDSAPI_KEY``,
``~/.cdsapirc`` or the ``era5_cds`` connection in charge) and Airflow's api-server, scheduler,
dag-processor and triggerer, each in a process group of its own logging to a file of its own. It
waits until the API reports every component healthy and the DAG parsed, prints the URL, the login
and how to stop, and stays in the foreground: Ctrl-C (or ``down`` from another shell) stops every
process group it started. A component that exits (its database restarting) is started again
(``cli.supervise``). The state (process groups, URL, home) is a JSON file in the Airflow home.

Settings fit for this machine: LocalExecutor with ``2 x cores`` worker slots (``airflow standalone``
keeps Airflow's default of 32), one api-server worker, the DAG file re-parsed every two minutes, and
the executor's workers started from a forkserver that imported Great Expectations and the pipeline's
steps once (``--preload``, default :data:`PRELOAD`; ``--no-preload`` turns it off): each task process
is forked from a worker, so the validate task does not pay GX's import (~4 s here) every month; and
a finished task handed over to the next within a second (``era5etl.cli.database.LATENCY``).
Any ``AIRFLOW__*``/``ERA5_*`` variable already in the environment wins over these, except what the
options decide (home, ports, ``--metadata-db``); with the local CDS, ``CDSAPI_URL``/``CDSAPI_KEY`` are its.

Spawns processes only: nothing here imports Airflow.
"""

# Imports inside functions: `era5etl --help` and each command load only what that command runs (start-
# up time).

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from era5etl.cli.supervise import Restarts, group_alive, stop_groups, supervise
from era5etl.core.errors import Failure, InputError
from era5etl.core.files import open_private, write_json
from era5etl.core.paths import PROJECT_ROOT
from era5etl.core.ports import free_port, port_free

COMPONENTS = ("api-server", "scheduler", "dag-processor", "triggerer")
POOLS = {"era5_cds": "cds_pool_slots", "era5_db": "db_pool_slots"}
STATE_FILE = "era5-stack.json"
PASSWORDS_FILE = "simple_auth_manager_passwords.json.generated"
USER = "admin"
BIN = Path(sys.executable).parent
# What LocalExecutor's workers import once, in a forkserver, for every task process forked from them:
# era5etl.airflow.preload lists it (Great Expectations, the DAGs, the plugins, the hook) and why.
# Airflow 3.3's own settings; docs/benchmarks.md, "Airflow's overhead per task", has the measurement.
PRELOAD = "era5etl.airflow.preload"


class LaunchError(Failure):
    """A component did not start or stay up; the message names its log (exit status 1)."""


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("airflow", help="Airflow with the local CDS in one command: up (foreground), down, status")
    p.add_argument("action", choices=["up", "down", "status"],
                   help="up: set up, start, print the URL and login, stop on Ctrl-C; down: stop what up started")
    p.add_argument("--home", type=Path, default=None,
                   help="AIRFLOW_HOME (default: $AIRFLOW_HOME, else .local/airflow); the state file lives there")
    p.add_argument("--port", type=int, default=8080, help="the api-server's (UI, REST) port (default 8080)")
    p.add_argument("--cds-port", type=int, default=8765, help="the local CDS's port (default 8765)")
    p.add_argument("--metadata-db", default=None,
                   help="Airflow's metadata database on the local server, created if missing (default: airflow)")
    p.add_argument("--real-cds", action="store_true",
                   help="start no local CDS: the fetch uses the era5_cds connection, CDSAPI_URL/KEY or ~/.cdsapirc")
    p.add_argument("--timeout", type=float, default=240.0, help="seconds to wait for a healthy Airflow")
    p.add_argument("--preload", default=PRELOAD,
                   help=f"modules the executor's workers import once in a forkserver, so tasks start with them "
                        f"(default {PRELOAD})")
    p.add_argument("--no-preload", dest="preload", action="store_const", const="",
                   help="no forkserver: every task process imports what it needs itself")
    p.set_defaults(func=cmd_airflow)


def cmd_airflow(args: argparse.Namespace) -> int:
    home = (args.home or Path(os.environ.get("AIRFLOW_HOME") or PROJECT_ROOT / ".local" / "airflow")).resolve()
    if args.action == "down":
        stopped = down(home)
        print(f"stopped {stopped} process group(s)" if stopped else "not running")
        return 0
    if args.action == "status":
        state = _read_state(home)
        alive = [g for g in state["groups"].values() if group_alive(g)] if state else []
        if not (state and alive):
            print("not running")
            return 3
        procs, pss = _footprint(set(alive))
        print(f"running: {state['url']} ({len(alive)} process groups, {procs} processes, "
              f"{pss / 2**20:.0f} MiB PSS)")
        return 0
    try:
        return up(home, args)
    except LaunchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


# -------------------------------------------------------------------------------------------------
# up


def environment(home: Path, port: int, meta_url: str, cds: tuple[str, str] | None,
                explicit_meta: bool = False, preload: str = PRELOAD) -> dict[str, str]:
    """The components' environment: this checkout's Airflow settings, sized for this machine;
    ``preload``: the modules of the workers' forkserver ("" for none)."""
    from era5etl.cli.database import airflow_environment

    secrets_file = home / "era5-secrets.json"
    if not secrets_file.exists():  # one JWT secret for every component, kept across restarts
        write_json(secrets_file, {"jwt": secrets.token_urlsafe(32), "api": secrets.token_urlsafe(32)}, private=True)
    keys = json.loads(secrets_file.read_text())
    url = f"http://127.0.0.1:{port}"
    ours = {
        **airflow_environment(),
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": meta_url.replace("postgresql://", "postgresql+psycopg2://", 1),
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{url}/execution/",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{USER}:admin",
        "AIRFLOW__API_AUTH__JWT_SECRET": keys["jwt"],
        "AIRFLOW__API__SECRET_KEY": keys["api"],
        "AIRFLOW__API__BASE_URL": url,
        "AIRFLOW__API__WORKERS": "1",
        "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
        "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(free_port()),
        "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": "120",
        **({"CDSAPI_URL": cds[0], "CDSAPI_KEY": cds[1]} if cds else {}),
        **({"AIRFLOW__SCHEDULER__MP_START_METHOD": "forkserver", "AIRFLOW__CORE__MP_FORKSERVER_PRELOAD": preload}
           if preload else {}),
    }
    # What the user set wins (e.g. `airflow-env`'s exports, or ERA5_* settings), but:
    env = {**ours, **os.environ}
    # What the command's options decide wins over the environment: the home, the port the other
    # components reach the api-server on, and the metadata database (given, or another home's).
    forced = ["AIRFLOW_HOME", "AIRFLOW__CORE__EXECUTION_API_SERVER_URL", "AIRFLOW__API__BASE_URL"]
    if not preload:  # --no-preload: none, whatever the environment says
        for key in ("AIRFLOW__SCHEDULER__MP_START_METHOD", "AIRFLOW__CORE__MP_FORKSERVER_PRELOAD"):
            env.pop(key, None)
    if explicit_meta or (os.environ.get("AIRFLOW_HOME") and Path(os.environ["AIRFLOW_HOME"]).resolve() != home):
        forced.append("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN")
    env.update({key: ours[key] for key in forced})
    env["PATH"] = f"{BIN}:{os.environ.get('PATH', '')}"
    return env


def _set_up(home: Path, args: argparse.Namespace, logs: Path) -> dict[str, str]:
    """The local TimescaleDB, Airflow's metadata database migrated and the DAG's pools; the
    components' environment."""
    from era5etl import settings
    from era5etl.db import connect, database_url, with_database

    s = settings.load()
    print("setting up: the local TimescaleDB, Airflow's metadata database, pools", flush=True)
    db_url = database_url()
    meta_name = args.metadata_db or "airflow"
    with connect(db_url, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (meta_name,)).fetchone() is None:
            from psycopg import sql

            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(meta_name)))
    env = environment(home, args.port, with_database(db_url, meta_name), None, explicit_meta=bool(args.metadata_db),
                      preload=args.preload)
    # The components use the server just provisioned: without this, each task process provisioned it
    # again to learn its URL (pg_isready in the server's root, three connections: ~50 ms a task).
    env.setdefault("ERA5_DATABASE_URL", db_url)
    _run(env, logs / "setup.log", "db", "migrate")
    for pool, field in POOLS.items():
        _run(env, logs / "setup.log", "pools", "set", pool, str(getattr(s, field)), f"ERA5: {pool}")
    return env


def up(home: Path, args: argparse.Namespace) -> int:
    state = _read_state(home)
    if state and any(group_alive(g) for g in state["groups"].values()):
        raise InputError(f"already running at {state['url']} (home {home}): `python -m era5etl airflow down` first")
    for port in (args.port, *(() if args.real_cds else (args.cds_port,))):
        if not port_free(port):
            raise InputError(f"port {port} is in use: choose another with --port/--cds-port")
    logs = private_home(home)
    env = _set_up(home, args, logs)

    groups: dict[str, int] = {}
    state = {"home": str(home), "url": f"http://127.0.0.1:{args.port}", "supervisor": os.getpid(),
             "groups": groups, "logs": str(logs)}
    stopping = False

    def stop(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        cds = None
        if not args.real_cds:
            (home / "localcds").mkdir(exist_ok=True)
            groups["localcds"] = _spawn(env, logs / "localcds.log", [
                str(BIN / "python"), "-m", "localcds", "--port", str(args.cds_port),
                "--workdir", str(home / "localcds")])
            _write_state(home, state)
            cds = _localcds_settings(logs / "localcds.log", args.timeout)
            env.update({"CDSAPI_URL": cds[0], "CDSAPI_KEY": cds[1]})

        def start(component: str) -> int:
            extra = ["--host", "127.0.0.1", "--port", str(args.port)] if component == "api-server" else []
            return _spawn(env, logs / f"{component}.log", [str(BIN / "airflow"), component, *extra])

        for component in COMPONENTS:
            groups[component] = start(component)
            _write_state(home, state)
        _write_state(home, state)
        _wait_healthy(state, args.timeout, lambda: stopping)
        password = json.loads((home / PASSWORDS_FILE).read_text())[USER]
        where_cds = f"{cds[0]} (the local CDS)" if cds else "the era5_cds connection, CDSAPI_URL/KEY or ~/.cdsapirc"
        print(f"Airflow is up: {state['url']}  (DAG era5_monthly, page: Browse -> ERA5 months)\n"
              f"  user {USER}, password {password}  (from {home / PASSWORDS_FILE})\n"
              f"  CDS: {where_cds}\n"
              f"  logs: {logs}\n"
              f"  stop: Ctrl-C here, or `python -m era5etl airflow down --home {home}` from another shell",
              flush=True)
        # A component that exits (its database restarting) is started again; the local CDS is not
        # (a new one would hand out a new key).
        dead = supervise(groups, start, lambda: stopping, Restarts(), lambda line: print(line, flush=True),
                         restartable=COMPONENTS, on_change=lambda: _write_state(home, state))
        if dead:
            print(f"error: {', '.join(dead)} exited and is not started again; stopping the rest (logs in {logs})",
                  file=sys.stderr)
            return 1
        return 0
    finally:
        print("stopping ...", flush=True)
        stop_groups(list(groups.values()))
        (home / STATE_FILE).unlink(missing_ok=True)
        print("stopped", flush=True)


def private_home(home: Path) -> Path:
    """The Airflow home and the stack's log folder made (or put right) owner-only, and every file
    in them that holds or echoes a secret 0600; returns the log folder. Airflow writes the generated
    admin password into its home and the api-server logs it: both are the owner's alone."""
    logs = home / "logs" / "era5-stack"
    logs.mkdir(parents=True, exist_ok=True)
    for folder in (home, home / "logs", logs):
        folder.chmod(0o700)
    for secret in (home / PASSWORDS_FILE, home / STATE_FILE, home / "era5-secrets.json", home / "airflow.cfg",
                   *logs.glob("*.log")):
        with contextlib.suppress(FileNotFoundError):
            secret.chmod(0o600)
    return logs


def _localcds_settings(log: Path, timeout: float) -> tuple[str, str]:
    """``CDSAPI_URL`` and ``CDSAPI_KEY`` as the local CDS printed them once it listens."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = dict(line.strip().split("=", 1) for line in log.read_text(errors="replace").splitlines()
                     if line.strip().startswith(("CDSAPI_URL=", "CDSAPI_KEY=")))
        if {"CDSAPI_URL", "CDSAPI_KEY"} <= found.keys():
            return found["CDSAPI_URL"], found["CDSAPI_KEY"]
        time.sleep(0.2)
    raise LaunchError(f"the local CDS did not start: see {log}")


def _wait_healthy(state: dict[str, Any], timeout: float, stopping: Any) -> None:
    url, deadline = state["url"], time.monotonic() + timeout
    wanted = ("metadatabase", "scheduler", "triggerer", "dag_processor")
    while time.monotonic() < deadline and not stopping():
        dead = [name for name, g in state["groups"].items() if not group_alive(g)]
        if dead:
            raise LaunchError(f"{', '.join(dead)} exited while starting: see {state['logs']}")
        with contextlib.suppress(OSError, ValueError):
            with urllib.request.urlopen(f"{url}/api/v2/monitor/health", timeout=5) as r:
                health = json.load(r)
            if all((health.get(k) or {}).get("status") == "healthy" for k in wanted):
                return
        time.sleep(1.0)
    if not stopping():
        raise LaunchError(f"Airflow was not healthy after {timeout:.0f} s: see {state['logs']}")


# -------------------------------------------------------------------------------------------------
# down, processes, state


def down(home: Path) -> int:
    """Stop every process group ``up`` started for ``home`` (and its foreground process); how many were alive."""
    state = _read_state(home)
    if not state:
        return 0
    groups = [g for g in state["groups"].values() if group_alive(g)]
    with contextlib.suppress(ProcessLookupError):
        os.kill(int(state["supervisor"]), signal.SIGTERM)  # it stops the groups itself, too
    stop_groups(list(state["groups"].values()))
    (home / STATE_FILE).unlink(missing_ok=True)
    return len(groups)


def _footprint(groups: set[int]) -> tuple[int, int]:
    """Processes in ``groups`` and their proportional memory (PSS: shared pages split between them)."""
    import psutil  # Airflow's own dependency

    count = pss = 0
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError):
            if os.getpgid(proc.pid) in groups:
                pss += int(proc.memory_full_info().pss)
                count += 1
    return count, pss


# Every file a component creates (the generated passwords, its logs, task logs) is its owner's alone.
UMASK = 0o077


def _spawn(env: dict[str, str], log: Path, argv: list[str]) -> int:
    with open_private(log, "ab") as out:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, cwd=PROJECT_ROOT, umask=UMASK)
    return proc.pid


def _run(env: dict[str, str], log: Path, *args: str) -> None:
    with open_private(log, "ab") as out:
        done = subprocess.run([str(BIN / "airflow"), *args], env=env, stdout=out, stderr=subprocess.STDOUT,
                              cwd=PROJECT_ROOT, check=False, umask=UMASK)
    if done.returncode != 0:
        raise LaunchError(f"airflow {' '.join(args[:2])} failed: see {log}")


def _read_state(home: Path) -> dict[str, Any] | None:
    path = home / STATE_FILE
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return None


def _write_state(home: Path, state: dict[str, Any]) -> None:
    write_json(home / STATE_FILE, state, private=True)



