"""The compose stack's auth manager, run: an Airflow API server configured as docker-compose.yaml
configures it (FabAuthManager), its metadata database migrated and its admin user created as
airflow-init does, then a login over HTTP, the REST API and the ERA5 page behind it.

No Docker here, so the processes are this checkout's, started the way the image's entrypoint starts
them: ``airflow db migrate`` (which creates FAB's tables too), ``airflow users create`` with the
entrypoint's arguments, ``airflow api-server``. The auth manager and the user's name and password
are read from docker-compose.yaml, so a change there is a change here.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import urllib.parse
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from era5etl.cli.database import airflow_environment
from era5etl.core.paths import PROJECT_ROOT
from era5etl.db import connect, with_database
from tests.e2e.apiserver import free_port
from tests.integration.deploy.served import served

pytestmark = pytest.mark.integration

AIRFLOW = str(Path(sys.executable).parent / "airflow")
FAB = "airflow.providers.fab.auth_manager.fab_auth_manager.FabAuthManager"
STARTUP_TIMEOUT_S = 120


def compose_file() -> dict[str, Any]:
    return dict(yaml.safe_load((PROJECT_ROOT / "docker-compose.yaml").read_text()))


def default_of(value: str) -> str:
    """``${NAME:-default}`` as compose resolves it with NAME unset."""
    match = re.fullmatch(r"\$\{\w+:-(.*)\}", value)
    assert match, f"not a variable with a default: {value!r}"
    return match.group(1)


@dataclass(frozen=True)
class Fab:
    url: str
    username: str
    password: str
    log: Path


@pytest.fixture(scope="module")
def fab(db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fab]:
    model = compose_file()
    manager = model["x-airflow-common"]["environment"]["AIRFLOW__CORE__AUTH_MANAGER"]
    init_env = model["services"]["airflow-init"]["environment"]
    username = default_of(init_env["_AIRFLOW_WWW_USER_USERNAME"])
    password = default_of(init_env["_AIRFLOW_WWW_USER_PASSWORD"])
    assert manager == FAB, f"docker-compose.yaml's auth manager is {manager}; this test logs in through FAB"

    work = tmp_path_factory.mktemp("fab")
    home = work / "airflow-home"
    home.mkdir()
    meta_db = f"airflow_fab_{uuid.uuid4().hex[:10]}"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ, **airflow_environment(),
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN":
            with_database(db_url, meta_db).replace("postgresql://", "postgresql+psycopg2://", 1),
        "AIRFLOW__CORE__AUTH_MANAGER": manager,
        "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_urlsafe(32),
        "AIRFLOW__API__SECRET_KEY": secrets.token_urlsafe(32),
        "AIRFLOW__API__BASE_URL": url,
        "ERA5_DATABASE_URL": db_url,
    }
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{meta_db}"')
    try:
        for argv in (["db", "migrate"],
                     # The official image's entrypoint (_AIRFLOW_WWW_USER_CREATE), with its defaults.
                     ["users", "create", "--username", username, "--firstname", "Airflow", "--lastname", "Admin",
                      "--email", "airflowadmin@example.com", "--role", "Admin", "--password", password]):
            proc = subprocess.run([AIRFLOW, *argv], env=env, capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, f"airflow {argv[0]} {argv[1]} failed:\n{(proc.stdout + proc.stderr)[-4000:]}"
        log = work / "api-server.log"
        with served([AIRFLOW, "api-server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
                    f"{url}/api/v2/monitor/health", log, "the API server", STARTUP_TIMEOUT_S, env):
            yield Fab(url, username, password, log)
    finally:
        with connect(db_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{meta_db}" WITH (FORCE)')


def test_the_auth_manager_is_fab_and_imports() -> None:
    from airflow.providers.fab.auth_manager.fab_auth_manager import FabAuthManager

    assert f"{FabAuthManager.__module__}.{FabAuthManager.__qualname__}" == FAB


def test_nothing_without_a_login(fab: Fab) -> None:
    assert httpx.get(f"{fab.url}/api/v2/dags", timeout=30).status_code == 401
    assert httpx.get(f"{fab.url}/era5/", timeout=30).status_code == 401


def test_token_login_reaches_the_rest_api_and_the_era5_page(fab: Fab) -> None:
    wrong = httpx.post(f"{fab.url}/auth/token", json={"username": fab.username, "password": fab.password + "x"},
                       timeout=30)
    assert wrong.status_code == 401, wrong.text
    answer = httpx.post(f"{fab.url}/auth/token", json={"username": fab.username, "password": fab.password},
                        timeout=30)
    assert answer.status_code in (200, 201), answer.text
    headers = {"Authorization": f"Bearer {answer.json()['access_token']}"}
    dags = httpx.get(f"{fab.url}/api/v2/dags", headers=headers, timeout=30)
    assert dags.status_code == 200, dags.text
    assert "total_entries" in dags.json()
    page = httpx.get(f"{fab.url}/era5/", headers=headers, timeout=60)
    assert page.status_code == 200, page.text[:2000]
    assert "<title>ERA5 months" in page.text


def test_form_login_sets_the_ui_cookie(fab: Fab) -> None:
    """The login page a person uses: its form (with its CSRF token) sets the ``_token`` cookie that
    the UI, the REST API and the ERA5 page accept."""
    with httpx.Client(base_url=fab.url, timeout=60) as client:
        form = client.get("/auth/login/")
        assert form.status_code == 200
        match = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', form.text)
        assert match, form.text[:2000]
        csrf = urllib.parse.unquote(match.group(1))
        bad = client.post("/auth/login/", data={"username": fab.username, "password": "not-it", "csrf_token": csrf})
        assert "_token" not in client.cookies, bad.status_code
        form = client.get("/auth/login/")
        csrf = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', form.text).group(1)  # type: ignore[union-attr]
        done = client.post("/auth/login/", data={"username": fab.username, "password": fab.password,
                                                 "csrf_token": csrf})
        assert done.status_code == 302, done.text[:2000]
        assert client.cookies.get("_token"), done.headers
        assert client.get("/api/v2/dags").status_code == 200
        page = client.get("/era5/")
        assert page.status_code == 200 and "<title>ERA5 months" in page.text
