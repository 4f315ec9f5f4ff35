"""# ERA5 monthly

ERA5 hourly single levels from the Copernicus CDS into a TimescaleDB hypertable, **one calendar
month per run**: fetch (once the month is published), stage, load (the hourly rows with their daily
and monthly rollups), validate (then the month is compressed and its figures logged).

- **Runs are named by the month they load**: `backfill__2022-01-01T00:00:00+00:00` is January 2022
  (its data interval is the whole month; `fetch` waits, deferred, until the month is published).
- **Backfill** a range of months from *Trigger -> Backfill* (or `airflow backfill create`); each
  month whose 1st falls in the range is one run, independent; a rerun replaces exactly its rows.
  Catch-up is off unless `ERA5_CATCHUP=true`, so unpausing the DAG for a backfill loads nothing else.
- **One month by hand**: trigger with the *Month* param (YYYY-MM); area, grid, variables and table
  can be changed in the form.
- **Where it stands**: *Browse -> ERA5 months* shows every month's state, rows and rates.

Connections: `era5_timescale` (Postgres) for the database, `era5_cds` (host: API URL, password:
key) for the CDS; without them the environment's `ERA5_DATABASE_URL` and `CDSAPI_URL`/`CDSAPI_KEY`.

One DAG per dataset (docs/datasets.md): `era5_monthly` loads single levels, `era5_monthly_pressure_levels`
the pressure levels chosen in its *Pressure levels* param into its own table, `era5_monthly_land` ERA5-Land,
and `era5_monthly_monthly_means`, `era5_monthly_monthly_means_by_hour` and `era5_monthly_land_monthly_means`
the monthly means (a row a month and point, or 24 by hour of day), each published about five days after
its month like the hourly data.

Wiring only: every task calls one step of the era5etl core through `era5etl.airflow.tasks`.
"""

from __future__ import annotations

from datetime import timedelta

from airflow.sdk import DAG, task

from era5etl import settings
from era5etl.airflow import tasks
from era5etl.airflow.assets import VALIDATED
from era5etl.airflow.operators import CDS_POOL, DB_POOL, CdsFetchOperator
from era5etl.airflow.timetable import MonthTimetable
from era5etl.core.datasets import DATASETS, SINGLE_LEVELS, Dataset

configured = settings.load()  # once per parse: a bad ERA5_* value fails the parse with its message


def monthly_dag(dataset: Dataset) -> DAG:
    """The monthly DAG of one dataset: the same tasks, its own params (variables, table, levels)."""
    with DAG(
        dag_id=tasks.monthly_dag_id(dataset.name),  # era5_monthly for single levels: its past runs keep their DAG
        description=f"{dataset.title} from the CDS into a TimescaleDB hypertable, one month per run",
        # Each run's data interval is the whole month it loads (plain "@monthly" in Airflow 3 gives a
        # zero-length interval) and the run is named by the month's start, not its end.
        schedule=MonthTimetable(),
        start_date=configured.start_month.start,  # ERA5_START_MONTH: the first month the schedule loads
        catchup=configured.catchup,  # ERA5_CATCHUP: off, unpausing (e.g. for a backfill) loads no other month
        max_active_runs=configured.max_active_runs,
        params=tasks.default_params(configured, dataset),
        default_args={"retries": configured.retries, "retry_delay": timedelta(seconds=configured.retry_delay_s)},
        tags=["era5", "timescaledb", dataset.name],
        doc_md=__doc__,
    ) as made:
        # A run is created when its month begins; its fetch waits, deferred, until the month is published
        # (ERA5T lags by ~5 days: ERA5_PUBLICATION_DELAY, default 6), and a month long out goes straight on.
        fetch = CdsFetchOperator(task_id="fetch", pool=CDS_POOL, doc_md=CdsFetchOperator.__doc__)
        stage = task(task_id="stage", doc_md=tasks.stage.__doc__)(tasks.stage)()
        load = task(task_id="load", pool=DB_POOL, doc_md=tasks.load.__doc__)(tasks.load)()
        validate = task(task_id="validate", pool=DB_POOL, outlets=[VALIDATED],  # era5://<table>, per run
                        doc_md=tasks.validate.__doc__)(tasks.validate)()
        fetch >> stage >> load >> validate
    return made


# One DAG per dataset of the family, from the one factory; single levels keep their DAG id.
dags = {dataset.name: monthly_dag(dataset) for dataset in DATASETS.values()}
dag = dags[SINGLE_LEVELS.name]
# Each dataset's DAG by its id at module level, where Airflow looks for DAGs, and what a DAGs folder's
# two-line file takes with ``from era5etl.airflow.dags.era5_monthly import *``.
globals().update({d.dag_id: d for d in dags.values()})
__all__ = ["dag", "dags", *(d.dag_id for d in dags.values())]
