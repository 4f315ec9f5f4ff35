"""The Dockerfile's Python installs, run: no Docker engine here, so its ``pip install`` RUN lines are run
as written, in Dockerfile order, in a clean virtual environment, with only the files its COPY lines
have copied by then (under a temporary folder standing for the image's root). Then the installed set
must parse the DAGs and import what the compose stack runs (FAB's auth manager, the Celery executor,
the StatsD client, the modules the forkserver preloads).

What differs from a build, and why it does not change what gets installed: the base image's own
Airflow is absent (the RUN lines install the pinned one over it anyway), and ``--no-cache-dir`` is
dropped so the machine's pip cache serves the wheels (it only keeps the image small).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from era5etl.core.paths import PROJECT_ROOT
from tests.integration.deploy.venvs import STACK_MODULES, parse_dags, pip_check

pytestmark = pytest.mark.integration

DOCKERFILE = PROJECT_ROOT / "Dockerfile"
INSTALL_TIMEOUT_S = 1500


@dataclass(frozen=True)
class Step:
    kind: str  # FROM, ARG, COPY, RUN, ...
    args: str


def steps(text: str) -> list[Step]:
    """The Dockerfile's instructions, continuation lines joined, comments dropped."""
    out: list[Step] = []
    current = ""
    for line in text.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        current += line
        kind, _, args = current.strip().partition(" ")
        out.append(Step(kind.upper(), args.strip()))
        current = ""
    return out


def requirement_pins() -> dict[str, str]:
    """constraints.txt's pins: the one place versions are written."""
    pins = {}
    for line in (PROJECT_ROOT / "constraints.txt").read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-\[\]]+)==([^\s;#]+)", line)
        if match:
            pins[match.group(1).lower()] = match.group(2)
    return pins


def test_versions_are_pinned_once() -> None:
    """No ARG or pip argument repeats a pin of constraints.txt; the base image's tag agrees with it."""
    text = DOCKERFILE.read_text()
    all_steps = steps(text)
    pins = requirement_pins()
    base = next(s.args for s in all_steps if s.kind == "FROM" and s.args.startswith("apache/airflow"))
    match = re.match(r"apache/airflow:slim-(\d+\.\d+\.\d+)-python(\d+\.\d+) AS airflow$", base)
    assert match, base
    assert match.group(1) == pins["apache-airflow"], (base, pins["apache-airflow"])
    assert match.group(2) == "3.11"  # the Python constraints.txt was frozen on (README, Libraries)
    for step in all_steps:
        assert not re.search(r"==\s*\d", step.args), f"a version pinned in the Dockerfile: {step.kind} {step.args}"
        if step.kind == "ARG":
            assert "VERSION" not in step.args, step.args


def test_dependencies_are_installed_before_the_code_is_copied() -> None:
    """A code edit must not invalidate the dependency layer: the install of the dependencies sees only
    constraints.txt, requirements.txt, pyproject.toml and the script that expands requirements.txt's
    package line into pyproject's dependencies; the project itself (its code and the top-level sql/) is
    installed non-editably after it, from requirements.txt."""
    all_steps = steps(DOCKERFILE.read_text())
    # The Airflow image's stage only (an earlier stage fetches uPlot from the npm registry).
    first = next(i for i, s in enumerate(all_steps) if s.kind == "FROM" and s.args.startswith("apache/airflow"))
    copies = [i for i, s in enumerate(all_steps) if s.kind == "COPY" and "--from=" not in s.args and i > first]
    installs = [i for i, s in enumerate(all_steps) if s.kind == "RUN" and "pip install" in s.args]
    deps = next(i for i in installs if "dependencies.py" in all_steps[i].args)
    before = [all_steps[i].args.split()[1:-1] for i in copies if i < deps]
    assert [src for srcs in before for src in srcs] == ["constraints.txt", "requirements.txt", "pyproject.toml",
                                                       "scripts/dependencies.py"], before
    project = next(i for i in installs if all_steps[i].args.startswith("cd /opt/era5etl &&"))
    assert project > deps
    assert all_steps[project].args.rstrip().endswith("-r requirements.txt")
    assert "--no-deps" in all_steps[project].args and " -e " not in all_steps[project].args
    for folder in ("include", "sql"):
        code = [i for i in copies if folder in all_steps[i].args.split()]
        assert code and all(deps < i < project for i in code), folder


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(venv, root): the Dockerfile's pip RUN lines run in a fresh venv over a stand-in image root."""
    work = tmp_path_factory.mktemp("dockerfile")
    root = work / "root"
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {"PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"),
           "LANG": "C.UTF-8", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "VIRTUAL_ENV": str(venv)}
    args: dict[str, str] = {}
    ran = []
    all_steps = steps(DOCKERFILE.read_text())
    # The Airflow image's stage, from its FROM on; a COPY --from another stage (uPlot's files from the
    # npm stage) brings no Python package and is left out.
    first = next(i for i, s in enumerate(all_steps) if s.kind == "FROM" and s.args.startswith("apache/airflow"))
    for step in all_steps[first:]:
        if step.kind == "COPY" and "--from=" in step.args:
            continue
        if step.kind == "ARG":
            name, _, default = step.args.partition("=")
            args[name] = default.strip('"')
        elif step.kind == "COPY":
            parts = [p for p in shlex.split(step.args) if not p.startswith("--")]
            *sources, dest = parts
            target = root / dest.lstrip("/")
            for src in sources:
                path = PROJECT_ROOT / src
                if path.is_dir():
                    shutil.copytree(path, target, dirs_exist_ok=True,
                                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
                else:  # a file into a folder (dest ends with /) or to a file name
                    file = target / path.name if dest.endswith("/") else target
                    file.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(path, file)
        elif step.kind == "RUN" and "pip install" in step.args:
            command = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), ""), step.args)
            command = command.replace("--no-cache-dir", "")
            command = re.sub(r"(?<![\w/])/opt/", f"{root}/opt/", command)
            proc = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True,
                                  timeout=INSTALL_TIMEOUT_S)
            assert proc.returncode == 0, (f"{command}\nfailed ({proc.returncode}):\n"
                                          f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
            ran.append(command)
    assert len(ran) >= 2, ran  # the dependencies and the project (and the tools of the localcds target)
    yield venv, root


def test_the_installed_set_is_consistent(built: tuple[Path, Path]) -> None:
    venv, _ = built
    proc = pip_check(venv)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_installed_set_parses_the_dags_and_imports_the_stack(built: tuple[Path, Path],
                                                                 tmp_path: Path) -> None:
    venv, root = built
    result = parse_dags(venv, root / "opt/airflow/dags", root / "opt/airflow/plugins", tmp_path,
                        (*STACK_MODULES, "localcds.server"))
    assert result["errors"] == {}
    assert {"era5_monthly", "era5_finalize"} <= set(result["dags"])
    # The installed copy, not the checkout nor the copied source: a non-editable install, with the schema.
    assert Path(result["era5etl"]).is_relative_to(venv), result["era5etl"]
    assert result["sql"] == sorted(p.name for p in (PROJECT_ROOT / "sql").glob("*.sql"))
