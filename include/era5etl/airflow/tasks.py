"""Task callables for the monthly DAG: each reads its month from the run and calls one core step.

The run's month is its data interval's start (the DAG uses a monthly data-interval timetable), or
the ``month`` param when a user triggers one month by hand. Area, grid, variables and table come
from the run's params, so the trigger form can change them.
"""

# Imports inside functions: the DAG files import this package at every parse, and the core (numpy,
# psycopg, the pipeline) loads only in a task or a trigger's thread (Airflow's best practice on top-
# level code).

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, get_args

from era5etl import settings
from era5etl.airflow import assets, stats
from era5etl.airflow.hooks import database_url
from era5etl.core import names

if TYPE_CHECKING:
    from era5etl.core.datasets import Dataset
    from era5etl.pipeline.job import MonthJob

log = logging.getLogger(__name__)


def monthly_dag_id(dataset: str) -> str:
    """The monthly DAG of a dataset: ``era5_monthly`` for single levels, else ``era5_monthly_<dataset>``."""
    return "era5_monthly" if dataset == "single-levels" else f"era5_monthly_{dataset.replace('-', '_')}"


def default_params(s: settings.Settings, dataset: Dataset | None = None) -> dict[str, Any]:
    """The trigger form: each field titled, described and checked before a run is created; the
    defaults are the settings ``s`` for ``dataset`` (ERA5_DATASET's by default): a DAG of another
    dataset than ERA5_DATASET gets that dataset's own variables, table and levels."""
    from airflow.sdk import Param

    from era5etl.core.datasets import by_name
    from era5etl.pipeline.job import dataset_grid

    dataset = dataset or by_name(s.dataset)
    own = dataset.name == s.dataset
    variables = list(s.variables) if own else list(dataset.default_variables)
    table = s.table if own else settings.table_for(dataset.name)
    number = r"-?\d+(\.\d+)?"
    levels: dict[str, Any] = {}
    if dataset.has_levels:
        levels["levels"] = Param(list(s.levels if own and s.levels else dataset.levels), type="array",
                                 title="Pressure levels (hPa)", items={"type": "integer", "enum": list(dataset.levels)},
                                 description="the levels to load, each a row per hour and point")
    return {
        "dataset": Param(dataset.name, type="string", enum=[dataset.name], title="Dataset",
                         description=f"{dataset.title} ({dataset.collection}): this DAG's"),
        # month and revision may be left empty, so they are nullable: the UI's trigger and backfill
        # forms treat a param whose type excludes null as required and refuse to submit it empty.
        "month": Param(None, type=["null", "string"], pattern=r"^(\d{4}-(0[1-9]|1[0-2]))?$", title="Month",
                       description="YYYY-MM to load a given month from a manual trigger; empty: the run's "
                                   "data interval"),
        "area": Param(str(s.area), type="string", pattern=rf"^{number}/{number}/{number}/{number}$",
                      title="Area (N/W/S/E)", description="north/west/south/east in degrees, edges inclusive"),
        "grid": Param(str(dataset_grid(s, dataset)), type="string", pattern=r"^\d+(\.\d+)?$", title="Grid step",
                      description=f"grid step in degrees, a multiple of {dataset.grid.step:g} (the dataset's native "
                                  "grid)"),
        "variables": Param(variables, type="array", title="Variables",
                           items={"type": "string", "enum": [v.cds_name for v in dataset.catalogue]},
                           description="CDS variable names, one column each"),
        **levels,
        "table": Param(table, type="string", pattern=rf"^{names.PATTERN}$", maxLength=names.MAX_TABLE,
                       title="Table", description="the hypertable to load (created if missing)"),
        "data_format": Param(s.data_format, type="string", enum=list(get_args(settings.DataFormat)),
                             title="Data format", description="what the CDS is asked for: netcdf, or grib "
                                                              "(ERA5's native GRIB1: larger requests allowed, "
                                                              "fewer jobs); each format is its own download"),
        "revision": Param(None, type=["null", "string"], title="Revision",
                          description="empty for a normal load; any other value refetches the month instead of "
                                      "reusing its staged download (era5_finalize sets final-YYYYMMDD to replace "
                                      "ERA5T by final ERA5)"),
    }


def job(context: Any) -> MonthJob:
    """The run's month job: the ``month`` param, else the run's data interval; the rest from params."""
    from era5etl.pipeline.job import MonthJob
    from era5etl.pipeline.schedule import month_of_run

    params = context["params"]
    # A run triggered without a logical date (and no month param) has no month to load.
    interval_start = context.get("data_interval_start") or context.get("logical_date")
    month = month_of_run(params.get("month"), interval_start)
    if month is None:
        raise ValueError("this run has no data interval: trigger it with the month param (YYYY-MM)")
    return MonthJob.create(settings.load(), month, run_id=context["run_id"], area=params.get("area"),
                           grid=params.get("grid"), variables=params.get("variables"), table=params.get("table"),
                           revision=params.get("revision") or "", data_format=params.get("data_format"),
                           dataset=params.get("dataset"), levels=params.get("levels"))


