"""Jobs: the job model, and the queue that runs each submitted job to its product or its failure."""

from __future__ import annotations

import hashlib
import json
import threading
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from era5etl.fetch import file_md5
from localcds import synth
from localcds.faults import Fault
from localcds.protocol import ASSET_PREFIX, NO_SUCH_JOB, ApiError, utcnow


@dataclass
class Job:
    """One submitted request, as the broker tracks it."""

    job_id: str
    process_id: str
    inputs: dict[str, Any]
    created: datetime
    updated: datetime
    status: str = "accepted"
    started: datetime | None = None
    finished: datetime | None = None
    dismissed: bool = False
    statuses: list[str] = field(default_factory=lambda: ["accepted"])
    log: list[tuple[datetime, str]] = field(default_factory=list)
    errors: list[tuple[datetime, str]] = field(default_factory=list)
    asset: dict[str, Any] | None = None
    faults: list[Fault] = field(default_factory=list)  # where="job" faults taken when it was created
    expired: bool = False  # results gone from the cache: /results answers 404 "results expired"
    released: threading.Event = field(default_factory=threading.Event)  # ends its queue wait early

    def set_status(self, status: str, now: datetime) -> None:
        self.status = status
        self.updated = now
        self.statuses.append(status)
        if status == "running":
            self.started = now
        elif status in ("successful", "failed", "rejected"):
            self.finished = now

    def fault(self, kind: str) -> Fault | None:
        return next((f for f in self.faults if f.kind == kind), None)


