"""Airflow on the CeleryExecutor for the end-to-end tests: Redis, the stack of ``stack.py``, two workers.

* **Redis** from Debian's ``redis-server`` on a free port, in a temporary folder, no persistence, in a
  process group of its own; the broker of the Celery workers.
* **The stack** is ``stack.running_stack`` with ``AIRFLOW__CORE__EXECUTOR=CeleryExecutor``, the broker
  above, and the result backend in the stack's own metadata database (``db+postgresql://``), as the
  compose file's ``celery`` profile has it.
* **Two workers**, ``airflow celery worker`` each in its own process group, with Celery node names
  ``worker-a@<host>`` and ``worker-b@<host>``, their own log-server ports, and a task hostname of their
  own (``[core] hostname_callable`` = :func:`worker_hostname`): on one machine both would otherwise
  record the same host in every task instance, and which worker ran what could not be told.
* **Staging is shared** (the stack's one ``ERA5_STAGING_DIR``): fetch, stage and load are separate
  tasks and Celery gives each to whichever worker is free; ``stage`` and ``load`` read the download
  ``fetch`` left in staging and stop with "no complete download ... run the fetch step first" when
  it is not there. Workers on several hosts need the staging folder on shared storage, as here.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from era5etl.core.paths import PROJECT_ROOT
from tests.e2e.stack import AirflowStack, StackError, free_port, running_stack

REDIS = "/usr/bin/redis-server"
WORKERS = ("worker-a", "worker-b")
WORKER_CONCURRENCY = "2"  # two task processes a worker: four in all on this machine's two cores
HOSTNAME_ENV = "ERA5_E2E_WORKER"
CELERY_CONFIG_OPTIONS = "era5etl.airflow.celery_config.CELERY_CONFIG"
HEARTBEAT_TIMEOUT_S = "30"  # a killed worker's tasks are failed (and retried) after this, not 120 s
QUEUED_TIMEOUT_S = "90"  # a task queued on the killed worker but never started is retried after this


def worker_hostname() -> str:
    """``[core] hostname_callable`` of the test workers: the worker's name, recorded in each task instance."""
    return os.environ.get(HOSTNAME_ENV) or socket.getfqdn()


@contextlib.contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """Debian's redis-server on a free port, in its own process group; yields its URL, database 0."""
    if not os.path.exists(REDIS):
        pytest.fail(f"{REDIS} is missing: scripts/setup.sh --dev installs Debian's redis-server")
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    args = [REDIS, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder), "--save", "",
            "--appendonly", "no", "--daemonize", "no", "--logfile", str(folder / "redis.log")]
    proc = subprocess.Popen(args, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        import redis

        client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=2)
        deadline = time.monotonic() + 30
        while True:
            try:
                if client.ping():
                    break
            except redis.ConnectionError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise StackError(f"redis-server did not answer on {port}:\n"
                                 f"{(folder / 'redis.log').read_text(errors='replace')[-2000:]}")
            time.sleep(0.1)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def start_workers(stack: AirflowStack) -> None:
    """Both Celery workers, each in its own process group, waited for until Celery says it is ready."""
    for name in WORKERS:
        env = {HOSTNAME_ENV: name,
               "AIRFLOW__CORE__HOSTNAME_CALLABLE": f"{__name__}.worker_hostname",
               "PYTHONPATH": os.pathsep.join(filter(None, [str(PROJECT_ROOT), os.environ.get("PYTHONPATH")])),
               "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port())}
        stack.start("celery worker", "--celery-hostname", f"{name}@%h", "--concurrency", WORKER_CONCURRENCY,
                    name=name, env=env)
    def ready(name: str) -> bool:
        return " ready." in (stack.logs / f"{name}.log").read_text(errors="replace")

    for name in WORKERS:
        stack.wait_for(f"{name} ready", lambda: ready(name), timeout=120)  # noqa: B023 (called at once)


def kill_worker(stack: AirflowStack, name: str) -> set[int]:
    """SIGKILL a worker as if its host died: its process group, and the task processes under it, which
    Airflow's supervisor puts in process groups of their own. Returns the pids that were killed."""
    pids = stack.descendants(name)
    groups = {stack.procs[name].pid}
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            groups.add(os.getpgid(pid))
    for group in groups:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
    stack.kill(name)  # reaps the leader and marks the worker down on purpose
    return pids


@contextlib.contextmanager
def celery_stack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                 **extra: str) -> Iterator[AirflowStack]:
    """The Celery stack; ``extra`` settings are added to its environment (e.g. ``ERA5_CHUNK_ROWS``)."""
    with redis_server(tmp_path_factory.mktemp("redis")) as broker:
        def derived(stack: AirflowStack) -> dict[str, str]:
            return {"AIRFLOW__CELERY__RESULT_BACKEND": "db+" + stack.meta_url}

        settings = {"AIRFLOW__CORE__EXECUTOR": "CeleryExecutor",
                    "AIRFLOW__CELERY__BROKER_URL": broker,
                    "AIRFLOW__CELERY__WORKER_CONCURRENCY": WORKER_CONCURRENCY,
                    # The workers import Great Expectations and the pipeline once, before forking their
                    # pool, as the compose file's celery profile has them (era5etl.airflow.celery_config).
                    "AIRFLOW__CELERY__CELERY_CONFIG_OPTIONS": CELERY_CONFIG_OPTIONS,
                    "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": HEARTBEAT_TIMEOUT_S,
                    # A task the killed worker had taken from the broker but not started stays queued
                    # (its message is not redelivered while the dead worker holds it): Airflow retries a
                    # task queued longer than this, checked this often (defaults 600 s and 120 s, longer
                    # than the test waits; a run hung on one in a CI run here).
                    "AIRFLOW__SCHEDULER__TASK_QUEUED_TIMEOUT": QUEUED_TIMEOUT_S,
                    "AIRFLOW__SCHEDULER__TASK_QUEUED_TIMEOUT_CHECK_INTERVAL": "10",
                    # One CDS job at a time: the local CDS writes each job's NetCDF4 in a thread of its
                    # own, and two large ones written at once failed here with "NetCDF: HDF error".
                    "ERA5_CDS_MAX_PARALLEL": "1", **extra}
        # One database writer at a time (the era5_db pool: load and validate), so two months' validate
        # tasks never finish at once: Airflow 3.3 fails a task whose success registers the first event
        # of an Asset under an AssetAlias while another task registers the same pair (a unique-key race
        # in its API server, docs/operating.md#known-limits); the kill's retried loads would otherwise
        # run, and validate, side by side on the surviving worker.
        with running_stack(request, tmp_path_factory, derived=derived, pools={"era5_db": 1},
                           **settings) as stack:
            start_workers(stack)
            yield stack