def stage(**context: Any) -> dict[str, Any]:
    """**stage**: open the month's download (NetCDF 3/4, ZIPs, split parts) and check it before any
    row is written: the hours, the grid and the variables it must hold. Bad files fail here, the table untouched."""
    from era5etl.pipeline.steps import DownloadRemoved, stage_step

    stats.install()
    j = job(context)
    try:
        return {"month": str(j.month), **stage_step(database_url(), j)}
    except DownloadRemoved as exc:
        raise _fail_at_once(exc) from None


def load(**context: Any) -> dict[str, Any]:
    """**load**: binary COPY of the month into its chunks, one transaction each, straight into the
    columnstore; a rerun replaces exactly the rows the download covers. Progress lines in the log."""
    from era5etl.pipeline.steps import DownloadRemoved, load_step
    from era5etl.track import metrics

    stats.install()
    j = job(context)
    # Progress lines (rows, rate, ETA) every few seconds in the task log, per-chunk rates to StatsD/OTel.
    with metrics.progress_reporter(j.expected_rows, f"load {j.table} {j.month} {j.area}",
                                   tags={"table": j.table, "month": str(j.month), "area": str(j.area)}) as progress:
        try:
            result = load_step(database_url(), j, on_chunk=progress)
        except DownloadRemoved as exc:
            raise _fail_at_once(exc) from None
    return {"month": str(j.month), "rows": result.rows, "seconds": round(result.seconds, 3),
            "rows_per_s": round(result.rows_per_s), "deleted": result.deleted}


def _fail_at_once(exc: Exception) -> Exception:
    """The task failed without its retries: what failed is not a fault a retry could heal."""
    from airflow.sdk.exceptions import AirflowFailException

    return AirflowFailException(str(exc))


def validate(**context: Any) -> dict[str, Any]:
    """**validate**: Great Expectations over the per-day profile the database computes (row counts,
    one row per place and hour, values inside physical bounds) and the rollups the load wrote checked
    against the hourly rows; then the month finished in the columnstore (compressed, its daily chunks
    merged: the `compress` figures), its year copied place-major if this month made it whole (the
    `years` figures, `ERA5_YEAR_COPIES`), and the month's figures logged (rows, bytes, seconds and rows/s
    of every step, also on Browse -> ERA5 months). A validated month updates the table's Asset
    `era5://<table>` (month, area, grid, rows and run id in the event's extra). A failed verdict is the
    data's and fails the task at once; a lost worker or database is retried like any other step."""
    from airflow.sdk.exceptions import AirflowFailException

    from era5etl.pipeline.steps import RollupMismatch, ValidationFailed, compress_step, validate_step, years_step
    from era5etl.track.metrics import run_figures

    stats.install()
    j = job(context)
    url = database_url()
    try:
        v = validate_step(url, j)
    except (ValidationFailed, RollupMismatch) as exc:
        raise AirflowFailException(str(exc)) from None
    assets.record_validated(context, j.table, {"month": str(j.month), "area": str(j.area), "grid": str(j.grid),
                                               "rows": v.observed_rows, "run_id": j.run_id})
    packed = compress_step(url, j)
    copied = years_step(url, j)
    figures = run_figures(url, j.run_id, j.month, j.table)
    for f in figures:
        log.info("%s %-9s %12s rows %14s bytes %9.2f s %s rows/s", j.month, f["task"], f"{f['rows']:,}",
                 f"{f['bytes']:,}", f["seconds"], f["rows_per_s"])
    return {"month": str(j.month), "success": v.success, "rows": v.observed_rows,
            "expected_rows": v.expected_rows, "compression": packed.as_dict(),
            "year_copied": copied.as_dict() if copied else None, "tasks": figures}


def finalize_runs(**context: Any) -> list[dict[str, Any]]:
    """The era5_monthly runs that reload months still holding ERA5T once final ERA5 covers them.

    Each month's finished CDS jobs are superseded first, so the reload submits anew instead of
    re-attaching to the job that delivered ERA5T.
    """
    from era5etl.pipeline import finalize
    from era5etl.pipeline.schedule import revision_for

    url, now = database_url(), context["dag_run"].run_after
    revision = revision_for(now)
    runs = []
    for item in finalize.months_to_finalize(url, now):
        j = finalize.reload_job(item, revision, settings.load(), run_id=context["run_id"])
        finalize.supersede_jobs(url, j)
        area = item.area.replace("/", "_").replace(".", "p")
        runs.append({"conf": item.conf(revision), "trigger_dag_id": monthly_dag_id(item.dataset),
                     "trigger_run_id": f"finalize__{item.table}__{item.month}__{area}__{revision}"})
    return runs
