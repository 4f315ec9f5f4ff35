"""The wheel an Airflow deployment installs: built from this checkout, installed from its file (no
editable install, nothing of the checkout on sys.path), and run from a directory outside the checkout:
the console script, the database, the DAG and plugin files a deployment copies, and one month through
the local CDS into the real TimescaleDB.

The environment is the session's ``image_install`` (conftest.py: the Dockerfile's pip lines in a fresh
virtual environment, Airflow and its ~200 dependencies, minutes), which the Dockerfile's and
requirements.txt's checks have read first. Here the wheel file is installed over it
(``--no-deps --force-reinstall``), replacing the package the image built from the same source; then
``pip install "era5etl[celery,statsd] @ <wheel>"`` with constraints.txt, as a deployment runs it, would
install nothing (its ``--dry-run --report``): every dependency the wheel declares, and its extras', is
there at constraints.txt's version. ``pip check`` passes over the result, and the package's record
(direct_url.json) names the wheel file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import uuid
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from era5etl.core.grid import Area, Grid, expected_rows
from era5etl.core.months import Month
from era5etl.core.paths import PROJECT_ROOT
from era5etl.db import connect, drop_table, redact
from era5etl.fetch import MANIFEST
from tests.integration.deploy.image import ImageInstall, would_install
from tests.integration.deploy.venvs import pip_check

pytestmark = [pytest.mark.integration, pytest.mark.deploy]

AREA = "46/7/45/8"  # 5 x 5 points: a month is 18,600 rows
MONTH = "2024-01"
INSTALL_TIMEOUT_S = 1800


@dataclass(frozen=True)
class Installed:
    venv: Path
    wheel: Path
    outside: Path  # the working directory of every command: not the checkout, not under it
    env: dict[str, str] = field(repr=False)  # holds the database URL with its password

    def run(self, *args: str, env: dict[str, str] | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, cwd=self.outside, env={**self.env, **(env or {})}, capture_output=True,
                              text=True, timeout=timeout)

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)


def _run(args: list[str], cwd: Path, timeout: float = INSTALL_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


@pytest.fixture(scope="module")
def installed(db_url: str, image_install: ImageInstall) -> Iterator[Installed]:
    root = Path(tempfile.mkdtemp(prefix="era5-wheel-"))
    assert not root.is_relative_to(PROJECT_ROOT)
    venv = image_install.venv
    try:
        started = time.monotonic()
        # The wheel alone (--no-deps here only: its dependencies are checked below).
        _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q",
              "-w", str(root / "dist"), str(PROJECT_ROOT)], cwd=root)
        wheels = list((root / "dist").glob("era5etl-*.whl"))
        assert len(wheels) == 1, wheels
        built = time.monotonic()
        # The wheel file itself over the image's package (built by pip from the same source)...
        _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
              "--no-deps", "--force-reinstall", str(wheels[0])], cwd=root)
        # ... then installed as the Dockerfile installs the package, with its extras and the repository's
        # constraints: pip's resolver finds every requirement the wheel declares, and its extras', met
        # at constraints.txt's versions, and would install nothing.
        requirement = f"era5etl[celery,statsd] @ {wheels[0].as_uri()}"
        would = would_install(venv, root, "-c", str(PROJECT_ROOT / "constraints.txt"), requirement)
        assert would == [], would
        checked = pip_check(venv)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        done = time.monotonic()
        # Reported, not asserted: what this costs on the machine at hand.
        print(f"\nwheel built in {built - started:.1f} s, checked against the image's environment and "
              f"installed over it in {done - built:.1f} s")
        outside = root / "work"
        outside.mkdir()
        # Only what a deployment sets: nothing points back at the checkout (no PYTHONPATH, no AIRFLOW_*
        # of the test session), so a file or module found there would be a failure, not a fallback.
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ERA5_", "AIRFLOW", "PYTHON", "VIRTUAL_ENV", "CDSAPI_"))}
        env.update({
            "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
            "ERA5_DATABASE_URL": db_url,
            "ERA5_STAGING_DIR": str(root / "staging"),
            "ERA5_VALIDATION_DIR": str(root / "validation"),
            "AIRFLOW_HOME": str(root / "airflow"),
            "GX_ANALYTICS_ENABLED": "False",
        })
        yield Installed(venv, wheels[0], outside, env)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_the_installed_package_is_the_wheel_with_its_sql_and_extras(installed: Installed) -> None:
    code = ("import json, era5etl, era5etl.db as db, statsd, airflow.providers.celery; "
            "print(json.dumps({'file': era5etl.__file__, 'sql': sorted(p.name for p in db.SQL_DIR.iterdir())}))")
    proc = installed.run(installed.bin("python"), "-c", code)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert Path(found["file"]).is_relative_to(installed.venv / "lib")  # site-packages, not include/
    # Installed from the wheel file, not from a source folder.
    code = "import importlib.metadata as m; print(m.distribution('era5etl').read_text('direct_url.json'))"
    proc = installed.run(installed.bin("python"), "-c", code)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["url"] == installed.wheel.as_uri()
    assert {"001_extension.sql", "010_weather_hypertable.sql", "030_rollups.sql"} <= set(found["sql"])


def test_the_wheel_carries_the_schema_and_declares_what_the_product_imports(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        requires = [line.split(":", 1)[1].strip() for line in wheel.read(meta).decode().splitlines()
                    if line.startswith("Requires-Dist:")]
    # The top-level sql/, packaged as era5etl/sql (pyproject.toml's package-dir).
    assert {f"era5etl/sql/{p.name}" for p in (PROJECT_ROOT / "sql").glob("*.sql")} <= names
    assert not any(n.startswith("sql/") for n in names)
    # pandas: validate/suite.py hands Great Expectations a DataFrame; jinja2: the Data Docs' cache.
    unconditional = {re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0].lower() for r in requires if "extra ==" not in r}
    assert {"pandas", "jinja2", "apache-airflow", "psycopg"} <= unconditional


def test_era5etl_version(installed: Installed) -> None:
    version = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]["version"]
    proc = installed.run(installed.bin("era5etl"), "--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"era5etl {version} ")


def test_era5etl_db_status(installed: Installed) -> None:
    # With ERA5_DATABASE_URL set nothing is provisioned: status names that server, password redacted
    # (the run below is what shows the installed package reaches it).
    proc = installed.run(installed.bin("era5etl"), "db", "status")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == redact(installed.env["ERA5_DATABASE_URL"])
    proc = installed.run(installed.bin("era5etl"), "db", "status", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"url": installed.env["ERA5_DATABASE_URL"], "running": True, "managed": False}


def test_the_two_line_dag_and_plugin_files_import_from_the_package(installed: Installed) -> None:
    # What a deployment puts in its DAGs and plugins folders: the repository's files, nothing else.
    dags, plugins = installed.outside / "dags", installed.outside / "plugins"
    dags.mkdir(exist_ok=True)
    plugins.mkdir(exist_ok=True)
    for name in ("era5_monthly.py", "era5_finalize.py"):
        shutil.copy(PROJECT_ROOT / "dags" / name, dags / name)
        assert len((dags / name).read_text().splitlines()) == 2
    for name in ("era5_dashboard.py", "era5_timetable.py"):
        shutil.copy(PROJECT_ROOT / "plugins" / name, plugins / name)
    code = """
