"""docker-compose.yaml, as a real compose parser reads it: Debian 13's docker-compose 2.26, in a copy of the
project's trixie server image (no Docker engine needed for `config`).

`docker-compose config --format json` resolves anchors, merge keys, interpolation and profiles into the
model the engine would get; the tests read that model, per profile, as `docker compose up` would see it.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
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
CORE = {"postgres", "timescaledb", "statsd-exporter", "airflow-init", "airflow-apiserver", "airflow-scheduler",
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


def test_the_build_context_leaves_out_local_state() -> None:
    """What the Dockerfile installs is tests/integration/deploy/test_dockerfile.py's; here, what it may see."""
    ignored = (PROJECT_ROOT / ".dockerignore").read_text().split()
    assert ".local" in ignored and ".venv" in ignored
    assert os.path.exists(PROJECT_ROOT / "dags") and os.path.exists(PROJECT_ROOT / "plugins")


PROFILE_SETS = [(), ("celery",), ("local-cds",), ("celery", "flower"), ("celery", "local-cds", "flower")]


@pytest.mark.parametrize("profiles", PROFILE_SETS, ids=lambda p: "+".join(p) or "default")
def test_every_profile_validates(compose: Compose, profiles: tuple[str, ...]) -> None:
    """`docker-compose config` (Compose's own validation) passes for every profile, without a warning."""
    executor = "CeleryExecutor" if "celery" in profiles else "LocalExecutor"
    model = compose.config(*profiles, env={"AIRFLOW_EXECUTOR": executor})
    assert set(model["services"]) >= CORE


# --- The celery profile cannot half-start -------------------------------------------------------------

def executor_check(compose: Compose) -> str:
    """The executor check of airflow-init's script, as the container gets it: `config` prints the model
    re-escaped for compose (a literal $ as $$), and compose unescapes it when it creates the container."""
    script = "\n".join(compose.config()["services"]["airflow-init"]["command"]).replace("$$", "$")
    match = re.search(r"# executor-check begin\n(.*?)# executor-check end", script, re.S)
    assert match, script
    return match.group(1)


@pytest.mark.parametrize(("executor", "redis", "refused"), [
    ("LocalExecutor", False, None),
    ("CeleryExecutor", True, None),
    ("CeleryExecutor", False, "needs the celery profile"),
    ("LocalExecutor", True, "the celery profile needs AIRFLOW_EXECUTOR=CeleryExecutor (it is LocalExecutor)"),
])
def test_airflow_init_refuses_a_mismatched_executor_and_profile(
        compose: Compose, tmp_path: Path, executor: str, redis: bool, refused: str | None) -> None:
    """The check run by bash as airflow-init runs it; `getent hosts redis` answers as the compose network
    would with and without the profile's redis service."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "getent").write_text(f"#!/bin/sh\n[ \"$1 $2\" = 'hosts redis' ] && exit {0 if redis else 2}\nexit 2\n")
    (fake / "getent").chmod(0o755)
    proc = subprocess.run(["bash", "-c", "set -eo pipefail\n" + executor_check(compose) + "echo passed"],
                          env={"PATH": f"{fake}:/usr/bin:/bin", "AIRFLOW__CORE__EXECUTOR": executor},
                          capture_output=True, text=True, timeout=30)
    if refused is None:
        assert proc.returncode == 0 and proc.stdout.strip() == "passed", proc.stderr
    else:
        assert proc.returncode == 1 and "passed" not in proc.stdout
        assert refused in proc.stderr, proc.stderr


@pytest.mark.parametrize("profiles", [("celery",), ("celery", "flower")])
def test_no_airflow_service_starts_before_the_executor_check(compose: Compose, profiles: tuple[str, ...]) -> None:
    """Every Airflow service (the workers and flower too) waits for airflow-init to succeed, and airflow-init
    waits for the profile's redis, so its check sees the profile."""
    services = compose.config(*profiles, env={"AIRFLOW_EXECUTOR": "CeleryExecutor"})["services"]
    for name in (AIRFLOW_SERVICES & set(services)) - {"airflow-init"}:
        assert services[name]["depends_on"]["airflow-init"]["condition"] == "service_completed_successfully", name
    redis = services["airflow-init"]["depends_on"]["redis"]
    assert redis["condition"] == "service_healthy" and redis.get("required") is False
    # Without the profile the dependency is optional, so the default stack starts without redis.
    assert "redis" not in compose.config()["services"]


