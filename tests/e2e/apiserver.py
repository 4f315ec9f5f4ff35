"""An Airflow API server of a test's own (the ERA5 page, its JSON and its reads), shared by the UI
and Data view tests: its own home and simple-auth login, its own process group, stopped afterwards
even when it died on its own. Also the checks and clean-up those tests share."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from era5etl.cli.database import airflow_environment
from era5etl.db import connect, drop_table

VENV_BIN = Path(sys.executable).parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
SIMPLE_AUTH = "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager"
STARTUP_TIMEOUT_S = 90
PATH = f"{VENV_BIN}:{os.environ.get('PATH', '')}"


@dataclass(frozen=True)
class ApiServer:
    url: str
    home: Path
    log: Path
    process: subprocess.Popen[bytes]

    def wait_healthy(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"the API server exited ({self.process.returncode}):\n{self.log.read_text()[-4000:]}")
            try:
                if status(f"{self.url}/api/v2/monitor/health") == 200:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        pytest.fail(f"the API server did not answer within {STARTUP_TIMEOUT_S} s:\n{self.log.read_text()[-4000:]}")

    def admin_password(self) -> str:
        return str(json.loads((self.home / "simple_auth_manager_passwords.json.generated").read_text())["admin"])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def status(url: str, headers: dict[str, str] | None = None) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


@contextmanager
def api_server(work: Path, db_url: str) -> Iterator[ApiServer]:
    """Start ``airflow api-server`` (simple auth manager, user admin) on a free port; stop its group."""
    home = work / "airflow-home"
    home.mkdir()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ, **airflow_environment(), "PATH": PATH,
        # A home of its own: the generated password file and any config land here, not in .local/airflow.
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__AUTH_MANAGER": SIMPLE_AUTH,
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
        "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_urlsafe(32),
        "AIRFLOW__API__SECRET_KEY": secrets.token_urlsafe(32),
        "AIRFLOW__API__BASE_URL": url,
        "ERA5_DATABASE_URL": db_url,
    }
    log = work / "api-server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [str(VENV_BIN / "airflow"), "api-server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
            env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield ApiServer(url, home, log, process)
    finally:
        stop_group(process)


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """Stop a process started in a group of its own, and the group: SIGTERM, then SIGKILL if it lingers."""
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)  # the group: the server's workers too
        except ProcessLookupError:
            break  # it died on its own: its log says why, the test's failure shows it
        try:
            process.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue


def clean(db_url: str, table: str, cds_url: str | None) -> None:
    """Drop a test's table and its ledger, metrics and CDS-job rows (of the test's own local CDS only)."""
    with connect(db_url, autocommit=True) as conn:
        drop_table(conn, table)
        for name in ("era5_months", "era5_metrics", "era5_validation_days"):
            if conn.execute("SELECT to_regclass(%s)", (name,)).fetchone() != (None,):
                conn.execute(f"DELETE FROM {name} WHERE table_name = %s", (table,))
        if cds_url and conn.execute("SELECT to_regclass('era5_cds_jobs')").fetchone() != (None,):
            conn.execute("DELETE FROM era5_cds_jobs WHERE api_url = %s", (cds_url,))
