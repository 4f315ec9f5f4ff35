"""What every task process finds already imported: the LocalExecutor forkserver's preload
(``AIRFLOW__CORE__MP_FORKSERVER_PRELOAD=era5etl.airflow.preload``, the default of ``airflow up`` and of
the compose file).

With the ``forkserver`` start method, LocalExecutor's workers are forked from a server that imported
this module once, and each task process is forked from a worker: whatever is imported here costs a
task nothing. What a task process imported itself before this list (measured in a process forked after
the rest was imported, docs/benchmarks.md, "Airflow's overhead per task"):

* Great Expectations, for ``validate``: about 3 s;
* the plugins folder, which Airflow loads in every task process to find listeners: the Data view's
  FastAPI app, 0.27 s of CPU;
* the DAG file the task runs, parsed again in every task process (``BundleDagBag``), and that parser's
  module: 0.16 s and 0.18 s;
* the ``era5_timescale`` connection's hook (the postgres provider): 0.02 s.

A month is four task processes, so this is about 2.5 s of CPU a month that a backfill does not pay.

Nothing here may stop the forkserver: multiprocessing's forkserver survives only an ``ImportError`` of
a preloaded module, and the DAGs' module reads the ``ERA5_*`` settings when it is imported. A module
that fails here is skipped with one line on stderr; the task that needs it imports it again and fails
with the error in its own log, where a user looks.
"""

from __future__ import annotations

import importlib
import sys

MODULES = (
    "great_expectations",
    "era5etl.pipeline.steps",
    "airflow.dag_processing.dagbag",
    "airflow.providers.postgres.hooks.postgres",
    "era5etl.airflow.hooks",
    "era5etl.airflow.plugins.era5_dashboard",
    "era5etl.airflow.plugins.era5_timetable",
    "era5etl.airflow.dags.era5_monthly",
    "era5etl.airflow.dags.era5_finalize",
)


def preload(modules: tuple[str, ...] = MODULES) -> list[str]:
    """Import each module; the ones that failed, each with its error (also written to stderr)."""
    failed = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # any error: the forkserver must live; the task reports it
            failed.append(f"{name}: {type(exc).__name__}: {exc}")
            print(f"era5etl.airflow.preload: {name} not preloaded ({failed[-1]})", file=sys.stderr, flush=True)
    return failed


skipped = preload()