# --- The pipeline's settings: compose and .env.example against the settings model -----------------------

# Settings of the local server (`era5etl db up`), which the compose stack does not run.
# Its backups too: the compose stack's database image has no pgBackRest (README, What was not run).
LOCAL_SERVER_ONLY = {"home", "timescaledb_license", "system_dir", "timescaledb_source", "debian_mirror",
                     "backup_repository", "backup_retention_full"}
# Settings the compose file fixes: its database service and its shared volumes.
SET_BY_COMPOSE = {"database_url", "staging_dir", "validation_dir"}
# ERA5_* variables of the compose file itself (connections, ports, image names): never passed on as such.
COMPOSE_OWN = {"ERA5_DB_PASSWORD", "ERA5_DB_PORT", "ERA5_CDS_CONN", "ERA5_CDS_PORT", "ERA5_LOCALCDS_IMAGE_NAME"}


def env_example() -> tuple[dict[str, str], set[str]]:
    """.env.example's ERA5_* assignments, and the names it documents commented out (no default to give)."""
    values, commented = {}, set()
    for line in (PROJECT_ROOT / ".env.example").read_text().splitlines():
        if match := re.fullmatch(r"(ERA5_\w+)=(.*)", line):
            values[match.group(1)] = match.group(2)
        elif match := re.fullmatch(r"# (ERA5_\w+)=", line):
            commented.add(match.group(1))
    return values, commented


def test_compose_passes_every_setting_a_compose_user_sets(compose: Compose) -> None:
    from era5etl.settings import Settings, env_name

    wanted = {env_name(f) for f in Settings.model_fields} - {env_name(f) for f in LOCAL_SERVER_ONLY | SET_BY_COMPOSE}
    for name, svc in airflow_services(full(compose)).items():
        era5 = {k for k in svc["environment"] if k.startswith("ERA5_")}
        expected = wanted | {env_name(f) for f in SET_BY_COMPOSE}
        assert era5 == expected, (name, era5 ^ expected)
    # Unset in the environment: left unset (null), so the model's default applies, not a second one here.
    env = compose.config()["services"]["airflow-scheduler"]["environment"]
    assert all(env[k] is None for k in wanted), {k: env[k] for k in wanted if env[k] is not None}
    # Set in the environment: passed on as given.
    given = compose.config(env={"ERA5_CDS_POOL_SLOTS": "7", "ERA5_AREA": "60/-10/50/2"})
    env = given["services"]["airflow-scheduler"]["environment"]
    assert (env["ERA5_CDS_POOL_SLOTS"], env["ERA5_AREA"]) == ("7", "60/-10/50/2")


