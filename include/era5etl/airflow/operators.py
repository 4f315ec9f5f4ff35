"""The DAG's fetch task: a deferrable operator, so neither a month not yet published nor one queued
at the CDS holds a worker slot.

**Publication first.** A run is created when its month begins; the CDS publishes the month (as
ERA5T) about five days after its end. The operator's first act is to compare the run's publication
target (:func:`era5etl.pipeline.schedule.publication_target`: the month's end plus
``ERA5_PUBLICATION_DELAY`` days) with now: a month long published goes straight on to the fetch
("published since ..."); one not yet published defers on Airflow's standard
:class:`~airflow.providers.standard.triggers.temporal.DateTimeTrigger`, without a timeout, and the
triggerer resumes it into the fetch at the target (a target within ``ERA5_CDS_DEFER_AFTER``
seconds is waited out in the worker instead, for the reason below). The wait is not a sensor task
of its own because a task process costs Airflow's start-up CPU every month, for a wait that a
backfill of past months never makes (docs/benchmarks.md, "Four task processes a month"). A failed
wait (the triggerer gave up on the trigger before the month was published) fails the task without
using its retries; a retried fetch checks the target again, and a published month passes at once.

Each time it fetches (first execution, or resumed by its trigger) the operator makes passes of the
core fetch (:func:`era5etl.pipeline.fetch_step` with ``wait=False``): reuse what is staged,
re-attach to recorded jobs, submit what is missing within the credential's cap, download what is
ready. While jobs are still queued it looks at them again in its worker for up to
``ERA5_CDS_DEFER_AFTER`` seconds (default 10): a job the CDS finishes by then is downloaded at once,
without the triggerer's round trip (seconds: defer, trigger, reschedule, a new worker process).
Only a job still queued after that defers to :class:`~era5etl.airflow.triggers.CdsJobTrigger`,
and its worker slot is released; the triggerer wakes it when a job leaves the queue.

Why the watch, and why the trigger never fires sooner than ``ERA5_CDS_DEFER_AFTER`` after a
deferral: Airflow 3.3 (apache/airflow#72716) fails a resumed task when the executor's report of the
*deferring* process's exit ("success") is processed only after the resumed attempt is queued or
running: "reported that the task instance ... finished with state success, but the task
instance's state attribute is running", then "404 Task Instance not found" for the resumed
attempt. That happens when the trigger fires faster than the scheduler drains that report (one
scheduler loop, seconds on a busy machine). A job quick enough to race it is now waited out in the
worker, and a trigger fires only once the report has long been drained.

Errors the CDS will not heal of itself (bad key, licence, cost limit, failed job, bad product) fail
the task at once, without using its retries; others (an outage outlasting the backoff) leave the
retries to Airflow, and each retry re-attaches to the jobs already submitted. Module import stays
light: the DAG file imports it at parse time.
"""

# Imports inside functions: the DAG files import this package at every parse, and the core (numpy,
# psycopg, the pipeline) loads only in a task or a trigger's thread (Airflow's best practice on top-
# level code).

from __future__ import annotations

import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator, timezone

from era5etl.airflow import tasks
from era5etl.airflow.hooks import CDS_CONN_ID, CdsHook, database_url

if TYPE_CHECKING:
    from datetime import datetime

    from airflow.sdk import Context

    from era5etl.pipeline.job import MonthJob


