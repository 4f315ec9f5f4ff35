"""Weekly: find months still holding ERA5T (expver 0005) that final ERA5 now covers, and reload each
through an ``era5_monthly`` run with a ``revision``, so it refetches instead of reusing the ERA5T download.

Wiring only: the selection is era5etl.schedule's.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from airflow.providers.standard.operators.trigger_dagrun import TriggerDagRunOperator
from airflow.sdk import DAG, task

with DAG(
    dag_id="era5_finalize",
    description="Reload months loaded as ERA5T once final ERA5 covers them",
    schedule="@weekly",
    start_date=datetime(2024, 1, 1),
    catchup=False,
    max_active_runs=1,
    tags=["era5", "timescaledb"],
) as dag:

    @task(task_id="find")
    def find(**context: Any) -> list[dict[str, Any]]:
        from era5etl import schedule
        from era5etl.airflow import tasks as steps
        from era5etl.config import Settings

        url, now = steps.database_url(), context["dag_run"].run_after
        revision = schedule.revision_for(now)
        runs = []
        for item in schedule.months_to_finalize(url, now):
            job = schedule.reload_job(item, revision, Settings.from_env(), run_id=context["run_id"])
            schedule.supersede_jobs(url, job)
            area = item.area.replace("/", "_").replace(".", "p")
            runs.append({"conf": item.conf(revision),
                         "trigger_run_id": f"finalize__{item.table}__{item.month}__{area}__{revision}"})
        return runs

    # One run per month; a rerun of this week's selection skips the runs it already made.
    TriggerDagRunOperator.partial(
        task_id="reload", trigger_dag_id="era5_monthly", skip_when_already_exists=True,
    ).expand_kwargs(find())
