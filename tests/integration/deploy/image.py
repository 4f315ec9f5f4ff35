"""The Dockerfile's Python installs, run without a Docker engine: its instructions parsed, and the pip
RUN lines of the Airflow image's stage run as written, in Dockerfile order, in a fresh virtual
environment, with only the files its COPY lines have copied by then (under a folder standing for the
image's root).

What differs from a build, and why it does not change what gets installed: the base image's own
Airflow is absent (the RUN lines install the pinned one over it anyway), ``--no-cache-dir`` is dropped
so pip's cache can serve the wheels, and ``PIP_NO_COMPILE`` skips writing the installed modules' .pyc
files (they are written on first import instead).

One such environment is built per session (``conftest.py``'s ``image_install``) and shared: the
Dockerfile's checks (test_dockerfile.py), requirements.txt's (test_requirements.py: the Dockerfile
installs requirements.txt) and the wheel's (test_wheel.py, which installs the wheel over it last).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from era5etl.core.paths import PROJECT_ROOT
from tests.integration.deploy.venvs import STACK_MODULES, parse_dags, pip_check

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


def pip_env(venv: Path) -> dict[str, str]:
    """The environment of every pip run into ``venv``: nothing of the test session's, pip's own
    settings of this machine (index, find-links, certificates) kept."""
    env = {k: v for k, v in os.environ.items() if k.startswith("PIP_")}
    env.update({"PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"),
                "LANG": "C.UTF-8", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_COMPILE": "1",
                "VIRTUAL_ENV": str(venv)})
    return env


def _copy(step: Step, root: Path) -> None:
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


def build(work: Path) -> tuple[Path, Path, list[str]]:
    """(venv, root, commands): the Dockerfile's pip RUN lines run in a fresh venv over a stand-in image root."""
    root, venv = work / "root", work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = pip_env(venv)
    args: dict[str, str] = {}
    ran: list[str] = []
    all_steps = steps(DOCKERFILE.read_text())
    # The Airflow image's stage, from its FROM on; a COPY --from another stage (uPlot's files from the
    # npm stage) brings no Python package and is left out.
    first = next(i for i, s in enumerate(all_steps) if s.kind == "FROM" and s.args.startswith("apache/airflow"))
    for step in all_steps[first:]:
        if step.kind == "ARG":
            name, _, default = step.args.partition("=")
            args[name] = default.strip('"')
        elif step.kind == "COPY" and "--from=" not in step.args:
            _copy(step, root)
        elif step.kind == "RUN" and "pip install" in step.args:
            command = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), ""), step.args)
            command = command.replace("--no-cache-dir", "")
            command = re.sub(r"(?<![\w/])/opt/", f"{root}/opt/", command)
            proc = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True,
                                  timeout=INSTALL_TIMEOUT_S)
            assert proc.returncode == 0, (f"{command}\nfailed ({proc.returncode}):\n"
                                          f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
            ran.append(command)
    return venv, root, ran


def would_install(venv: Path, cwd: Path, *requirements: str) -> list[dict[str, Any]]:
    """What ``pip install <requirements>`` would install into ``venv`` (its --dry-run report's
    ``install`` list: name, version, and the requested flag), resolved with everything pip reads
    (a requirements file's -c line, a package's extras), the environment left as it is."""
    with tempfile.TemporaryDirectory(prefix="pip-report-") as folder:
        report = Path(folder) / "report.json"
        proc = subprocess.run([str(venv / "bin" / "pip"), "install", "--dry-run", "--report", str(report),
                               *requirements], cwd=cwd, env=pip_env(venv), capture_output=True, text=True,
                              timeout=INSTALL_TIMEOUT_S)
        assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        items: list[dict[str, Any]] = json.loads(report.read_text())["install"]
    return [{"name": i["metadata"]["name"].lower(), "version": i["metadata"]["version"],
             "requested": i.get("requested", False)} for i in items]


@dataclass(frozen=True)
class ImageInstall:
    venv: Path
    root: Path  # the stand-in image root: root / "opt/era5etl" is the folder the project was installed from
    commands: list[str]  # the pip RUN lines run, as run
    checked: subprocess.CompletedProcess[str] = field(repr=False)  # pip check
    versions: dict[str, str]  # pip list: name -> version
    parsed: dict[str, Any]  # venvs.parse_dags of the image's DAGs folder, the stack's modules and localcds
    requirements_would_install: list[dict[str, Any]]  # pip install -r requirements.txt --dry-run, in the image


def installed_versions(venv: Path) -> dict[str, str]:
    proc = subprocess.run([str(venv / "bin" / "pip"), "list", "--format=freeze"], capture_output=True, text=True,
                          timeout=300, check=True)
    return {name.lower(): version for name, _, version in
            (line.partition("==") for line in proc.stdout.splitlines() if "==" in line)}


def install_image(work: Path) -> ImageInstall:
    """The environment built, and what the deploy modules check read from it at once."""
    venv, root, commands = build(work)
    home = work / "home"
    home.mkdir()
    return ImageInstall(
        venv=venv, root=root, commands=commands, checked=pip_check(venv), versions=installed_versions(venv),
        parsed=parse_dags(venv, root / "opt/airflow/dags", root / "opt/airflow/plugins", home,
                          (*STACK_MODULES, "localcds.server")),
        requirements_would_install=would_install(venv, root / "opt/era5etl", "-r", "requirements.txt"))