class CdsFetchOperator(BaseOperator):
    """Fetch the run's month (see :func:`era5etl.airflow.tasks.job`) from the CDS into staging, once it
    is published: until then the task is deferred (no worker slot) and resumes into the fetch."""

    ui_color = "#d6eaf8"

    def __init__(self, *, cds_conn_id: str = CDS_CONN_ID, wait_timeout: timedelta = timedelta(hours=48),
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cds_conn_id = cds_conn_id
        self.wait_timeout = wait_timeout

    def execute(self, context: Context) -> dict[str, Any]:
        job = tasks.job(context)
        target = self.publication_target(job)
        left = (target - timezone.utcnow()).total_seconds()
        if left > 0:
            from era5etl import settings

            if left > settings.load().cds_defer_after:
                from airflow.providers.standard.triggers.temporal import DateTimeTrigger

                self.log.info("%s is published at %s: deferring until then, the worker slot is free", job.month,
                              target.isoformat())
                # No timeout: the wait ends at the target (the 48 h of wait_timeout are the CDS queue's).
                self.defer(trigger=DateTimeTrigger(moment=target), method_name="published")
            time.sleep(left)  # seconds away: cheaper here than a triggerer round trip (and its race, above)
        self.log.info("published since %s: nothing to wait for", target.isoformat())
        return self._advance(context, job)

    def published(self, context: Context, event: Any = None) -> dict[str, Any]:
        """Back from the publication wait: the month is out, fetch it."""
        job = tasks.job(context)
        self.log.info("published since %s: the wait is over", self.publication_target(job).isoformat())
        return self._advance(context, job)

    @staticmethod
    def publication_target(job: MonthJob) -> datetime:
        """When the run's month is published: its end plus ``ERA5_PUBLICATION_DELAY`` days."""
        from era5etl.pipeline.schedule import publication_target

        return publication_target(job.month)

    def resume_execution(self, next_method: str, next_kwargs: dict[str, Any] | None, context: Context) -> Any:
        """A trigger that failed before the month was published can only be the publication wait's
        (the CDS is asked nothing before): it fails the task without its retries, as the wait task
        with ``retries=0`` did. A failed CDS wait (its 48 h timeout) keeps the task's retries."""
        from airflow.sdk.exceptions import AirflowFailException, TaskDeferralError

        try:
            return super().resume_execution(next_method, next_kwargs, context)
        except TaskDeferralError as exc:
            job = tasks.job(context)
            if timezone.utcnow() < self.publication_target(job):
                raise AirflowFailException(f"the wait for {job.month}'s publication failed: {exc}") from exc
            raise

    def resume(self, context: Context, event: dict[str, Any] | None = None) -> dict[str, Any]:
        """Back from the triggerer: one more pass (it raises the precise error if a job failed)."""
        if event:
            self.log.info("CDS jobs left the queue: %s", event.get("jobs") or event.get("status"))
            if event.get("status") == "error":
                self.log.warning("the trigger stopped on: %s", event.get("message"))
        return self._advance(context)

    def _advance(self, context: Context, job: MonthJob | None = None) -> dict[str, Any]:
        from airflow.sdk.exceptions import AirflowFailException
        from airflow.sdk.log import mask_secret

        from era5etl import settings
        from era5etl.airflow.triggers import CdsJobTrigger
        from era5etl.core.errors import InputError
        from era5etl.fetch import FetchError, FetchOptions, FetchPending
        from era5etl.pipeline.steps import fetch_step, prepare

        # A refused input (a table that is not the pipeline's, a bad param) fails at once: no retry heals it.
        try:
            job, url = job or tasks.job(context), database_url()
            prepare(url, job)
        except InputError as exc:
            raise AirflowFailException(str(exc)) from None
        credentials = CdsHook(self.cds_conn_id).get_credentials()
        if credentials.key:
            mask_secret(credentials.key)  # from the environment it is not masked by Airflow already
        options = FetchOptions.from_env()
        defer_after = settings.load().cds_defer_after
        watch_until = time.monotonic() + defer_after
        pause = options.poll_base
        try:
            while True:
                try:
                    download = fetch_step(url, job, credentials, wait=False)
                    break
                except FetchPending as pending:
                    left = watch_until - time.monotonic()
                    if left > 0:  # a job this quick is cheaper to wait out here than on the triggerer
                        time.sleep(min(pause if pending.retry_after > 0 else 0.0, left))
                        pause = min(pause * 1.5, options.poll_cap)
                        continue
                    self.log.info("%s after %.0f s; deferring, the worker slot is free until a job leaves the "
                                  "queue", pending, defer_after)
                    self.defer(
                        trigger=CdsJobTrigger(
                            pending.job_ids, conn_id=self.cds_conn_id, poll_base=options.poll_base,
                            poll_cap=options.poll_cap, backoff_base=options.backoff_base,
                            backoff_cap=options.backoff_cap, max_hint=options.max_hint,
                            http_timeout=options.http_timeout,
                            idle_seconds=max(options.poll_base, pending.retry_after),
                            not_before=time.time() + defer_after,
                        ),
                        method_name="resume",
                        timeout=self.wait_timeout,
                    )
        except FetchError as exc:
            if not exc.retryable:
                raise AirflowFailException(str(exc)) from None
            raise
        self.log.info("%s staged: %d part(s), %s bytes, queued %.1f s, downloaded in %.1f s%s", job.month,
                      download.parts, f"{download.bytes:,}", download.queue_seconds, download.download_seconds,
                      " (reused)" if download.reused else
                      f" ({download.removed.message(job.month)})" if download.removed else "")
        return {"month": str(job.month), "files": [str(p) for p in download.paths], "bytes": download.bytes,
                "reused": download.reused, "request_hash": download.request_hash, "parts": download.parts,
                "submissions": download.submissions, "queue_seconds": round(download.queue_seconds, 3),
                "download_seconds": round(download.download_seconds, 3)}


# Pools: one for CDS fetches per credential (its queue), one for the database's heavy writers.
CDS_POOL = "era5_cds"  # ERA5_CDS_POOL_SLOTS slots, default 4 (scripts/setup.sh)
DB_POOL = "era5_db"  # ERA5_DB_POOL_SLOTS slots, default 2