def test_env_example_is_complete_and_its_values_are_the_models_defaults(compose: Compose) -> None:
    from era5etl import settings
    from era5etl.settings import Settings, env_name

    values, commented = env_example()
    documented = set(values) | commented
    wanted = {env_name(f) for f in Settings.model_fields} - {env_name(f) for f in LOCAL_SERVER_ONLY | SET_BY_COMPOSE}
    assert {"ERA5_CDS_POOL_SLOTS", "ERA5_DB_POOL_SLOTS"} <= wanted
    assert documented - COMPOSE_OWN == wanted, documented ^ wanted
    for name in COMPOSE_OWN & documented:
        assert f"${{{name}" in (PROJECT_ROOT / "docker-compose.yaml").read_text(), name
    # Every value parses, and is the default: the example documents the model, it does not change it.
    pipeline = {k: v for k, v in values.items() if k not in COMPOSE_OWN}
    parsed = settings.load(pipeline)
    defaults = settings.load({})
    for name in pipeline:
        field = name.removeprefix("ERA5_").lower()
        assert getattr(parsed, field) == getattr(defaults, field), name
    # A commented setting is one left unset on purpose: its default is None, or follows the dataset
    # (ERA5_TABLE, ERA5_LEVELS: a value written here would hold for every dataset's DAG alike).
    from era5etl.core.datasets import DATASETS

    for name in commented:
        field = name.removeprefix("ERA5_").lower()
        per_dataset = {repr(getattr(settings.load({"ERA5_DATASET": d}), field)) for d in DATASETS}
        assert getattr(defaults, field) is None or len(per_dataset) > 1, name
    # And compose, given .env.example, hands the containers exactly those values, which parse.
    env = compose.config("celery", env_file=".env.example")["services"]["airflow-scheduler"]["environment"]
    era5 = {k: v for k, v in env.items() if k.startswith("ERA5_") and v is not None}
    assert {k: era5[k] for k in pipeline} == pipeline
    settings.load(era5)


def test_a_bad_setting_in_compose_is_refused_by_the_model(compose: Compose) -> None:
    from era5etl import settings
    from era5etl.core.errors import InputError

    env = compose.config(env={"ERA5_DB_POOL_SLOTS": "0"})["services"]["airflow-init"]["environment"]
    with pytest.raises(InputError, match="ERA5_DB_POOL_SLOTS='0'"):
        settings.load({k: v for k, v in env.items() if k.startswith("ERA5_") and v is not None})


# --- Preload, metrics, the TimescaleDB tag --------------------------------------------------------------

def test_forkserver_preload_is_on_as_measured(compose: Compose) -> None:
    """The setting the README measured (Airflow's overhead: GX imported once per worker, not per task),
    applied the way the scheduler applies it: a real forkserver start method and its preload list."""
    env = airflow_services(full(compose))["airflow-scheduler"]["environment"]
    assert env["AIRFLOW__SCHEDULER__MP_START_METHOD"] == "forkserver"
    modules = env["AIRFLOW__CORE__MP_FORKSERVER_PRELOAD"].split(",")
    assert modules == ["era5etl.airflow.preload"]
    code = ("import multiprocessing, multiprocessing.forkserver as fs, json\n"
            "from airflow.utils.process_utils import set_component_mp_start_method\n"
            "set_component_mp_start_method('scheduler')\n"
            "print(json.dumps([multiprocessing.get_start_method(), fs._forkserver._preload_modules]))")
    keys = ("AIRFLOW__SCHEDULER__MP_START_METHOD", "AIRFLOW__CORE__MP_FORKSERVER_PRELOAD")
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, **{k: env[k] for k in keys}},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == ["forkserver", modules]
    for module in modules:
        assert importlib.util.find_spec(module) is not None, module


def test_celery_workers_preload_as_the_forkserver_does(compose: Compose) -> None:
    """The celery profile's workers read era5etl.airflow.celery_config: Airflow's own Celery settings,
    and Celery's ``imports`` ending with the forkserver's preload, as Airflow's Celery app reads them."""
    env = airflow_services(full(compose))["airflow-worker"]["environment"]
    key = "AIRFLOW__CELERY__CELERY_CONFIG_OPTIONS"
    code = ("import json\n"
            "from airflow.providers.celery.executors.celery_executor_utils import app\n"
            "from airflow.providers.celery.executors.default_celery import DEFAULT_CELERY_CONFIG as d\n"
            "print(json.dumps([list(app.conf.imports), app.conf.broker_url == d['broker_url'],"
            " app.conf.worker_concurrency == d['worker_concurrency']]))")
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, key: env[key]},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [["era5etl.airflow.preload"], True, True]


