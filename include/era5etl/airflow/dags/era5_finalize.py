"""Weekly: find months still holding ERA5T (expver 0005) that final ERA5 now covers, and reload each
through an ``era5_monthly`` run with a ``revision``, so it refetches instead of reusing the ERA5T download.

Wiring only: the selection is era5etl.airflow.tasks.finalize_runs (over era5etl.pipeline.schedule).
"""

from __future__ import annotations

from datetime import datetime

from airflow.providers.standard.operators.trigger_dagrun import TriggerDagRunOperator
from airflow.sdk import DAG, task

from era5etl.airflow import tasks

with DAG(
    dag_id="era5_finalize",
    description="Reload months loaded as ERA5T once final ERA5 covers them",
    schedule="@weekly",
    start_date=datetime(2024, 1, 1),
    catchup=False,
    max_active_runs=1,
    tags=["era5", "timescaledb"],
    doc_md=__doc__,
) as dag:
    find = task(task_id="find", doc_md=tasks.finalize_runs.__doc__)(tasks.finalize_runs)()

    # One run per month; a rerun of this week's selection skips the runs it already made.
    TriggerDagRunOperator.partial(
        task_id="reload", skip_when_already_exists=True,
        doc_md="One run of the month's dataset's monthly DAG (`era5_monthly` for single levels) per month "
               "found, with its `revision`: it refetches the month.",
    ).expand_kwargs(find)
