"""Task callables for the monthly DAG: each reads its month from the run and calls one core step.

The run's month is its data interval's start (the DAG uses a monthly data-interval timetable), or
the ``month`` param when a user triggers one month by hand. Area, grid, variables and table come
from the run's params, so the trigger form can change them.
"""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from era5etl import db
from era5etl.airflow import stats
from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import DEFAULT_VARIABLES, parse_list
from era5etl.fetch import Credentials
from era5etl.settings import DEFAULT_AREA, Settings

log = logging.getLogger(__name__)

DB_CONN_ID = "era5_timescale"
CDS_CONN_ID = "era5_cds"


def start_date() -> datetime:
    """First month the schedule catches up from: ERA5_START_MONTH (YYYY-MM), default 2024-01."""
    return Month.parse(os.environ.get("ERA5_START_MONTH", "2024-01")).start


def default_params() -> dict[str, Any]:
    from airflow.sdk import Param

    settings = Settings.from_env()
    return {
        # month and revision may be left empty, so they are nullable: the UI's trigger and backfill
        # forms treat a param whose type excludes null as required and refuse to submit it empty.
        "month": Param(None, type=["null", "string"], pattern=r"^(\d{4}-\d{2})?$",
                       description="YYYY-MM to load a given month from a manual trigger; empty: the run's "
                                   "data interval"),
        "area": Param(str(settings.area) if settings.area else DEFAULT_AREA, type="string",
                      description="N/W/S/E in degrees"),
        "grid": Param(str(settings.grid), type="string", description="grid step in degrees (multiple of 0.25)"),
        "variables": Param(list(settings.variables), type="array",
                           items={"type": "string", "enum": list(DEFAULT_VARIABLES)},
                           description="CDS variable names"),
        "table": Param(settings.table, type="string", description="hypertable to load"),
        "revision": Param(None, type=["null", "string"],
                          description="empty for a normal load; any other value refetches the month instead of "
                                      "reusing its staged download (era5_finalize sets final-YYYYMMDD to replace "
                                      "ERA5T by final ERA5)"),
    }


def database_url() -> str:
    """The Airflow connection ``era5_timescale`` when defined, else ERA5_DATABASE_URL or the local server."""
    from airflow.sdk import BaseHook
    from airflow.sdk.exceptions import AirflowNotFoundException

    try:
        conn = BaseHook.get_connection(DB_CONN_ID)
    except AirflowNotFoundException:
        return db.database_url()
    return conn.get_uri().replace("postgres://", "postgresql://", 1)


def cds_credentials(conn_id: str = CDS_CONN_ID) -> Credentials:
    """The Airflow connection ``era5_cds`` (host: the API URL, password: the key), else the environment."""
    from airflow.sdk import BaseHook
    from airflow.sdk.exceptions import AirflowNotFoundException

    try:
        conn = BaseHook.get_connection(conn_id)
    except AirflowNotFoundException:
        return Credentials.from_env()
    return credentials_from_connection(conn)


def credentials_from_connection(conn: Any) -> Credentials:
    """The CDS URL and key of an Airflow connection (host: the API URL, or its parts; password: the key)."""
    host = conn.host or ""
    if "://" not in host:  # given as parts (e.g. from an AIRFLOW_CONN_ URI): scheme, host, port, path
        scheme = conn.conn_type if conn.conn_type in ("http", "https") else "https"
        host = f"{scheme}://{host}{f':{conn.port}' if conn.port else ''}/{conn.schema or 'api'}"
    return Credentials(url=host, key=conn.password)


