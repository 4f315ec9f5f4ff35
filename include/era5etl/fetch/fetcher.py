"""The fetch itself (:class:`Fetcher`, :func:`fetch`): a month from the CDS like a production client:
split under the cost limit, remember every job, re-attach after a crash, answer every fault, and
stage only verified files.

A month is one :class:`MonthRequest`; its hash names the staging folder. When the month costs more
than the service allows (:mod:`era5etl.fetch.cost`) it is split into :class:`RequestPart`\\ s, each a
CDS job of its own, fetched side by side up to ``max_parallel`` jobs per credential. Each part is
downloaded under a hidden name, checked (size against ``file:size``, MD5 against ``file:checksum``,
the magic bytes of NetCDF or ZIP) and only then renamed to ``part-NN.nc|zip`` with a small
``part-NN.json`` beside it; ``manifest.json``, written last, lists every part and marks the month
usable. A partial or unverified file is therefore never what a later step reads. Once the month is
validated its part files are removed (:mod:`~era5etl.fetch.retention`, ``ERA5_KEEP_DOWNLOADS``); a
later fetch of it finds the manifest's note of that, says so and downloads the month again.

Every job id is written to a :class:`~era5etl.fetch.jobs.JobStore` the moment the CDS hands it out,
so a retried or restarted fetch re-attaches to its job instead of queueing the same request again;
a job whose results have expired, or that the CDS no longer knows, is submitted afresh.

Faults, and what becomes of them:

* heal by retrying, with exponential backoff that honours ``Retry-After``: 5xx, 429, dropped
  connections and timeouts, a cut or corrupted transfer (resumed with ``Range`` / downloaded again);
* fail at once with a message saying what to do: 401 (bad key), 403 licence not accepted (which
  licence, where to accept it), 403 cost limit (the estimate and the limit), a failed or rejected
  job (its error), an empty or corrupt product;
* after ``retries`` attempts a fault that would not heal fails with the last answer seen.

The stock client retries 5xx up to 500 times, 120 s apart; here its own retries are off
(``retry_max=1``, :mod:`~era5etl.fetch.api`) and every call goes through
:meth:`~era5etl.fetch.session.CdsSession._retry`.

:meth:`Fetcher.step` makes one pass and never waits for the CDS queue: it raises
:class:`FetchPending` while jobs are queued (what the Airflow operator defers on). :meth:`Fetcher.run`
loops over passes, sleeping in between (the CLI). The API key goes to the client and nowhere else:
not to logs, errors, the job table, XCom or metrics; the client's debug log, which prints it, is off.
Nothing in this package imports Airflow.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from era5etl.core.files import write_json
from era5etl.core.months import as_utc
from era5etl.fetch.credentials import Credentials
from era5etl.fetch.download import Downloads
from era5etl.fetch.errors import (
    CostLimitError,
    FetchError,
    FetchPending,
    JobFailedError,
    JobLost,
    ResultsExpired,
    RetriesExhausted,
)
from era5etl.fetch.jobs import JobRecord, JobStore
from era5etl.fetch.manifest import MANIFEST, Download, PartFile, removal, staged_download
from era5etl.fetch.options import FetchOptions
from era5etl.fetch.request import MonthRequest, RequestPart, canonical_request

log = logging.getLogger(__name__)


def _moment(text: str | None) -> datetime | None:
    """A CDS job's timestamp (ISO 8601, "Z" or an offset, or none) as a UTC moment."""
    return as_utc(datetime.fromisoformat(text.replace("Z", "+00:00"))) if text else None


