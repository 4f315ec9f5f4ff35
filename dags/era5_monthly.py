"""ERA5 hourly single levels, one calendar month per run: wait, fetch, stage, load, validate, compress, report.

Wiring only: every task calls one step of the era5etl core through era5etl.airflow.tasks.
"""

from __future__ import annotations

from datetime import timedelta

from airflow.sdk import DAG, CronDataIntervalTimetable, task

from era5etl.airflow import tasks as steps
from era5etl.airflow.operators import CDS_POOL, DB_POOL, CdsFetchOperator, WaitForPublication
from era5etl.pipeline import schedule

with DAG(
    dag_id="era5_monthly",
    description="ERA5 hourly single levels from the CDS into a TimescaleDB hypertable, one month per run",
    # A data-interval timetable: each run's interval is the whole month it loads (plain "@monthly"
    # in Airflow 3 gives a zero-length interval), and catch-up creates one run per missed month.
    schedule=CronDataIntervalTimetable("0 0 1 * *", timezone="UTC"),
    start_date=steps.start_date(),
    catchup=True,
    max_active_runs=schedule.env_int("ERA5_MAX_ACTIVE_RUNS", 4),
    params=steps.default_params(),
    user_defined_macros={"era5_publication_target": schedule.publication_target_iso},
    default_args={"retries": schedule.env_int("ERA5_RETRIES", 2, minimum=0),
                  "retry_delay": timedelta(seconds=schedule.env_int("ERA5_RETRY_DELAY_S", 60))},
    tags=["era5", "timescaledb"],
) as dag:
    # A run is created when its month ends; ERA5T lags by ~5 days (ERA5_PUBLICATION_DELAY, default 6).
    wait = WaitForPublication(
        task_id="wait_for_era5", retries=0,
        target_time="{{ era5_publication_target(params.month, data_interval_start) }}",
    )
    fetch = CdsFetchOperator(task_id="fetch", pool=CDS_POOL)
    stage = task(task_id="stage")(steps.stage)()
    load = task(task_id="load", pool=DB_POOL)(steps.load)()
    validate = task(task_id="validate", retries=0, pool=DB_POOL)(steps.validate)()
    # Compresses the validated month when the TimescaleDB licence allows; otherwise says so and succeeds.
    compress = task(task_id="compress", pool=DB_POOL)(steps.compress)()
    report = task(task_id="report")(steps.report)()
    wait >> fetch >> stage >> load >> validate >> compress >> report
