"""requirements.txt as a deployment uses it (an Astronomer-style project installs it into its image),
checked on the session's ``image_install`` (conftest.py): the Dockerfile installs requirements.txt, its
dependencies first (scripts/dependencies.py expands the package's ``.[extras]`` line) and then the
package from it, in a fresh virtual environment. What proves that this is the install
``pip install -r requirements.txt`` makes, as written: run in the folder the image installed from, with
the file's own ``-c`` line and ``.[extras]`` line, pip's resolver (``--dry-run --report``) would install
nothing but the package itself, every requirement and extra being met already at constraints.txt's
versions. Then the environment passes ``pip check``, parses the repository's DAGs (the image's copy of
dags/ and plugins/) with no import error, imports what the compose stack runs, and has the package
installed non-editably with its schema.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest

from era5etl.core.paths import PROJECT_ROOT
from tests.integration.deploy.image import ImageInstall

pytestmark = [pytest.mark.integration, pytest.mark.deploy]


def test_requirements_txt_installs_nothing_the_image_lacks(image_install: ImageInstall) -> None:
    # pip builds and installs the local package (`.`) again whatever is installed; anything else listed
    # would be a requirement or an extra the Dockerfile's dependency layer missed.
    would = image_install.requirements_would_install
    assert [(i["name"], i["requested"]) for i in would] == [("era5etl", True)], would
    assert would[0]["version"] == metadata.version("era5etl")


def test_the_install_is_consistent_and_pinned_by_constraints(image_install: ImageInstall) -> None:
    proc = image_install.checked
    assert proc.returncode == 0, proc.stdout + proc.stderr
    versions = image_install.versions
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


def test_the_dags_parse_from_the_installed_package(image_install: ImageInstall) -> None:
    venv, project, result = image_install.venv, image_install.root / "opt/era5etl", image_install.parsed
    # The image's DAG and plugin files are the repository's.
    for folder in ("dags", "plugins"):
        copied = image_install.root / "opt/airflow" / folder
        for source in (PROJECT_ROOT / folder).glob("*.py"):
            assert (copied / source.name).read_bytes() == source.read_bytes(), source
    assert result["errors"] == {}
    assert {"era5_monthly", "era5_finalize"} <= set(result["dags"])
    # The installed copy with the schema inside it, neither the checkout nor the copy it was built from.
    assert Path(result["era5etl"]).is_relative_to(venv), result["era5etl"]
    assert not Path(result["era5etl"]).is_relative_to(project)
    assert not Path(result["era5etl"]).is_relative_to(PROJECT_ROOT)
    assert result["sql"] == sorted(p.name for p in (PROJECT_ROOT / "sql").glob("*.sql"))