class Fetcher(Downloads):
    """One month's fetch; :meth:`step` advances it without waiting, :meth:`run` sees it through.

    ``Fetcher(request, staging_root, credentials, *, store=None, options=None)``: the constructor,
    the client and the retries are :class:`~era5etl.fetch.session.CdsSession`'s; the part downloads
    :class:`~era5etl.fetch.download.Downloads`'.
    """

    _told_removed = False

    # -- one pass ---------------------------------------------------------------------------------

    def step(self) -> Download:
        """One pass: reuse, re-attach, submit, poll once, download what is ready. Never waits on the queue.

        Returns the complete download, or raises FetchPending while jobs are queued (or the
        credential's job slots are all taken), or a FetchError.
        """
        began = time.perf_counter()
        existing = staged_download(self.folder)
        if existing is not None:
            log.info("reusing the complete download of %s in %s", self.request.month, self.folder)
            return existing
        removed = removal(self.folder)
        if removed is not None and not self._told_removed:
            log.info("%s (%s)", removed.message(self.request.month), self.folder)
            self._told_removed = True  # once a fetch, not on every pass over the queue
        done = {p.index: f for p in self.parts if (f := self._staged_part(p)) is not None}
        waiting: list[str] = []
        ready: list[tuple[RequestPart, JobRecord]] = []
        blocked = 0
        for part in self.parts:
            if part.index in done:
                continue
            record = self._advance(part)
            if record is None:
                blocked += 1
            elif record.state == "successful":
                ready.append((part, record))
            elif record.job_id is not None:
                waiting.append(record.job_id)
        retry_soon = False
        for part, outcome in self._download_all(ready):
            if isinstance(outcome, PartFile):
                done[part.index] = outcome
            elif isinstance(outcome, (ResultsExpired, JobLost)):
                retry_soon = True  # the next pass submits it again at once
        if len(done) == len(self.parts):
            return self._finish(done, began)
        message = (f"{self.request.month}: {len(done)} of {len(self.parts)} parts staged, {len(waiting)} CDS "
                   f"job(s) queued or running" + (f", {blocked} waiting for a free job slot" if blocked else ""))
        retry_after = 0.0 if retry_soon else self.options.poll_base
        raise FetchPending(self.api_url, waiting, len(done), len(self.parts), retry_after, message)

    def run(self) -> Download:
        """Passes until the month is staged, sleeping between them (``poll_base``, growing 1.5x to ``poll_cap``)."""
        deadline = time.monotonic() + self.options.wait_timeout
        pause = self.options.poll_base
        last: tuple[int, tuple[str, ...]] | None = None
        try:
            while True:
                try:
                    return self.step()
                except FetchPending as pending:
                    state = (pending.parts_done, tuple(pending.job_ids))
                    if state != last:
                        pause, last = self.options.poll_base, state
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise FetchError(
                            f"{pending}: still not done after {self.options.wait_timeout:.0f} s. The jobs stay "
                            "recorded and keep their place in the CDS queue; a rerun re-attaches to them"
                        ) from None
                    if pending.retry_after > 0:  # 0: something changed that the next pass acts on at once
                        time.sleep(min(pause, left))
                        pause = min(pause * 1.5, self.options.poll_cap)
        finally:
            self.close()

    # -- a part's job -----------------------------------------------------------------------------

    def _new_record(self, part: RequestPart) -> JobRecord:
        return JobRecord(
            api_url=self.api_url, request_hash=part.hash, month_hash=self.request.hash,
            month=self.request.month.start.date(), part=part.index, parts=part.count,
            dataset=self.request.dataset.collection,
            request=part.cds_request(), state="submitting", cost=part.cost().value,
        )

    def _advance(self, part: RequestPart) -> JobRecord | None:
        """The part's job after one look at it: submitted, re-attached or resubmitted as needed.

        None when the part needs a job but the credential's slots are all taken.
        """
        record = self.store.get(self.api_url, part.hash)
        if record is not None and record.state == "submitting":
            # A submission whose answer never reached us: the CDS may well have the job.
            remote = self._adopt(part, record.submitted_at)
            if remote is not None:
                record = self._attached(record, remote.request_id)
        if record is None or record.job_id is None or record.state in ("failed", "rejected", "lost", "expired"):
            return self._submit(part, record)
        try:
            return self._poll(part, record)
        except (JobLost, ResultsExpired) as gone:
            log.warning("%s: job %s is gone (%s); submitting again", part.label, record.job_id, gone)
            record.state, record.error = ("expired" if isinstance(gone, ResultsExpired) else "lost"), str(gone)
            self.store.put(record)
            return self._submit(part, record)

    def _attached(self, record: JobRecord, job_id: str) -> JobRecord:
        record.job_id, record.state, record.error = job_id, "accepted", None
        self.store.put(record)
        log.info("%s: re-attached to CDS job %s", self.request.month, job_id)
        return record

    def _submit(self, part: RequestPart, previous: JobRecord | None) -> JobRecord | None:
        cost = part.cost()
        limit = self._limit(cost)
        if cost.value > limit:
            raise CostLimitError(
                f"{part.label}: estimated cost {cost} is over the limit of {limit:,.0f}; raise "
                "ERA5_CDS_COST_LIMIT only if the CDS allows it", cost.value, limit)
        with self.store.submission_slot(self.api_url, self.options.max_parallel) as free:
            # Re-read under the lock: another process may have submitted this very request meanwhile.
            current = self.store.get(self.api_url, part.hash)
            if (current is not None and current.job_id is not None
                    and current.state in ("accepted", "running", "successful", "downloaded")
                    and (previous is None or current.job_id != previous.job_id)):
                return current
            if not free:
                log.info("%s: %d CDS jobs already queued for this credential (cap %d); waiting for a slot",
                         part.label, self.store.active(self.api_url), self.options.max_parallel)
                return None
            record = current or previous or self._new_record(part)
            if record.job_id is not None and record.state in ("failed", "rejected", "lost", "expired"):
                record.previous_job_ids = [*record.previous_job_ids, record.job_id]
            record.job_id, record.state, record.error = None, "submitting", None
            record.request, record.cost = part.cds_request(), cost.value
            record.submitted_at = datetime.now(UTC)
            for name in ("started_at", "finished_at", "downloaded_at", "queue_seconds", "run_seconds",
                         "download_seconds", "bytes", "checksum", "file"):
                setattr(record, name, None)
            self.store.put(record)  # before the call: a crash now still leaves a trace to adopt from
            since = record.submitted_at
            try:
                collection = self.request.dataset.collection
                remote = self._retry(
                    f"submitting {part.label}", "submit", lambda: self.api.submit(part.cds_request(), collection),
                    part=part,
                    before_retry=lambda: self._adopt(part, since),
                )
            except FetchError as exc:
                if not isinstance(exc, RetriesExhausted):
                    # Refused outright: no job exists, and the row must not hold a slot of the cap.
                    record.state, record.error = "failed", str(exc)[:2000]
                    self.store.put(record)
                raise  # exhausted: a job may exist after all, so 'submitting' stays for the next look
            record.job_id, record.state = str(remote.request_id), "accepted"
            record.submissions += 1
            self.store.put(record)
        with self._lock:
            self.submissions += 1
        log.info("%s: submitted as CDS job %s (estimated cost %s)", part.label, record.job_id, cost)
        return record

    def _adopt(self, part: RequestPart, since: datetime | None) -> Any:
        """A job of ours for exactly this request, created since ``since``, if the CDS has one."""
        want = canonical_request(part.cds_request())
        horizon = (since or datetime.now(UTC)) - timedelta(minutes=2)  # the CDS's clock is not ours
        try:
            listing = self.api.client.get_jobs(limit=100, sortby="-created")
            for job in listing._json_dict.get("jobs", []):
                created = _moment(job.get("created"))
                if created is not None and created < horizon:
                    break  # newest first: the rest are older still
                if job.get("status") in ("failed", "rejected", "dismissed", "deleted"):
                    continue
                if job.get("processID") not in (None, self.request.dataset.collection):
                    continue  # the same keys asked of another collection
                remote = self.api.remote(str(job["jobID"]))
                ids = remote.json.get("metadata", {}).get("request", {}).get("ids")
                if isinstance(ids, dict) and canonical_request(ids) == want:
                    log.warning("%s: the CDS has job %s for this request from an unanswered submission; "
                                "adopting it instead of submitting again", part.label, remote.request_id)
                    return remote
        except Exception as exc:  # a best effort: a failed look only means one more submission
            log.warning("%s: could not list recent CDS jobs (%s)", part.label, self.classify(exc, "", "jobs"))
        return None

    def _poll(self, part: RequestPart, record: JobRecord) -> JobRecord:
        job_id = str(record.job_id)
        what = f"checking CDS job {job_id} ({part.label})"
        if job_id not in self.api.remotes:
            log.info("%s: re-attaching to CDS job %s (%s since %s)", part.label, job_id, record.state,
                     record.submitted_at)
        remote = self._retry(what, "job", lambda: self.api.remote(job_id), part=part, job_id=job_id)
        info: dict[str, Any] = self._retry(what, "job", lambda: remote.json, part=part, job_id=job_id)
        status = str(info.get("status"))
        created, started, finished = (_moment(info.get(k)) for k in ("created", "started", "finished"))
        record.submitted_at = record.submitted_at or created
        if started is not None:
            record.started_at = started
            if created is not None:
                record.queue_seconds = (started - created).total_seconds()
        if finished is not None:
            record.finished_at = finished
            if started is not None:
                record.run_seconds = (finished - started).total_seconds()
        if status in ("dismissed", "deleted"):
            raise JobLost(f"the CDS reports it {status}")
        if status in ("failed", "rejected"):
            reason = self._failure_reason(remote, job_id, part)
            record.state, record.error = status, reason[-2000:]
            self.store.put(record)
            raise self._job_failed(job_id, part, reason)
        if record.state == "downloaded":
            # Recorded as downloaded, yet the file is not in this staging folder: fetch it again.
            record.state = "successful"
        if status in ("accepted", "running", "successful"):
            record.state = status
        self.store.put(record)
        return record

    def _failure_reason(self, remote: Any, job_id: str, part: RequestPart) -> str:
        try:
            remote.get_results()
        except Exception as exc:
            err = self.classify(exc, "", "results", part, job_id)
            if isinstance(err, JobFailedError):
                return err.reason
            return str(err)
        return "the CDS reports the job failed but gave no reason"

    # -- the end ----------------------------------------------------------------------------------

    def _finish(self, done: dict[int, PartFile], began: float) -> Download:
        files = [done[p.index] for p in self.parts]
        removed = removal(self.folder)  # the note goes with the manifest this download replaces
        write_json(self.folder / MANIFEST, {
            "request_hash": self.request.hash,
            "request": self.request.cds_request(),
            "parts": [f.entry() for f in files],
        })
        records = [r for p in self.parts if (r := self.store.get(self.api_url, p.hash)) is not None]
        first = min((r.submitted_at for r in records if r.submitted_at is not None), default=None)
        seconds = ((datetime.now(UTC) - first).total_seconds() if first is not None
                   else time.perf_counter() - began)
        return Download(
            paths=[f.path for f in files], bytes=sum(f.bytes for f in files), seconds=seconds,
            request_hash=self.request.hash, reused=False, parts=len(files),
            submissions=sum(r.submissions for r in records),
            queue_seconds=max((r.queue_seconds or 0.0 for r in records), default=0.0),
            download_seconds=sum(r.download_seconds or 0.0 for r in records), removed=removed,
        )


@contextlib.contextmanager
def _closing(fetcher: Fetcher) -> Iterator[Fetcher]:
    try:
        yield fetcher
    finally:
        fetcher.close()


def fetch(request: MonthRequest, staging_root: Path, credentials: Credentials, *, store: JobStore | None = None,
          options: FetchOptions | None = None, wait: bool = True) -> Download:
    """Download the month into staging, or reuse the complete download already there.

    ``wait=False``: one pass only (raises FetchPending while CDS jobs are queued).
    """
    with _closing(Fetcher(request, staging_root, credentials, store=store, options=options)) as fetcher:
        return fetcher.run() if wait else fetcher.step()


__all__ = ["Fetcher", "fetch"]
