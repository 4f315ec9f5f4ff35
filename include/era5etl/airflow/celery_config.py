"""The Celery workers' configuration: Airflow's own, plus the pipeline's preload
(``AIRFLOW__CELERY__CELERY_CONFIG_OPTIONS=era5etl.airflow.celery_config.CELERY_CONFIG``, set by the
compose file's ``celery`` profile and by the Celery end-to-end test).

A Celery worker imports the modules of its ``imports`` setting once, in its main process, before it
forks its pool's processes; each task process is forked from one of those (Airflow's supervisor forks
the task runner). So a task starts with Great Expectations, the DAGs and the plugins already imported
(:mod:`era5etl.airflow.preload` lists them and says what each costs), as LocalExecutor's tasks do
from their forkserver. :mod:`era5etl.airflow.preload` never raises: a module that fails to import is
skipped with one line on stderr, and the worker starts.
"""

from __future__ import annotations

from typing import Any

from airflow.providers.celery.executors.default_celery import DEFAULT_CELERY_CONFIG

CELERY_CONFIG: dict[str, Any] = {
    **DEFAULT_CELERY_CONFIG,
    "imports": (*DEFAULT_CELERY_CONFIG.get("imports", ()), "era5etl.airflow.preload"),
}

__all__ = ["CELERY_CONFIG"]
