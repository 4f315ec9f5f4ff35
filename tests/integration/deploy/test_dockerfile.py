"""The Dockerfile's Python installs, run: no Docker engine here, so its ``pip install`` RUN lines are run
as written, in Dockerfile order, in a clean virtual environment, with only the files its COPY lines
have copied by then (under a temporary folder standing for the image's root; see image.py for what
differs from a build). Then the installed set must pass ``pip check``, parse the DAGs and import what
the compose stack runs (FAB's auth manager, the Celery executor, the StatsD client, the modules the
forkserver preloads).

The environment is the session's ``image_install`` (conftest.py), shared with test_requirements.py
and test_wheel.py; what is checked here was read from it right after its build.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from era5etl.core.paths import PROJECT_ROOT
from tests.integration.deploy.image import DOCKERFILE, ImageInstall, steps

pytestmark = pytest.mark.integration


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


def test_the_installed_set_is_consistent(image_install: ImageInstall) -> None:
    # The dependencies and the project (and the tools of the localcds target).
    assert len(image_install.commands) >= 2, image_install.commands
    proc = image_install.checked
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_installed_set_parses_the_dags_and_imports_the_stack(image_install: ImageInstall) -> None:
    venv, result = image_install.venv, image_install.parsed
    assert result["errors"] == {}
    assert {"era5_monthly", "era5_finalize"} <= set(result["dags"])
    # The installed copy, not the checkout nor the copied source: a non-editable install, with the schema.
    assert Path(result["era5etl"]).is_relative_to(venv), result["era5etl"]
    assert result["sql"] == sorted(p.name for p in (PROJECT_ROOT / "sql").glob("*.sql"))