class JobQueue:
    """The broker of :class:`~localcds.server.LocalCDS`: creates jobs, works on each in a thread of its
    own, and keeps their products (a mixin; the server holds the state, switches included)."""

    workdir: Path
    fail_months: set[str]
    queue_seconds: float
    seed: int
    clock: Callable[[], datetime]
    faults: list[Fault]
    requests: list[dict[str, Any]]
    jobs: dict[str, Job]
    _lock: threading.RLock
    _stopping: threading.Event
    _assets: dict[str, tuple[Path, str]]
    _asset_jobs: dict[str, str]
    _workers: list[threading.Thread]

    def create_job(self, process_id: str, inputs: dict[str, Any]) -> Job:
        """Record a (validated) submission; ``start_job`` then works on it in the background."""
        now = utcnow()
        job = Job(job_id=str(uuid.uuid4()), process_id=process_id, inputs=inputs, created=now, updated=now)
        with self._lock:
            seen: set[str] = set()
            for fault in self.faults:
                if fault.where == "job" and fault.kind not in seen and fault.applies(inputs):
                    fault.hits += 1
                    seen.add(fault.kind)
                    job.faults.append(fault)
            self.jobs[job.job_id] = job
            self.requests.append(inputs)
        return job

    def start_job(self, job: Job) -> None:
        worker = threading.Thread(target=self._run, args=(job,), name=f"job-{job.job_id[:8]}", daemon=True)
        with self._lock:
            self._workers.append(worker)
        worker.start()

    def _event(self, job: Job, message: str, *, error: bool = False) -> None:
        with self._lock:
            job.log.append((utcnow(), message))
            if error:
                job.errors.append((utcnow(), message))

    def _run(self, job: Job) -> None:
        queued = job.fault("queue")
        job.released.wait(max(0.0, queued.seconds if queued else self.queue_seconds))
        if self._stopping.is_set():
            return
        with self._lock:
            if job.dismissed:  # deleted while still queued: the broker never starts it
                return
            rejected = job.fault("reject")
            if rejected is not None:
                # As the CDS does when a user has too many requests queued: refused at execution.
                message = rejected.message or (
                    "Number queued requests for this dataset is temporarily limited. "
                    "Please configure your scripts accordingly")
                job.log.append((utcnow(), message))
                job.errors.append((utcnow(), message))
                job.set_status("rejected", utcnow())
                return
            job.set_status("running", utcnow())
        self._event(job, f"Processing request {job.job_id}")
        try:
            asset = self._produce(job)
        except Exception as exc:  # any failure must end the job, as the broker does
            self._event(job, _failure_message(job, exc), error=True)
            with self._lock:
                job.set_status("failed", utcnow())
            return
        with self._lock:
            job.asset = asset
            job.set_status("successful", utcnow())

    def _produce(self, job: Job) -> dict[str, Any]:
        req = synth.parse_request(job.inputs, job.process_id)
        failing = sorted({str(m) for m in req.months} & self.fail_months)
        if failing:
            raise _InjectedFailure(failing)
        failed = job.fault("fail")
        if failed is not None:
            raise _InjectedFailure([failed.message or "injected failure"])
        digest = hashlib.sha224(
            json.dumps([job.process_id, job.inputs], sort_keys=True).encode()
        ).hexdigest()
        rel = f"{ASSET_PREFIX}{job.job_id}/{digest}.{req.extension}"
        path = self.workdir / rel.lstrip("/")
        if job.fault("zero_byte") is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"")
        elif job.fault("garbage") is not None:
            # What a broken conversion or a proxy error page stored as the product looks like.
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"<html><body><h1>502 Bad Gateway</h1></body></html>\n" * 64)
        else:
            synth.write_download(job.inputs, path, seed=self.seed, now=self.clock(), dataset=job.process_id)
        size = path.stat().st_size
        checksum = file_md5(path)
        with self._lock:
            self._assets[rel] = (path, checksum)
            self._asset_jobs[rel] = job.job_id
        return {
            "type": req.content_type,
            "href": rel,  # made absolute per request, from the Host the client used
            "file:checksum": checksum,
            "file:size": size,
            "file:local_path": f"s3:/{rel}",
        }

    def job_or_404(self, job_id: str) -> Job:
        with self._lock:
            job = self.jobs.get(job_id)
        if job is None or job.dismissed:
            detail = f"job {job_id} {'dismissed' if job else 'not found'}"
            raise ApiError(404, {"type": NO_SUCH_JOB, "title": "job not found", "detail": detail})
        return job

    def dismiss(self, job: Job) -> None:
        with self._lock:
            job.dismissed = True
            job.set_status("dismissed", utcnow())

    def asset_file(self, url_path: str) -> tuple[Path, str] | None:
        with self._lock:
            return self._assets.get(url_path)

    def release(self, job_id: str) -> None:
        """End the job's wait in the queue now (a test holds a job queued until it has seen enough)."""
        with self._lock:
            self.jobs[job_id].released.set()

    def expire(self, job_id: str) -> None:
        """The job's results leave the cache: /results answers 404 "results expired", the asset 404."""
        with self._lock:
            job = self.jobs[job_id]
            job.expired = True
            for rel in [r for r, j in self._asset_jobs.items() if j == job_id]:
                self._assets.pop(rel, None)

    def asset_job(self, url_path: str) -> Job | None:
        with self._lock:
            job_id = self._asset_jobs.get(url_path)
            return self.jobs.get(job_id) if job_id else None


class _InjectedFailure(RuntimeError):
    def __init__(self, months: list[str]) -> None:
        super().__init__(", ".join(months))
        self.months = months


def _failure_message(job: Job, exc: Exception) -> str:
    """The user-visible error of a failed job, worded as the CDS words MARS failures."""
    if isinstance(exc, (_InjectedFailure, synth.NoDataError)):
        inputs = job.inputs
        mars = {
            "class": "ea", "expver": "1", "stream": "oper", "type": "an", "levtype": "sfc",
            "param": inputs.get("variable"), "date": _mars_dates(inputs), "time": inputs.get("time"),
            "area": inputs.get("area"), "grid": inputs.get("grid", ["0.25", "0.25"]),
        }
        why = (f"Error: no data for month(s) {exc}" if isinstance(exc, _InjectedFailure) else f"Error: {exc}")
        return (
            "MARS returned no data, please check your selection.\n"
            f"Request submitted to the MARS server:\n[{mars!r}]\n"
            f"Full error message:\nmars - ERROR   - {why}\n"
        )
    return f"An error occurred while processing the request:\n{''.join(traceback.format_exception(exc))}"


def _mars_dates(inputs: dict[str, Any]) -> str:
    try:
        times = synth.parse_request(inputs).times
    except ValueError:
        return "?"
    return f"{times[0]:%Y-%m-%d}/{times[-1]:%Y-%m-%d}"