def test_task_handover_settings_are_the_one_command_stacks(compose: Compose) -> None:
    """The compose file's Airflow hands a finished task over as `airflow up` does (the same values as
    era5etl.cli.database.LATENCY, which the backfill benchmark measured), and Airflow reads them as set."""
    from era5etl.cli.database import LATENCY

    for name, svc in airflow_services(full(compose)).items():
        env = svc["environment"]
        assert {k: env.get(k) for k in LATENCY} == LATENCY, name
    code = ("from airflow.configuration import conf\n"
            "print(conf.getint('workers', 'min_heartbeat_interval'), "
            "conf.getfloat('scheduler', 'scheduler_idle_sleep_time'))")
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, **LATENCY},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-2:] == ["1", "0.5"]


def test_metrics_go_to_the_statsd_exporter(compose: Compose) -> None:
    """[metrics] on, to a prom/statsd-exporter service on the port it listens on; every Airflow service waits
    for it (the StatsD client resolves its host when a process starts)."""
    model = full(compose)
    exporter = model["services"]["statsd-exporter"]
    assert exporter["image"].startswith("prom/statsd-exporter:v")
    assert "profiles" not in exporter
    assert exporter["healthcheck"]["test"][0] == "CMD"
    for name, svc in airflow_services(model).items():
        env = svc["environment"]
        assert env["AIRFLOW__METRICS__STATSD_ON"] == "True", name
        assert env["AIRFLOW__METRICS__STATSD_HOST"] == "statsd-exporter", name
        assert f"--statsd.listen-udp=:{env['AIRFLOW__METRICS__STATSD_PORT']}" in exporter["command"], name
        assert svc["depends_on"]["statsd-exporter"]["condition"] == "service_healthy", name


def test_the_timescaledb_tag_is_written_once() -> None:
    text = (PROJECT_ROOT / "docker-compose.yaml").read_text()
    assert len(re.findall(r"timescale/timescaledb:", text)) == 1
    assert len(re.findall(re.escape(TIMESCALEDB_VERSION), text)) == 1


def pool_lines(compose: Compose, env: dict[str, str] | None = None) -> str:
    """airflow-init's pool lines as the container gets them, from reading the sizes to `pools set`."""
    script = "\n".join(compose.config(env=env)["services"]["airflow-init"]["command"]).replace("$$", "$")
    match = re.search(r"^slots=.*?era5_db [^\n]*\n", script, re.S | re.M)
    assert match, script
    return match.group(0)


@pytest.mark.parametrize(("given", "refused"), [({}, None), ({"ERA5_CDS_POOL_SLOTS": "7"}, None),
                                                ({"ERA5_DB_POOL_SLOTS": "0"}, "ERA5_DB_POOL_SLOTS='0'")])
def test_airflow_init_sizes_the_pools_from_the_settings(compose: Compose, tmp_path: Path, given: dict[str, str],
                                                        refused: str | None) -> None:
    """The pool sizes go through the settings model (its defaults, a value given, a bad value refused with
    the model's message and no pool set). Run by bash with this checkout's Python; the image's
    `/entrypoint` wrapper is left out, and `airflow` records its arguments (setting a pool for real is
    scripts/setup.sh's, which the e2e stack runs)."""
    from era5etl.settings import load

    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')  # this venv's, not a bare symlink
    (fake / "python").chmod(0o755)
    calls = tmp_path / "calls"
    (fake / "airflow").write_text(f'#!/bin/sh\necho "$@" >> {calls}\n')
    (fake / "airflow").chmod(0o755)
    resolved = airflow_services(compose.config(env=given))["airflow-init"]["environment"]
    env = {k: v for k, v in resolved.items() if v is not None}
    lines = pool_lines(compose, given).replace("/entrypoint ", "")
    proc = subprocess.run(["bash", "-c", "set -eo pipefail\n" + lines], env={**env, "PATH": f"{fake}:/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)
    if refused:
        assert proc.returncode != 0 and refused in proc.stderr, proc.stderr
        assert not calls.exists()
        return
    assert proc.returncode == 0, proc.stderr
    expected = load(given)
    assert [line.split()[:4] for line in calls.read_text().splitlines()] == [
        ["pools", "set", "era5_cds", str(expected.cds_pool_slots)],
        ["pools", "set", "era5_db", str(expected.db_pool_slots)]]
