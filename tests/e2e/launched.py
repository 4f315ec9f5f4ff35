"""``python -m era5etl airflow up`` as a user runs it, for the end-to-end tests that start one.

The command runs in a process group of its own, in the foreground, with a temporary AIRFLOW_HOME,
its own metadata database and ports, so it disturbs no other Airflow here. ``db_url`` is the server
it runs on: the checkout's (``database_url()``) unless the test gives ``ERA5_HOME`` a server of its own.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from era5etl.db import connect, database_url, with_database
from tests.e2e.apiserver import clean
from tests.e2e.stack import AREA, DAG_ID, free_port


class Launched:
    def __init__(self, work: Path, env: dict[str, str] | None = None, db_url: str | None = None) -> None:
        self.home = work / "home"
        self.port, self.cds_port = free_port(), free_port()
        self.meta_db = f"airflow_first_{uuid.uuid4().hex[:8]}"
        self.table = f"e2e_first_{uuid.uuid4().hex[:8]}"
        self.out = work / "up.log"
        self.env = {**os.environ, "ERA5_TABLE": self.table, "ERA5_AREA": AREA, "ERA5_START_MONTH": "2015-01",
                    "ERA5_STAGING_DIR": str(work / "staging"), "ERA5_RETRY_DELAY_S": "2",
                    "ERA5_CDS_POLL_BASE": "0.2", "ERA5_CDS_POLL_CAP": "0.5", "GX_ANALYTICS_ENABLED": "False",
                    # One database writer at once, so two months of this new table never validate at
                    # the same instant: Airflow 3.3 then fails one recording the table's first Asset
                    # event (docs/operating.md#known-limits; it did so in a whole run here, 2026-11-29).
                    "ERA5_DB_POOL_SLOTS": "1", **(env or {})}
        self.db_url = db_url or database_url()
        for key in [k for k in self.env if k.startswith("AIRFLOW")]:
            del self.env[key]  # a first start: nothing of another Airflow's settings
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = self.password = self.token = ""

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "era5etl", "airflow", *args, "--home", str(self.home)]

    def up(self) -> None:
        with open(self.out, "wb") as out:
            self.proc = subprocess.Popen(
                self.command("up", "--port", str(self.port), "--cds-port", str(self.cds_port),
                             "--metadata-db", self.meta_db), env=self.env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            text = self.out.read_text(errors="replace")
            if (m := re.search(r"Airflow is up: (\S+).*\n\s+user admin, password (\S+)", text)):
                self.url, self.password = m.group(1), m.group(2)
                return
            assert self.proc.poll() is None, f"airflow up exited {self.proc.returncode}:\n{text}\n{self.logs()}"
            time.sleep(1)
        raise AssertionError(f"airflow up printed no URL in 300 s:\n{self.out.read_text()}\n{self.logs()}")

    def logs(self) -> str:
        folder = self.home / "logs" / "era5-stack"
        return "\n".join(f"---- {p.name}\n{p.read_text(errors='replace')[-2500:]}"
                         for p in sorted(folder.glob("*.log")))

    def api(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.url}/{path}", data=data, method=method,
                                         headers={"Authorization": f"Bearer {self.token}",
                                                  "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            text = response.read().decode()
        return json.loads(text) if text else None

    def airflow_cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The airflow CLI against this installation (its home and metadata database)."""
        meta = with_database(self.db_url, self.meta_db).replace("postgresql://", "postgresql+psycopg2://", 1)
        env = {**self.env, "AIRFLOW_HOME": str(self.home), "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": meta,
               "AIRFLOW__CORE__DAGS_FOLDER": str(Path(__file__).parents[2] / "dags"),
               "AIRFLOW__CORE__PLUGINS_FOLDER": str(Path(__file__).parents[2] / "plugins")}
        return subprocess.run([str(Path(sys.executable).parent / "airflow"), *args], env=env, capture_output=True,
                              text=True, timeout=180)

    def runs(self) -> dict[str, dict[str, Any]]:
        out = self.api("GET", f"api/v2/dags/{DAG_ID}/dagRuns?limit=100")
        return {r["dag_run_id"]: r for r in out["dag_runs"]}

    def rows_per_month(self) -> dict[str, int]:
        with connect(self.db_url) as conn:
            if conn.execute("SELECT to_regclass(%s)", (self.table,)).fetchone() == (None,):
                return {}
            rows = conn.execute("SELECT to_char(date_trunc('month', time), 'YYYY-MM'), count(*)"
                                f' FROM "{self.table}" GROUP BY 1').fetchall()
        return {str(m): int(n) for m, n in rows}

    def clean(self) -> None:
        with connect(self.db_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.meta_db}" WITH (FORCE)')
        clean(self.db_url, self.table, f"http://127.0.0.1:{self.cds_port}/api")

    def stop(self) -> None:
        """What a failed test leaves stopped: ``airflow down`` if the stack's state file is there, its
        foreground process group killed if it still runs."""
        if (self.home / "era5-stack.json").exists():
            subprocess.run(self.command("down"), env=self.env, timeout=120, check=False)
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def sign_in(self) -> None:
        """A token for the REST API from the login ``airflow up`` printed."""
        body = json.dumps({"username": "admin", "password": self.password}).encode()
        request = urllib.request.Request(f"{self.url}/auth/token", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            self.token = json.load(response)["access_token"]

    def wait(self, what: str, check: Any, timeout: float = 300) -> Any:
        """``check()``'s first true value, polled each second; AssertionError with the stack's logs after
        ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if (value := check()):
                return value
            time.sleep(1)
        raise AssertionError(f"timed out waiting for {what}\n{self.logs()}")
