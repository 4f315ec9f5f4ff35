"""A fresh environment a deploy test has installed, checked as an Airflow deployment would use it: pip's
own consistency check, and the DAGs and plugins parsed by Airflow's DagBag in a process of that
environment (nothing of the test session on its path), with the modules the compose stack runs
imported. Used for the Dockerfile's installs (test_dockerfile.py) and requirements.txt's
(test_requirements.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

# What the compose stack imports at run time beyond the DAGs: FAB's auth manager, the Celery executor,
# the postgres provider, the StatsD client, Great Expectations and the modules the forkserver preloads, and
# the Celery workers' configuration.
STACK_MODULES = ("airflow.providers.fab.auth_manager.fab_auth_manager",
                 "airflow.providers.celery.executors.celery_executor", "airflow.providers.postgres.hooks.postgres",
                 "statsd", "great_expectations", "era5etl.pipeline.steps", "era5etl.airflow.celery_config")

_PARSE = """if True:
    import importlib, json, sys
    import era5etl, era5etl.db
    from airflow.dag_processing.dagbag import DagBag
    bag = DagBag(dag_folder=sys.argv[1])
    for module in sys.argv[2:]:
        importlib.import_module(module)
    print(json.dumps({"era5etl": era5etl.__file__, "dags": sorted(bag.dags),
                      "sql": sorted(p.name for p in era5etl.db.SQL_DIR.iterdir() if p.name.endswith(".sql")),
                      "errors": {k: str(v) for k, v in bag.import_errors.items()}}))
"""


def pip_check(venv: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "check"], capture_output=True, text=True,
                          timeout=300)


def parse_dags(venv: Path, dags: Path, plugins: Path, home: Path, modules: tuple[str, ...] = STACK_MODULES
               ) -> dict[str, Any]:
    """{era5etl: the imported package's file, dags: the DAG ids, sql: the schema files the package
    reads, errors: the import errors} from a process of the environment, run in ``home``."""
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
           "AIRFLOW_HOME": str(home / "airflow"), "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
           "AIRFLOW__CORE__PLUGINS_FOLDER": str(plugins), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
           "GX_ANALYTICS_ENABLED": "False"}
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", _PARSE, str(dags), *modules],
                          env=env, cwd=home, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result
