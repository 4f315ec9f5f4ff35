"""docker-compose.yaml, as a real compose parser reads it: Debian 13's docker-compose 2.26, in a copy of the
project's trixie server image (no Docker engine needed for `config`).

`docker-compose config --format json` resolves anchors, merge keys, interpolation and profiles into the
model the engine would get; the tests read that model, per profile, as `docker compose up` would see it.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from era5etl.core.paths import PROJECT_ROOT
from era5etl.db.image import POSTGRES_MAJOR, TIMESCALEDB_VERSION, ensure_image, system_dir

pytestmark = pytest.mark.integration

COMPOSE_BIN = "/usr/bin/docker-compose"
INSTALL = ("apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "
           "docker-compose")
FILES = ("docker-compose.yaml", "Dockerfile", ".env.example", ".dockerignore")
CHROOT_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"

# The compose stack runs the TimescaleDB the local server is built from: the same features.
TIMESCALE_IMAGE = f"timescale/timescaledb:{TIMESCALEDB_VERSION}-pg{POSTGRES_MAJOR}"
CORE = {"postgres", "timescaledb", "airflow-init", "airflow-apiserver", "airflow-scheduler",
        "airflow-dag-processor", "airflow-triggerer"}
CELERY = {"redis", "airflow-worker"}
LOCAL_CDS = {"cds"}
AIRFLOW_SERVICES = {"airflow-init", "airflow-apiserver", "airflow-scheduler", "airflow-dag-processor",
                    "airflow-triggerer", "airflow-worker", "flower"}


@pytest.fixture(scope="module")
def root() -> Path:
    """A trixie root with docker-compose: the server image copied by hard links, once per machine.

    Its own copy, never the server's: dpkg replaces files by renaming new ones into place, so the
    image's files (hard-linked) stay as they were.
    """
    image = ensure_image()
    tools = system_dir() / "tools" / f"compose-{image.name}"
    binary = tools / COMPOSE_BIN.lstrip("/")
    tools.parent.mkdir(parents=True, exist_ok=True)
    with open(tools.parent / ".compose.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one install, however many test processes ask
        if not binary.exists():
            shutil.rmtree(tools, ignore_errors=True)
            subprocess.run(["cp", "-a", "--link", str(image), str(tools)], check=True)
            proc = subprocess.run(["chroot", str(tools), "sh", "-c", INSTALL], capture_output=True, text=True,
                                  env={"PATH": CHROOT_PATH, "LANG": "C.UTF-8", "HOME": "/root"}, timeout=600)
            if proc.returncode != 0 or not binary.exists():
                pytest.fail(f"installing docker-compose into {tools} failed ({proc.returncode}):\n"
                            f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return tools


@pytest.fixture(scope="module")
def project(root: Path) -> Iterator[str]:
    """The compose project copied into root/tmp/compose-XXXX; its path as seen inside the root."""
    (root / "tmp").mkdir(exist_ok=True)
    host_dir = Path(tempfile.mkdtemp(prefix="compose-", dir=root / "tmp"))
    for name in FILES:
        shutil.copy(PROJECT_ROOT / name, host_dir / name)
    try:
        yield "/" + str(host_dir.relative_to(root))
    finally:
        shutil.rmtree(host_dir, ignore_errors=True)


class Compose:
    def __init__(self, root: Path, project: str) -> None:
        self.root = root
        self.project = project
        self._cache: dict[tuple[Any, ...], dict[str, Any]] = {}

    def config(self, *profiles: str, env: dict[str, str] | None = None, env_file: str | None = None) -> dict[str, Any]:
        """The resolved model; a clean environment so the caller's shell can't change the answer."""
        key = (profiles, tuple(sorted((env or {}).items())), env_file)
        if key not in self._cache:
            argv = ["chroot", str(self.root), "docker-compose", "-f", f"{self.project}/docker-compose.yaml"]
            if env_file:
                argv += ["--env-file", f"{self.project}/{env_file}"]
            for p in profiles:
                argv += ["--profile", p]
            argv += ["config", "--format", "json"]
            base = {"PATH": CHROOT_PATH, "HOME": "/root", "LANG": "C.UTF-8", "AIRFLOW_UID": "50000"}
            proc = subprocess.run(argv, capture_output=True, text=True, env={**base, **(env or {})}, timeout=120)
            assert proc.returncode == 0, f"docker-compose config failed:\n{proc.stderr}"
            assert "level=warning" not in proc.stderr, proc.stderr
            self._cache[key] = json.loads(proc.stdout)
        return self._cache[key]


@pytest.fixture(scope="module")
def compose(root: Path, project: str) -> Compose:
    return Compose(root, project)


def full(compose: Compose) -> dict[str, Any]:
    return compose.config("celery", "local-cds", env={"AIRFLOW_EXECUTOR": "CeleryExecutor"})


def airflow_services(model: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: svc for name, svc in model["services"].items() if name in AIRFLOW_SERVICES}


def test_services_per_profile(compose: Compose) -> None:
    assert set(compose.config()["services"]) == CORE
    assert set(compose.config("celery")["services"]) == CORE | CELERY
    assert set(compose.config("local-cds")["services"]) == CORE | LOCAL_CDS
    assert set(full(compose)["services"]) == CORE | CELERY | LOCAL_CDS
    assert set(compose.config("celery", "flower")["services"]) == CORE | CELERY | {"flower"}
    # The anchors are merged into the services, never services themselves.
    assert not any(name.startswith("x-") for name in full(compose)["services"])


@pytest.mark.parametrize("profiles", [(), ("celery", "local-cds"), ("celery", "flower")])
def test_every_service_has_a_healthcheck_or_is_a_one_shot(compose: Compose, profiles: tuple[str, ...]) -> None:
    services = compose.config(*profiles, env={"AIRFLOW_EXECUTOR": "CeleryExecutor"})["services"]
    for name, svc in services.items():
        hc = svc.get("healthcheck")
        if hc and not hc.get("disable") and hc.get("test") and hc["test"][0] != "NONE":
            continue
        # A one-shot: everything that waits for it waits for it to finish, not to be healthy.
        conditions = [other["depends_on"][name]["condition"]
                      for other in services.values() if name in (other.get("depends_on") or {})]
        assert conditions, f"{name} has no healthcheck and nothing waits for it"
        assert set(conditions) == {"service_completed_successfully"}, (name, conditions)
        assert svc.get("restart") in (None, "no"), f"one-shot {name} must not restart"
    assert "healthcheck" not in services["airflow-init"]
    # Services that wait for a long-running one wait for it to be healthy.
    for name, svc in services.items():
        for dep, spec in (svc.get("depends_on") or {}).items():
            if dep != "airflow-init":
                assert spec["condition"] == "service_healthy", (name, dep, spec)


def test_airflow_common_is_merged_into_every_airflow_service(compose: Compose) -> None:
    model = full(compose)
    services = airflow_services(model)
    assert set(services) == (AIRFLOW_SERVICES - {"flower"})
    images = {svc["image"] for svc in services.values()}
    assert len(images) == 1, images
    envs = [svc["environment"] for svc in services.values()]
    for name, svc in services.items():
        env = svc["environment"]
        assert env["AIRFLOW_CONN_ERA5_TIMESCALE"] == "postgresql://era5:era5@timescaledb:5432/era5", name
        assert env["AIRFLOW_CONN_ERA5_CDS"], name
        assert env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://airflow-apiserver:8080/execution/"
        assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].endswith("@postgres/airflow")
        assert env["ERA5_STAGING_DIR"] == "/opt/airflow/staging"
        assert env["ERA5_VALIDATION_DIR"] == "/opt/airflow/validation"
        mounts = {(v["type"], v["source"], v["target"]) for v in svc["volumes"]}
        assert ("volume", "era5-staging", "/opt/airflow/staging") in mounts, name
        assert ("volume", "era5-validation", "/opt/airflow/validation") in mounts, name
        assert ("volume", "airflow-logs", "/opt/airflow/logs") in mounts, name
        if name != "airflow-init":
            assert svc["depends_on"]["airflow-init"]["condition"] == "service_completed_successfully", name
            assert svc["user"] == "50000:0"
        for dep in ("postgres", "timescaledb"):
            assert svc["depends_on"][dep]["condition"] == "service_healthy", (name, dep)
    # Secrets the containers must share are the same everywhere.
    for var in ("AIRFLOW__API_AUTH__JWT_SECRET", "AIRFLOW__CORE__FERNET_KEY", "AIRFLOW__CORE__EXECUTOR"):
        assert len({env[var] for env in envs}) == 1, var
    assert {"era5-staging", "era5-validation", "airflow-logs"} <= set(model["volumes"])


def test_airflow_init_migrates_and_creates_the_user(compose: Compose) -> None:
    init = compose.config()["services"]["airflow-init"]
    assert init["environment"]["_AIRFLOW_DB_MIGRATE"] == "true"
    assert init["environment"]["_AIRFLOW_WWW_USER_CREATE"] == "true"
    assert init["user"] == "0:0"
    script = "\n".join(init["command"])
    assert "/entrypoint airflow version" in script and "ensure_schema" in script
    # Every pool the DAG's tasks run in is created, or its tasks would never be scheduled.
    from era5etl.airflow.operators import CDS_POOL, DB_POOL

    for pool in (CDS_POOL, DB_POOL):
        assert re.search(rf"/entrypoint airflow pools set {pool} ", script), pool


def test_executor_follows_airflow_executor(compose: Compose) -> None:
    default = airflow_services(compose.config())
    assert {s["environment"]["AIRFLOW__CORE__EXECUTOR"] for s in default.values()} == {"LocalExecutor"}
    celery = airflow_services(full(compose))
    assert {s["environment"]["AIRFLOW__CORE__EXECUTOR"] for s in celery.values()} == {"CeleryExecutor"}
    assert {s["environment"]["AIRFLOW__CELERY__BROKER_URL"] for s in celery.values()} == {"redis://:@redis:6379/0"}


def test_celery_workers(compose: Compose) -> None:
    services = full(compose)["services"]
    workers = {name: svc for name, svc in services.items()
               if "celery worker" in " ".join(svc.get("command") or [])}
    assert sum(int((svc.get("deploy") or {}).get("replicas", 1)) for svc in workers.values()) >= 2
    for name, svc in workers.items():
        assert "inspect ping" in " ".join(svc["healthcheck"]["test"]), name
        assert svc["depends_on"]["redis"]["condition"] == "service_healthy"
        assert svc["profiles"] == ["celery"]
    scaled = compose.config("celery", env={"AIRFLOW_EXECUTOR": "CeleryExecutor", "AIRFLOW_CELERY_WORKERS": "5"})
    assert scaled["services"]["airflow-worker"]["deploy"]["replicas"] == 5
    assert services["redis"]["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]


def test_celery_profile_is_what_the_celery_test_ran(compose: Compose) -> None:
    """The settings tests/e2e/test_celery.py ran with: Redis as broker, results in the metadata
    database, two workers of WORKER_CONCURRENCY task processes, one staging folder for all."""
    from tests.e2e.celery_stack import WORKER_CONCURRENCY, WORKERS

    services = full(compose)["services"]
    worker = services["airflow-worker"]
    env = worker["environment"]
    assert worker["deploy"]["replicas"] == len(WORKERS)
    assert env["AIRFLOW__CELERY__WORKER_CONCURRENCY"] == WORKER_CONCURRENCY
    broker = env["AIRFLOW__CELERY__BROKER_URL"]
    assert broker.startswith("redis://") and "@redis:6379/" in broker
    # The result backend is Airflow's own metadata database, as Celery's SQLAlchemy backend (db+).
    meta = env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    backend = env["AIRFLOW__CELERY__RESULT_BACKEND"]
    assert backend.startswith("db+postgresql://")
    assert backend.split("@", 1)[1] == meta.split("@", 1)[1], (backend, meta)
    # Shared staging: the worker mounts the same volume at the same path as the scheduler and triggerer.
    mounts = {name: {(v["source"], v["target"]) for v in svc["volumes"]}
              for name, svc in services.items() if name in ("airflow-worker", "airflow-scheduler", "airflow-triggerer")}
    assert all(("era5-staging", env["ERA5_STAGING_DIR"]) in m for m in mounts.values()), mounts
    assert {svc["environment"]["ERA5_STAGING_DIR"] for svc in airflow_services(full(compose)).values()} == {
        env["ERA5_STAGING_DIR"]}
    scaled = compose.config("celery", env={"AIRFLOW_EXECUTOR": "CeleryExecutor",
                                           "AIRFLOW_CELERY_WORKER_CONCURRENCY": "8"})
    assert scaled["services"]["airflow-worker"]["environment"]["AIRFLOW__CELERY__WORKER_CONCURRENCY"] == "8"


def test_timescaledb_is_the_licensed_image(compose: Compose) -> None:
    tsdb = compose.config()["services"]["timescaledb"]
    assert tsdb["image"] == TIMESCALE_IMAGE
    assert "-oss" not in tsdb["image"]
    assert tsdb["environment"]["POSTGRES_DB"] == "era5"


def test_local_cds_profile_matches_the_default_connection(compose: Compose) -> None:
    from airflow.sdk import Connection

    from era5etl.airflow.hooks import CdsHook
    from localcds.server import DEFAULT_KEY

    services = full(compose)["services"]
    cds = services["cds"]
    assert cds["command"] == ["python", "-m", "localcds", "--host", "0.0.0.0", "--port", "8765"]
    assert cds["build"]["target"] == "localcds" and services["airflow-scheduler"]["build"]["target"] == "airflow"
    assert cds["profiles"] == ["local-cds"]
    uri = services["airflow-scheduler"]["environment"]["AIRFLOW_CONN_ERA5_CDS"]
    creds = CdsHook.credentials_from_connection(Connection.from_uri(uri, conn_id="era5_cds"))
    assert creds.url == "http://cds:8765/api"
    assert creds.key == DEFAULT_KEY
    # The real CDS, from the documented variable.
    real = compose.config(env={"ERA5_CDS_CONN": "https://:abc-123@cds.climate.copernicus.eu/api"})
    uri = real["services"]["airflow-scheduler"]["environment"]["AIRFLOW_CONN_ERA5_CDS"]
    creds = CdsHook.credentials_from_connection(Connection.from_uri(uri, conn_id="era5_cds"))
    assert (creds.url, creds.key) == ("https://cds.climate.copernicus.eu/api", "abc-123")


def test_env_example_is_a_valid_env_file(compose: Compose) -> None:
    model = compose.config("celery", env_file=".env.example")
    assert set(model["services"]) == CORE | CELERY
    assert model["services"]["airflow-worker"]["deploy"]["replicas"] == 2


def test_dockerfile_installs_the_project_and_the_celery_provider() -> None:
    text = (PROJECT_ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM apache/airflow:(slim-)?\$\{AIRFLOW_VERSION\}", text, re.M)
    assert re.search(r"^ARG AIRFLOW_VERSION=3\.3\.2$", text, re.M)
    assert re.search(r"^ARG CELERY_PROVIDER_VERSION=\d+\.\d+\.\d+$", text, re.M)
    # The package itself, not editable, with the CeleryExecutor's provider as its extra; versions from
    # the constraints (one place for each).
    assert "-c /opt/era5etl/constraints.txt" in text and '"/opt/era5etl[celery,statsd]"' in text
    assert "-e /opt/era5etl" not in text
    ignored = (PROJECT_ROOT / ".dockerignore").read_text().split()
    assert ".local" in ignored and ".venv" in ignored
    assert os.path.exists(PROJECT_ROOT / "dags") and os.path.exists(PROJECT_ROOT / "plugins")