def job(context: Any) -> Any:
    from era5etl.pipeline import MonthJob

    params = context["params"]
    if params.get("month"):
        month = Month.parse(params["month"])
    else:
        # A run triggered without a logical date (and no month param) has no month to load.
        interval_start = context.get("data_interval_start") or context.get("logical_date")
        if interval_start is None:
            raise ValueError("this run has no data interval: trigger it with the month param (YYYY-MM)")
        month = Month.of(interval_start.astimezone(UTC))
    settings = Settings.from_env()
    return MonthJob(
        month=month,
        area=Area.parse(params.get("area") or DEFAULT_AREA),
        grid=Grid.parse(params.get("grid") or "0.25"),
        variables=tuple(parse_list(params.get("variables") or list(DEFAULT_VARIABLES))),
        table=params.get("table") or settings.table,
        run_id=context["run_id"],
        staging_dir=Path(settings.staging_dir),
        chunk_interval=settings.chunk_interval,
        revision=params.get("revision") or "",
    )


def stage(**context: Any) -> dict[str, Any]:
    from era5etl.pipeline import stage_step

    stats.install()
    j = job(context)
    return {"month": str(j.month), **stage_step(database_url(), j)}


def load(**context: Any) -> dict[str, Any]:
    from era5etl.pipeline import load_step
    from era5etl.track import metrics

    stats.install()
    j = job(context)
    # Progress lines (rows, rate, ETA) every few seconds in the task log, per-chunk rates to StatsD/OTel.
    with metrics.progress_reporter(j.expected_rows, f"load {j.table} {j.month} {j.area}",
                                   tags={"table": j.table, "month": str(j.month), "area": str(j.area)}) as progress:
        result = load_step(database_url(), j, on_chunk=progress)
    return {"month": str(j.month), "rows": result.rows, "seconds": round(result.seconds, 3),
            "rows_per_s": round(result.rows_per_s), "deleted": result.deleted}


def validate(**context: Any) -> dict[str, Any]:
    from era5etl.pipeline import validate_step

    stats.install()
    j = job(context)
    v = validate_step(database_url(), j)
    return {"month": str(j.month), "success": v.success, "rows": v.observed_rows,
            "expected_rows": v.expected_rows}


def compress(**context: Any) -> dict[str, Any]:
    from era5etl.pipeline import compress_step

    stats.install()
    j = job(context)
    return {"month": str(j.month), **compress_step(database_url(), j).as_dict()}


def report(**context: Any) -> dict[str, Any]:
    """Log the month's figures from the metrics table: one place to read a run's throughput."""
    j = job(context)
    with db.connect(database_url()) as conn:
        rows = conn.execute(
            "SELECT task, rows, bytes, seconds, rows_per_s FROM era5_metrics WHERE run_id = %s"
            " AND month = %s AND table_name = %s ORDER BY id",
            (j.run_id, j.month.start.date(), j.table),
        ).fetchall()
    figures = [{"task": task, "rows": n, "bytes": size, "seconds": round(float(secs), 3),
                "rows_per_s": round(float(rate)) if rate else None}
               for task, n, size, secs, rate in rows]
    for f in figures:
        log.info("%s %-9s %12s rows %14s bytes %9.2f s %s rows/s", j.month, f["task"], f"{f['rows']:,}",
                 f"{f['bytes']:,}", f["seconds"], f["rows_per_s"])
    return {"month": str(j.month), "tasks": figures}


def finalize_runs(**context: Any) -> list[dict[str, Any]]:
    """The era5_monthly runs that reload months still holding ERA5T once final ERA5 covers them.

    Each month's finished CDS jobs are superseded first, so the reload submits anew instead of
    re-attaching to the job that delivered ERA5T.
    """
    from era5etl.pipeline import schedule

    url, now = database_url(), context["dag_run"].run_after
    revision = schedule.revision_for(now)
    runs = []
    for item in schedule.months_to_finalize(url, now):
        j = schedule.reload_job(item, revision, Settings.from_env(), run_id=context["run_id"])
        schedule.supersede_jobs(url, j)
        area = item.area.replace("/", "_").replace(".", "p")
        runs.append({"conf": item.conf(revision),
                     "trigger_run_id": f"finalize__{item.table}__{item.month}__{area}__{revision}"})
    return runs