import json, sys
from airflow import plugins_manager
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder=sys.argv[1])
plugins = plugins_manager.get_plugin_info()
print(json.dumps({"errors": {k: str(v) for k, v in bag.import_errors.items()},
                  "dags": {d: [t.task_id for t in bag.dags[d].topological_sort()] for d in bag.dags},
                  "fileloc": bag.dags["era5_monthly"].fileloc if "era5_monthly" in bag.dags else None,
                  "plugins": sorted(p["name"] for p in plugins)}))
"""
    proc = installed.run(installed.bin("python"), "-c", code, str(dags), env={
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags), "AIRFLOW__CORE__PLUGINS_FOLDER": str(plugins),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["errors"] == {}
    assert found["dags"]["era5_monthly"] == [
        "fetch", "stage", "load", "validate"]
    assert found["dags"]["era5_finalize"] == ["find", "reload"]
    assert found["fileloc"] == str(dags / "era5_monthly.py")  # the DAG is the deployment's file
    assert {"era5_dashboard", "era5_timetable"} <= set(found["plugins"])


@pytest.fixture
def fresh_table(db_url: str) -> Iterator[str]:
    """A table name nothing has created: the installed package makes its schema from its own SQL."""
    name = f"w_{uuid.uuid4().hex[:10]}"
    yield name
    with connect(db_url, autocommit=True) as conn:
        drop_table(conn, name)
        for ledger in ("era5_months", "era5_metrics", "era5_validation_days"):
            conn.execute(f"DELETE FROM {ledger} WHERE table_name = %s", (name,))


def test_run_month_from_the_installed_package(installed: Installed, cds: Any, db_url: str, fresh_table: str) -> None:
    expected = expected_rows(Month(2024, 1), Area.parse(AREA), Grid())
    proc = installed.run(installed.bin("era5etl"), "run-month", MONTH, "--area", AREA, "--table", fresh_table,
                         "--json", env={"CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (summary["rows"], summary["expected_rows"], summary["success"]) == (expected, expected, True)
    with connect(db_url) as conn:
        counted = conn.execute(f"SELECT count(*), count(DISTINCT time), count(DISTINCT (latitude, longitude)), "
                               f"min(time), max(time) FROM {fresh_table}").fetchone()
        ledger = conn.execute("SELECT state, rows FROM era5_months WHERE table_name = %s",
                              (fresh_table,)).fetchall()
    assert counted is not None
    assert counted[:3] == (expected, 31 * 24, 25)
    assert (counted[3], counted[4]) == (datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 1, 31, 23, tzinfo=UTC))
    assert ledger == [("validated", expected)]
    # The download went where the deployment said (ERA5_STAGING_DIR), not into the checkout or site-packages.
    assert len(list(Path(installed.env["ERA5_STAGING_DIR"]).rglob(MANIFEST))) == 1
