"""requirements.txt as a deployment uses it (an Astronomer-style project installs it into its image): a
fresh virtual environment from the base interpreter, and ``pip install -r requirements.txt`` run as
written, in a copy of what the install reads (requirements.txt, constraints.txt, pyproject.toml,
include/, sql/), so the constraints come from the file's own ``-c`` line and the package from its
``.[extras]`` line. The result passes ``pip check``, parses the repository's DAGs with no import error,
imports what the compose stack runs, and has the package installed non-editably with its schema.

pip's cache serves the wheels, so this runs without the internet on a machine that installed the
checkout; the install takes minutes (Airflow and its ~200 dependencies).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from era5etl.core.paths import PROJECT_ROOT
from tests.integration.deploy.venvs import parse_dags, pip_check

pytestmark = [pytest.mark.integration, pytest.mark.deploy]

INSTALL_TIMEOUT_S = 1800
# What `pip install -r requirements.txt` reads: the file, its -c file, and the package it names.
READS = ("requirements.txt", "constraints.txt", "pyproject.toml", "include", "sql")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(venv, project): the environment requirements.txt was installed into, and the copy it ran in."""
    work = tmp_path_factory.mktemp("requirements")
    project, venv = work / "project", work / "venv"
    for name in READS:
        source = PROJECT_ROOT / name
        if source.is_dir():
            shutil.copytree(source, project / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
        else:
            project.mkdir(exist_ok=True)
            shutil.copy(source, project / name)
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {"PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": str(Path.home()), "LANG": "C.UTF-8",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    proc = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "-r", "requirements.txt"], cwd=project,
                          env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    yield venv, project


def _installed_versions(venv: Path) -> dict[str, str]:
    proc = subprocess.run([str(venv / "bin" / "pip"), "list", "--format=freeze"], capture_output=True, text=True,
                          timeout=300, check=True)
    return {name.lower(): version for name, _, version in
            (line.partition("==") for line in proc.stdout.splitlines() if "==" in line)}


def test_the_install_is_consistent_and_pinned_by_constraints(installed: tuple[Path, Path]) -> None:
    venv, _ = installed
    proc = pip_check(venv)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    versions = _installed_versions(venv)
    pins = {}
    for line in (PROJECT_ROOT / "constraints.txt").read_text().splitlines():
        name, sep, version = line.partition("==")
        if sep and not line.startswith("#"):
            pins[name.strip().lower()] = version.strip()
    # The extras' packages came, each at constraints.txt's version, Airflow among them.
    for name in ("apache-airflow", "apache-airflow-providers-celery", "apache-airflow-providers-fab", "statsd",
                 "pandas"):
        assert versions[name] == pins[name], name
    assert versions["era5etl"] == metadata.version("era5etl")


def test_the_dags_parse_from_the_installed_package(installed: tuple[Path, Path], tmp_path: Path) -> None:
    venv, project = installed
    result = parse_dags(venv, PROJECT_ROOT / "dags", PROJECT_ROOT / "plugins", tmp_path)
    assert result["errors"] == {}
    assert {"era5_monthly", "era5_finalize"} <= set(result["dags"])
    # The installed copy with the schema inside it, neither the checkout nor the copy it was built from.
    assert Path(result["era5etl"]).is_relative_to(venv), result["era5etl"]
    assert not Path(result["era5etl"]).is_relative_to(project)
    assert result["sql"] == sorted(p.name for p in (PROJECT_ROOT / "sql").glob("*.sql"))
