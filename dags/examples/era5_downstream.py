"""# ERA5 downstream (example)

An example of data-aware scheduling on the pipeline's Assets: this DAG runs whenever a month of the
table `ERA5_TABLE` (default `weather`) is validated by **era5_monthly**, whatever started that run
(the schedule, a backfill, a month triggered by hand, era5_finalize).

The validate task of era5_monthly updates the Asset `era5://<table>` of the run's table; the event's
extra holds the month (`YYYY-MM`), area, grid, rows and the run id. Its one task, **landed_months**,
logs and returns them (several months when Airflow grouped events into one run). Copy it, schedule
on `table_asset("<your table>")`, and put your own tasks after it (an export, a model run, a report).

Starts paused, like every new DAG: unpause it to have it follow the pipeline.

Wiring only: the task is `era5etl.airflow.assets.landed_months`.
"""

from __future__ import annotations

from datetime import UTC, datetime

from airflow.sdk import DAG, task

from era5etl import settings
from era5etl.airflow.assets import landed_months, table_asset

with DAG(
    dag_id="era5_downstream_example",
    description="Example: runs after each month of the ERA5 table is validated (Asset era5://<table>)",
    schedule=[table_asset(settings.load().table)],
    start_date=datetime(2024, 1, 1, tzinfo=UTC),
    catchup=False,
    tags=["era5", "example"],
    doc_md=__doc__,
) as dag:
    task(task_id="landed_months", doc_md=landed_months.__doc__)(landed_months)()
