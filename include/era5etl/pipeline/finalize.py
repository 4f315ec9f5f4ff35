"""ERA5T to final ERA5: find the ledger's months that final data should now cover, and reload each
from a fresh download (new staging folder, new CDS jobs) so its rows are replaced exactly."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from era5etl import settings as config
from era5etl.core.expver import PRELIMINARY
from era5etl.core.months import Month
from era5etl.fetch import Credentials, FetchOptions, plan
from era5etl.fetch.jobs import PgJobStore
from era5etl.pipeline.job import MonthJob
from era5etl.pipeline.schedule import Finalize, select_to_finalize
from era5etl.pipeline.steps import run_month as run_pipeline
from era5etl.settings import Settings
from era5etl.track import ledger


def months_to_finalize(url: str, now: datetime | None = None, after_months: int | None = None,
                       table: str | None = None) -> list[Finalize]:
    return select_to_finalize(ledger.months(url, table), now or datetime.now(UTC), after_months)


def supersede_jobs(url: str, job: MonthJob) -> int:
    """Mark the finished CDS jobs of the month's request expired, so its next fetch submits afresh.

    The job store is keyed by each part's CDS request, which a revision does not change: without
    this a refetch would re-attach to the ERA5T job and download its (preliminary) result again.
    Jobs still queued or running are left alone (a retried reload re-attaches to them). Returns
    how many jobs were marked.
    """
    hashes = [p.hash for p in plan(job.request, FetchOptions.from_env().cost_limit)]
    return PgJobStore(url).supersede(hashes, f"superseded by reload {job.revision or '(no revision)'}")


def reload_job(item: Finalize, revision: str, settings: Settings, run_id: str) -> MonthJob:
    # The ledger does not record the variables a month was loaded with: the configured ones are used.
    # The dataset and levels are the ledger's: a pressure-level month is reloaded as one.
    return MonthJob.create(settings, Month.parse(item.month), run_id=run_id, area=item.area, grid=item.grid,
                           table=item.table, revision=revision, dataset=item.dataset,
                           levels=list(item.levels) or None)


def reload_month(url: str, item: Finalize, credentials: Credentials, *, revision: str,
                 settings: Settings | None = None, run_id: str | None = None) -> dict[str, Any]:
    """Fetch the month again (a new staging folder, new CDS jobs) and replace its rows."""
    settings = settings or config.load()
    job = reload_job(item, revision, settings, run_id or f"finalize__{datetime.now(UTC):%Y%m%dT%H%M%S}")
    superseded = supersede_jobs(url, job)
    summary = run_pipeline(url, job, credentials)
    return {**summary, "revision": revision, "request_hash": job.request.hash, "superseded_jobs": superseded,
            "final": PRELIMINARY not in summary["expver"]}
