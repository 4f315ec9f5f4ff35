"""What the package is made of and what it declares: pyproject.toml's package list against the folders
(the list is written out because the schema's top-level sql/ is mapped in as era5etl.sql), the
schema where the database code reads it, every third-party module the product imports provided by a
declared distribution, and requirements.txt's package line expanded as the Dockerfile expands it.

What the built wheel holds and what a fresh environment installed from it or from requirements.txt
does: tests/integration/deploy/test_wheel.py and test_requirements.py."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from era5etl.core.paths import PROJECT_ROOT
from era5etl.db import SQL_DIR

PYPROJECT: dict[str, Any] = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())
INCLUDE = PROJECT_ROOT / "include"
# Imported by the product but not its dependency, each for the reason given.
NOT_DECLARED = {
    # The local CDS emulator, a tool beside the product (tools/localcds): `run-month --local-cds`
    # imports it inside try/except and says how to install it when it is absent.
    "localcds",
}


def _load_dependencies_script() -> Any:
    spec = importlib.util.spec_from_file_location("dependencies", PROJECT_ROOT / "scripts" / "dependencies.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _name(requirement: str) -> str:
    """A requirement's distribution name, normalized (PEP 503)."""
    match = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


def test_the_package_list_is_every_package_folder_and_the_schema() -> None:
    setuptools = PYPROJECT["tool"]["setuptools"]
    on_disk = {".".join(p.parent.relative_to(INCLUDE).parts) for p in INCLUDE.rglob("__init__.py")}
    assert set(setuptools["packages"]) == on_disk | {"era5etl.sql"}
    assert setuptools["package-dir"] == {"": "include", "era5etl.sql": "sql"}
    assert setuptools["package-data"]["era5etl.sql"] == ["*.sql"]
    assert not (INCLUDE / "era5etl" / "sql").exists()  # one copy of the schema, at the top


def test_the_database_code_reads_the_top_level_sql_folder() -> None:
    files = sorted(p.name for p in SQL_DIR.iterdir() if p.name.endswith(".sql"))
    assert files == sorted(p.name for p in (PROJECT_ROOT / "sql").glob("*.sql"))
    assert {"001_extension.sql", "010_weather_hypertable.sql", "030_rollups.sql"} <= set(files)
    # An editable checkout: the files read are the repository's own, not a copy.
    assert Path(str(SQL_DIR)).resolve() == (PROJECT_ROOT / "sql").resolve()


def _third_party_imports() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (INCLUDE / "era5etl").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "era5etl":
                    found.setdefault(top, set()).add(str(path.relative_to(PROJECT_ROOT)))
    return found


def test_every_imported_package_is_declared() -> None:
    project = PYPROJECT["project"]
    declared = {_name(r) for r in project["dependencies"]}
    declared |= {_name(r) for extra in project["optional-dependencies"].values() for r in extra}
    providers = metadata.packages_distributions()  # import name -> the installed distributions with it
    imports = _third_party_imports()
    assert {"pandas", "numpy", "psycopg", "airflow", "jinja2"} <= set(imports)  # the scan sees them
    # A module not installed here (a dependency newer than this environment) is matched by its own name.
    undeclared = {module: sorted(files) for module, files in imports.items()
                  if module not in NOT_DECLARED
                  and not declared & ({_name(d) for d in providers.get(module, [])} or {_name(module)})}
    assert undeclared == {}


def test_pandas_is_declared_for_the_validation() -> None:
    # validate/suite.py hands Great Expectations a pandas DataFrame.
    assert "pandas" in _third_party_imports()
    assert any(f.endswith("validate/suite.py") for f in _third_party_imports()["pandas"])
    assert "pandas" in {_name(r) for r in PYPROJECT["project"]["dependencies"]}


def test_requirements_txt_is_the_package_with_the_stacks_extras_and_the_constraints() -> None:
    lines = [line.strip() for line in (PROJECT_ROOT / "requirements.txt").read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    assert lines == ["-c constraints.txt", ".[celery,statsd,fab]"]
    assert {"celery", "statsd", "fab"} <= set(PYPROJECT["project"]["optional-dependencies"])


def test_the_dependency_list_is_pyprojects_with_requirements_txts_extras() -> None:
    script = _load_dependencies_script()
    project = PYPROJECT["project"]
    extras = project["optional-dependencies"]
    out = script.expand((PROJECT_ROOT / "requirements.txt").read_text(), project)
    assert out == [*project["dependencies"], *extras["celery"], *extras["statsd"], *extras["fab"]]
    # A deployment's own line passes through; an option is the caller's.
    out = script.expand("-c constraints.txt\n.[statsd]\napache-airflow-providers-cncf-kubernetes  # k8s\n", project)
    assert out == [*project["dependencies"], *extras["statsd"], "apache-airflow-providers-cncf-kubernetes"]
    assert script.expand(".\n", project) == project["dependencies"]


def test_an_unknown_extra_in_requirements_txt_is_refused() -> None:
    script = _load_dependencies_script()
    with pytest.raises(SystemExit, match="nosuch"):
        script.expand(".[celery,nosuch]\n", PYPROJECT["project"])
