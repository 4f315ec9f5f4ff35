"""A local Climate Data Store that the real ``cdsapi`` client completes a retrieve against.

It speaks the wire protocol of the new CDS (the CADS "retrieve" OGC API Processes service, plus the
catalogue and profiles calls ``ecmwf-datastores-client`` makes), with the JSON shapes, status codes
and headers of the real service, as read from cads-processing-api-service / ogc-api-processes-fastapi
and from error bodies users have posted:

* ``GET  /api/catalogue/v1/messages``: called by every client on construction, no key needed.
* ``GET  /api/retrieve/v1/processes/{id}``: process description, no key needed; 404 "process not found".
* ``POST /api/retrieve/v1/processes/{id}/execution``: 201 + status info, ``status: accepted`` and a
  ``rel: monitor`` link; 401 without / with a wrong ``PRIVATE-TOKEN``, 400 "invalid request",
  403 "required licences not accepted".
* ``GET  /api/retrieve/v1/jobs/{id}`` (``?log=True&request=True&logStartTime=``): accepted -> running
  -> successful | failed, with a ``rel: results`` link once finished.
* ``GET  /api/retrieve/v1/jobs/{id}/results``: the asset (``href``, ``file:size``, ``type``); for a
  failed job 400 "The job has failed" with the error in ``traceback``; 404 while not ready.
* ``DELETE /api/retrieve/v1/jobs/{id}``, ``POST /api/retrieve/v1/jobs/delete``, ``GET .../jobs``.
* ``/api/profiles/v1/account/...``: licences and key verification.
* The asset itself is served like the CDS's object store: no key, ``Accept-Ranges: bytes``,
  ``Content-Length``, and 206 partial content for a ``Range`` (the client resumes with one).

Only the standard library serves HTTP, so nothing joins requirements.txt. Data come from
:mod:`localcds.synth`. Switches on the server object inject faults for tests: the old global
ones (``fail_months``, ``queue_seconds``, ``truncate_downloads``, ``accepted_licences``) and
:meth:`LocalCDS.inject`, which aims a fault at one endpoint and, through ``match``, at the requests
it chooses, a given number of times -- so one test can mix faults across the parts of a month.
The cost check mirrors the real one (:mod:`era5etl.fetch.cost`): 403 "cost limits exceeded".
"""

from __future__ import annotations

import hashlib
import http
import json
import logging
import re
import signal
import tempfile
import threading
import traceback
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, BinaryIO, Self
from urllib.parse import parse_qs, urlsplit

from era5etl.fetch import cost as costing, file_md5
from localcds import synth

log = logging.getLogger(__name__)

DEFAULT_KEY = "era5etl-local-key"
API_PREFIX = "/api"
ASSET_PREFIX = "/cache-store/"

ERA5_LICENCE = ("licence-to-use-copernicus-products", 12)

_DATASETS: dict[str, dict[str, str]] = {
    synth.DATASET: {
        "title": "ERA5 hourly data on single levels from 1940 to present",
        "description": (
            "ERA5 is the fifth generation ECMWF reanalysis for the global climate and weather. "
            "Served here by a local stand-in with synthetic values."
        ),
    },
}

# OGC API - Processes exception types, as the real service sends them.
NO_SUCH_PROCESS = "http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/no-such-process"
NO_SUCH_JOB = "http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/no-such-job"
RESULTS_NOT_READY = "http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/result-not-ready"


def _iso(moment: datetime) -> str:
    # The CADS API writes naive UTC timestamps with microseconds ("2022-09-02T17:30:48.201213").
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds")


def _utcnow() -> datetime:
    return datetime.now(UTC)


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


FAULT_PLACES = ("submit", "status", "results", "asset", "job")
FAULT_KINDS: dict[str, tuple[str, ...]] = {
    # An HTTP error (``status``, optional ``retry_after``), or the connection closed with no answer.
    "submit": ("status", "drop", "drop_after"),  # drop_after: the job IS created, the answer is lost
    "status": ("status", "drop"),
    "results": ("status", "drop", "expire"),  # expire: the job's results leave the cache for good
    "asset": ("status", "drop", "truncate", "corrupt"),  # corrupt: right size, some bytes flipped
    # At job creation: "queue" (``seconds`` in the queue), "fail" (``message``), "reject",
    # "zero_byte" (an empty product), "garbage" (a product that is neither NetCDF nor ZIP).
    "job": ("queue", "fail", "reject", "zero_byte", "garbage"),
}


@dataclass
class Fault:
    """One injected fault: where it strikes, what it does, for which requests, how many times.

    ``match`` sees the request's inputs (the submitted ones, or those of the job a call is about);
    ``times`` None strikes every matching call. ``hits`` counts the calls it struck.
    """

    where: str
    kind: str = "status"
    status: int = 500
    retry_after: float | None = None
    times: int | None = 1
    match: Callable[[dict[str, Any]], bool] | None = None
    seconds: float = 0.0
    message: str | None = None
    hits: int = 0

    def __post_init__(self) -> None:
        if self.where not in FAULT_PLACES:
            raise ValueError(f"where must be one of {FAULT_PLACES}, not {self.where!r}")
        if self.kind not in FAULT_KINDS[self.where]:
            raise ValueError(f"a fault at {self.where!r} is one of {FAULT_KINDS[self.where]}, not {self.kind!r}")

    def applies(self, inputs: dict[str, Any] | None) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        return self.match is None or (inputs is not None and bool(self.match(inputs)))


@dataclass(frozen=True)
class CallRecord:
    """One HTTP exchange with the server (status 0: the connection was dropped unanswered)."""

    method: str
    path: str
    status: int


@dataclass(frozen=True)
class DownloadRecord:
    """One request for an asset, kept so tests can see resumes (Range) and cut transfers."""

    method: str
    path: str
    range: str | None
    status: int
    bytes_sent: int
    truncated: bool = False


class _ApiError(Exception):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(body.get("title") or body.get("detail"))
        self.status = status
        self.body = body


class _Answered(Exception):
    """An injected fault has answered the call (or dropped it); the route stops here."""


class LocalCDS:
    """The local CDS. ``start()`` serves in a background thread; also a context manager.

    Fault switches (read when a job starts or a download is served, so tests may flip them live):

    * ``fail_months``: "YYYY-MM" strings; a job whose request touches one of them ends ``failed``
      with a MARS-style error message, as a real failed job does.
    * ``queue_seconds``: how long a job stays ``accepted`` before it starts ``running`` (per
      request: a "queue" fault; :meth:`release` ends one job's wait early).
    * ``truncate_downloads``: the next N asset GETs send the headers for the whole body, then only
      half of it, then drop the connection (the client then resumes with ``Range``).
    * ``accepted_licences``: licences the key has accepted; without the ERA5 one, submissions get
      403 "required licences not accepted".
    * ``cost_limits``: the largest cost (:mod:`era5etl.fetch.cost`) accepted per format; a larger
      request gets 403 "cost limits exceeded", as on the CDS.
    * :meth:`inject`: any fault of :data:`FAULT_KINDS`, per endpoint, per request, N times.
    * :meth:`expire`: a finished job's results leave the cache.
    * ``seed``: changes every synthetic value (same seed, same values).
    * ``clock``: "now" for the data (publication cut-off, expver), not for job timestamps.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        key: str = DEFAULT_KEY,
        workdir: Path | None = None,
    ) -> None:
        if ":" in key:
            # cdsapi would treat "uid:key" as a legacy-API key and never talk to this protocol.
            raise ValueError("the key must not contain ':'")
        self.host = host
        self._port = port
        self.key = key
        self._own_workdir: tempfile.TemporaryDirectory[str] | None = None
        if workdir is None:
            self._own_workdir = tempfile.TemporaryDirectory(prefix="era5etl-localcds-")
            workdir = Path(self._own_workdir.name)
        self.workdir = Path(workdir)

        self.fail_months: set[str] = set()
        self.queue_seconds: float = 0.0
        self.truncate_downloads: int = 0
        self.accepted_licences: set[tuple[str, int]] = {ERA5_LICENCE}
        self.cost_limits: dict[str, float] = dict(costing.DEFAULT_LIMITS)
        self.faults: list[Fault] = []
        self.seed: int = 0
        self.clock: Callable[[], datetime] = _utcnow
        self.messages: list[dict[str, Any]] = []

        self.requests: list[dict[str, Any]] = []  # the inputs of every job created, in order
        self.jobs: dict[str, Job] = {}
        self.downloads: list[DownloadRecord] = []
        self.calls: list[CallRecord] = []  # every HTTP exchange, API and assets alike

        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._assets: dict[str, tuple[Path, str]] = {}  # URL path -> (file, md5)
        self._asset_jobs: dict[str, str] = {}  # URL path -> job id
        self._workers: list[threading.Thread] = []
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------------------------------------
    # Lifecycle

    @property
    def port(self) -> int:
        if self._httpd is None:
            return self._port
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """What goes in CDSAPI_URL."""
        if self._httpd is None:
            raise RuntimeError("the server is not started")
        return f"http://{self.host}:{self.port}{API_PREFIX}"

    def start(self) -> Self:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = _HTTPServer((self.host, self._port), _Handler, self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1}, name="local-cds", daemon=True
        )
        self._thread.start()
        log.info("local CDS serving at %s", self.url)
        return self

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            for job in self.jobs.values():
                job.released.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        for worker in list(self._workers):
            worker.join(timeout=10)
        self._workers.clear()
        if self._own_workdir is not None:
            self._own_workdir.cleanup()
            self._own_workdir = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # ---------------------------------------------------------------------------------------------
    # Jobs

    def create_job(self, process_id: str, inputs: dict[str, Any]) -> Job:
        """Record a (validated) submission; ``start_job`` then works on it in the background."""
        now = _utcnow()
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
            job.log.append((_utcnow(), message))
            if error:
                job.errors.append((_utcnow(), message))

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
                job.log.append((_utcnow(), message))
                job.errors.append((_utcnow(), message))
                job.set_status("rejected", _utcnow())
                return
            job.set_status("running", _utcnow())
        self._event(job, f"Processing request {job.job_id}")
        try:
            asset = self._produce(job)
        except Exception as exc:  # any failure must end the job, as the broker does
            self._event(job, _failure_message(job, exc), error=True)
            with self._lock:
                job.set_status("failed", _utcnow())
            return
        with self._lock:
            job.asset = asset
            job.set_status("successful", _utcnow())

    def _produce(self, job: Job) -> dict[str, Any]:
        req = synth.parse_request(job.inputs)
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
            synth.write_download(job.inputs, path, seed=self.seed, now=self.clock())
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
            raise _ApiError(404, {"type": NO_SUCH_JOB, "title": "job not found", "detail": detail})
        return job

    def dismiss(self, job: Job) -> None:
        with self._lock:
            job.dismissed = True
            job.set_status("dismissed", _utcnow())

    def asset_file(self, url_path: str) -> tuple[Path, str] | None:
        with self._lock:
            return self._assets.get(url_path)

    def inject(
        self, where: str, kind: str = "status", *, status: int = 500, retry_after: float | None = None,
        times: int | None = 1, match: Callable[[dict[str, Any]], bool] | None = None, seconds: float = 0.0,
        message: str | None = None,
    ) -> Fault:
        """Arm a fault (see :data:`FAULT_KINDS`); returns it, so a test can read its ``hits``."""
        fault = Fault(where, kind, status=status, retry_after=retry_after, times=times, match=match,
                      seconds=seconds, message=message)
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        with self._lock:
            self.faults.clear()

    def take_fault(self, where: str, inputs: dict[str, Any] | None) -> Fault | None:
        """The first armed fault for this call, counted as struck; None when the call goes through."""
        with self._lock:
            for fault in self.faults:
                if fault.where == where and fault.applies(inputs):
                    fault.hits += 1
                    return fault
        return None

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

    def record_call(self, method: str, path: str, status: int) -> None:
        with self._lock:
            self.calls.append(CallRecord(method, path, status))

    def take_truncation(self) -> bool:
        with self._lock:
            if self.truncate_downloads > 0:
                self.truncate_downloads -= 1
                return True
            return False

    def record_download(self, record: DownloadRecord) -> None:
        with self._lock:
            self.downloads.append(record)


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




# -------------------------------------------------------------------------------------------------
# HTTP


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], cds: LocalCDS
    ) -> None:
        self.cds = cds
        super().__init__(address, handler)


_Route = Callable[["_Handler", re.Match[str]], None]
_ROUTES: list[tuple[str, re.Pattern[str], _Route]] = []


def _route(method: str, pattern: str) -> Callable[[_Route], _Route]:
    def register(fn: _Route) -> _Route:
        _ROUTES.append((method, re.compile(f"^{pattern}$"), fn))
        return fn

    return register


_ID = r"(?P<id>[A-Za-z0-9._-]+)"


class _Handler(BaseHTTPRequestHandler):
    # Keep-alive, as requests' session expects; every response therefore carries Content-Length.
    protocol_version = "HTTP/1.1"
    # Headers and body go out as separate writes; without TCP_NODELAY each response waits ~40 ms
    # on the client's delayed ACK.
    disable_nagle_algorithm = True
    _body_read = False

    def version_string(self) -> str:
        return "uvicorn"

    @property
    def cds(self) -> LocalCDS:
        server = self.server
        assert isinstance(server, _HTTPServer)
        return server.cds

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    # -- plumbing ---------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    @property
    def split(self) -> tuple[str, dict[str, list[str]]]:
        parts = urlsplit(self.path)
        return parts.path, parse_qs(parts.query)

    @property
    def origin(self) -> str:
        host = self.headers.get("Host") or f"{self.cds.host}:{self.cds.port}"
        return f"http://{host}"

    @property
    def full_url(self) -> str:
        return f"{self.origin}{self.path}"

    def _dispatch(self, method: str) -> None:
        # One handler serves every request of a kept-alive connection: reset per-request state.
        self._body_read = False
        path, _ = self.split
        allowed = False
        try:
            for route_method, pattern, fn in _ROUTES:
                match = pattern.match(path)
                if match is None:
                    continue
                if route_method != method and not (route_method == "GET" and method == "HEAD"):
                    allowed = True
                    continue
                fn(self, match)
                return
            self._drain()
            if allowed:
                self._json(405, {"detail": "Method Not Allowed"})
            else:
                self._json(404, {"detail": "Not Found"})
        except _ApiError as exc:
            self._drain()
            self._error(exc.status, exc.body)
        except _Answered:
            pass
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception:
            log.exception("local CDS: internal error on %s %s", method, self.path)
            self._drain()
            self._error(500, {"type": "internal server error", "title": "internal server error"})

    def _drain(self) -> None:
        """Read an unread request body, so a kept-alive connection stays in step."""
        length = int(self.headers.get("Content-Length") or 0)
        if length and not self._body_read:
            self.rfile.read(length)
            self._body_read = True

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        self._body_read = True
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise _ApiError(422, {"type": "invalid request", "title": "invalid request",
                                  "detail": "the request body is not valid JSON"}) from None

    def _send(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.cds.record_call(self.command, self.split[0], status)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json", headers)

    def _error(self, status: int, body: dict[str, Any]) -> None:
        # The OGC exception body of the CADS API: type, title, status, detail, instance, trace_id.
        payload = {"type": body.get("type"), "title": body.get("title"), "status": status}
        for key in ("detail", "traceback"):
            if body.get(key) is not None:
                payload[key] = body[key]
        payload["instance"] = self.full_url
        payload["trace_id"] = str(uuid.uuid4())
        self._json(status, payload)

    # -- injected faults --------------------------------------------------------------------------

    def _drop(self) -> None:
        """Close the connection without a word, as a crashed backend or a cut network does."""
        self._drain()
        self.cds.record_call(self.command, self.split[0], 0)
        self.close_connection = True
        raise _Answered

    def _fault(self, where: str, inputs: dict[str, Any] | None) -> Fault | None:
        """Apply the armed fault for this call: answer or drop it here, or hand it back to the route."""
        fault = self.cds.take_fault(where, inputs)
        if fault is None:
            return None
        if fault.kind == "drop":
            self._drop()
        if fault.kind == "status":
            self._drain()
            self._fault_status(fault)
            raise _Answered
        return fault

    def _fault_status(self, fault: Fault) -> None:
        status = fault.status
        headers: dict[str, str] = {}
        if fault.retry_after is not None:
            # RFC 9110 says whole seconds; fractions keep tests short, and the client reads both.
            value = fault.retry_after
            headers["Retry-After"] = str(int(value)) if float(value).is_integer() else f"{value:g}"
        try:
            phrase = http.HTTPStatus(status).phrase
        except ValueError:
            phrase = "Error"
        if status in (502, 503, 504):
            # These come from the gateway in front of the API: HTML, not the API's JSON.
            page = (f"<html>\r\n<head><title>{status} {phrase}</title></head>\r\n<body>\r\n"
                    f"<center><h1>{status} {phrase}</h1></center>\r\n<hr><center>nginx</center>\r\n"
                    "</body>\r\n</html>\r\n")
            self._send(status, page.encode(), "text/html", headers)
            return
        bodies: dict[int, dict[str, Any]] = {
            401: {"type": "permission denied", "title": "Authentication failed", "detail": "operation not allowed"},
            403: {"type": "permission denied", "title": "required licences not accepted",
                  "detail": "please accept the following licences to proceed: "
                            f"{[{'id': ERA5_LICENCE[0], 'revision': ERA5_LICENCE[1]}]}"},
            429: {"type": "too many requests", "title": "too many requests",
                  "detail": "rate limit exceeded; please retry later"},
            500: {"type": "internal server error", "title": "internal server error"},
        }
        body = dict(bodies.get(status, {"type": "error", "title": phrase.lower()}))
        if fault.message:
            body["detail"] = fault.message
        payload = {"type": body.get("type"), "title": body.get("title"), "status": status,
                   **({"detail": body["detail"]} if "detail" in body else {}),
                   "instance": self.full_url, "trace_id": str(uuid.uuid4())}
        self._json(status, payload, headers)

    def _authenticate(self) -> None:
        token = self.headers.get("PRIVATE-TOKEN")
        if not token:
            raise _ApiError(401, {"type": "permission denied", "title": "permission denied",
                                  "detail": "authentication required"})
        if token != self.cds.key:
            # Word for word what the CDS answers for a key it does not know.
            raise _ApiError(401, {"type": "permission denied", "title": "Authentication failed",
                                  "detail": "operation not allowed"})

    def _process_or_404(self, process_id: str) -> dict[str, str]:
        dataset = _DATASETS.get(process_id)
        if dataset is None:
            raise _ApiError(404, {"type": NO_SUCH_PROCESS, "title": "process not found",
                                  "detail": f"dataset {process_id} not found"})
        return dataset

    @property
    def retrieve_base(self) -> str:
        return f"{self.origin}{API_PREFIX}/retrieve/v1"

    def _status_info(
        self, job: Job, *, links: list[dict[str, Any]], request: bool = False, log_: bool = False,
        log_start: datetime | None = None, dataset_messages: bool = False,
    ) -> dict[str, Any]:
        with self.cds._lock:
            info: dict[str, Any] = {
                "processID": job.process_id,
                "type": "process",
                "jobID": job.job_id,
                "status": job.status,
                "created": _iso(job.created),
            }
            if job.started is not None:
                info["started"] = _iso(job.started)
            if job.finished is not None:
                info["finished"] = _iso(job.finished)
            info["updated"] = _iso(job.updated)
            info["links"] = links
            metadata: dict[str, Any] = {"origin": "api"}
            if request:
                metadata["request"] = {"ids": job.inputs, "labels": _labels(job.inputs)}
            if log_:
                metadata["log"] = [
                    [_iso(ts), msg] for ts, msg in job.log if log_start is None or ts > log_start
                ]
            if dataset_messages:
                metadata["datasetMetadata"] = {"messages": list(self.cds.messages)}
            info["metadata"] = metadata
        return info

    def _job_links(self, job: Job, rel: str = "self") -> list[dict[str, Any]]:
        href = f"{self.retrieve_base}/jobs/{job.job_id}"
        link: dict[str, Any] = {"href": href, "rel": rel, "type": "application/json"}
        if rel == "monitor":
            link["title"] = "job status info"
        links = [link]
        if job.status in ("successful", "failed", "rejected"):
            links.append({"href": f"{href}/results", "rel": "results"})
        return links

    # -- catalogue --------------------------------------------------------------------------------

    @_route("GET", f"{API_PREFIX}/catalogue/v1/messages")
    def catalogue_messages(self, match: re.Match[str]) -> None:
        self._json(200, {"messages": list(self.cds.messages)})

    @_route("GET", f"{API_PREFIX}/catalogue/v1/datasets")
    def catalogue_datasets(self, match: re.Match[str]) -> None:
        self._json(200, {
            "type": "FeatureCollection",
            "collections": [self._collection(cid) for cid in _DATASETS],
            "links": [{"rel": "self", "type": "application/json", "href": self.full_url}],
            "numberMatched": len(_DATASETS), "numberReturned": len(_DATASETS),
        })

    @_route("GET", f"{API_PREFIX}/catalogue/v1/collections/{_ID}")
    def catalogue_collection(self, match: re.Match[str]) -> None:
        cid = match["id"]
        if cid not in _DATASETS:
            raise _ApiError(404, {"type": "not found", "title": "collection not found",
                                  "detail": f"collection {cid} not found"})
        self._json(200, self._collection(cid))

    def _collection(self, cid: str) -> dict[str, Any]:
        dataset = _DATASETS[cid]
        base = f"{self.origin}{API_PREFIX}"
        return {
            "type": "Collection",
            "id": cid,
            "stac_version": "1.0.0",
            "title": dataset["title"],
            "description": dataset["description"],
            "license": "other",
            "extent": {
                "spatial": {"bbox": [[0.0, -89.0, 360.0, 89.0]]},
                "temporal": {"interval": [["1940-01-01T00:00:00Z", None]]},
            },
            "published": "2018-06-14T00:00:00Z",
            "updated": _iso(_utcnow()) + "Z",
            "links": [
                {"rel": "self", "type": "application/json",
                 "href": f"{base}/catalogue/v1/collections/{cid}"},
                {"rel": "retrieve", "type": "application/json",
                 "href": f"{base}/retrieve/v1/processes/{cid}"},
                {"rel": "root", "type": "application/json", "href": f"{base}/catalogue/v1/"},
            ],
        }

    @_route("GET", f"{API_PREFIX}/catalogue/v1/vocabularies/licences")
    def catalogue_licences(self, match: re.Match[str]) -> None:
        lid, rev = ERA5_LICENCE
        self._json(200, {"licences": [
            {"id": lid, "revision": rev, "label": "Licence to use Copernicus Products", "scope": "dataset"},
        ]})

    # -- retrieve ---------------------------------------------------------------------------------

    @_route("GET", f"{API_PREFIX}/retrieve/v1/processes")
    def processes(self, match: re.Match[str]) -> None:
        self._json(200, {
            "processes": [
                {"id": pid, "title": d["title"], "version": "1.0.0", "jobControlOptions": ["async-execute"],
                 "outputTransmission": ["reference"],
                 "links": [{"href": f"{self.retrieve_base}/processes/{pid}", "rel": "process",
                            "type": "application/json", "title": "process description"}]}
                for pid, d in _DATASETS.items()
            ],
            "links": [{"href": self.full_url, "rel": "self", "type": "application/json"}],
        })

    @_route("GET", f"{API_PREFIX}/retrieve/v1/processes/{_ID}")
    def process(self, match: re.Match[str]) -> None:
        pid = match["id"]
        dataset = self._process_or_404(pid)
        self._json(200, {
            "title": dataset["title"],
            "description": dataset["description"],
            "id": pid,
            "version": "1.0.0",
            "jobControlOptions": ["async-execute"],
            "outputTransmission": ["reference"],
            "links": [
                {"href": f"{self.retrieve_base}/processes/{pid}", "rel": "self"},
                {"href": f"{self.retrieve_base}/processes/{pid}/execution", "rel": "execute",
                 "type": "application/json", "title": "process execution"},
            ],
            "inputs": _input_schemas(),
            "outputs": {"asset": {
                "title": "Asset", "description": "Downloadable asset description",
                "schema": {"type": "object", "properties": {"value": {
                    "type": "object", "properties": {
                        "type": {"type": "string"}, "href": {"type": "string"},
                        "file:checksum": {"type": "string"}, "file:size": {"type": "integer"},
                        "file:local_path": {"type": "string"},
                    }}}},
            }},
            "metadata": {"datasetMetadata": {"messages": list(self.cds.messages)}},
        }, headers={"Cache-Control": "public, max-age=60"})

    @_route("POST", f"{API_PREFIX}/retrieve/v1/processes/{_ID}/execution")
    def execute(self, match: re.Match[str]) -> None:
        body = self._body()
        submitted = body.get("inputs") if isinstance(body, dict) else None
        fault = self._fault("submit", submitted if isinstance(submitted, dict) else None)
        self._authenticate()
        pid = match["id"]
        self._process_or_404(pid)
        if not isinstance(body, dict) or not isinstance(body.get("inputs", {}), dict):
            raise _ApiError(422, {"type": "invalid request", "title": "invalid request",
                                  "detail": "the body must be {\"inputs\": {...}}"})
        inputs: dict[str, Any] = body.get("inputs") or {}
        try:
            synth.parse_request(inputs)
        except synth.RequestError as exc:
            raise _ApiError(400, {"type": "invalid request", "title": "invalid request",
                                  "detail": str(exc)}) from None
        accepted = self.cds.accepted_licences | {
            (lic.get("id"), lic.get("revision")) for lic in body.get("acceptedLicences") or []
            if isinstance(lic, dict)
        }
        if ERA5_LICENCE not in accepted:
            missing = [{"id": ERA5_LICENCE[0], "revision": ERA5_LICENCE[1]}]
            raise _ApiError(403, {"type": "permission denied", "title": "required licences not accepted",
                                  "detail": f"please accept the following licences to proceed: {missing}"})
        cost = costing.estimate(inputs)
        if cost.value > costing.limit_for(cost.data_format, self.cds.cost_limits):
            # The CDS's words since 2024; it says neither the cost nor the limit.
            raise _ApiError(403, {"type": "permission denied", "title": "cost limits exceeded",
                                  "detail": "Your request is too large, please reduce your selection."})
        job = self.cds.create_job(pid, inputs)
        links = [{"href": self.full_url, "rel": "self"}, *self._job_links(job, rel="monitor")]
        info = self._status_info(job, links=links, dataset_messages=True)
        self.cds.start_job(job)
        if fault is not None and fault.kind == "drop_after":
            self._drop()
        self._json(201, info, headers={"Location": f"{self.retrieve_base}/jobs/{job.job_id}"})

    @_route("GET", f"{API_PREFIX}/retrieve/v1/jobs")
    def jobs(self, match: re.Match[str]) -> None:
        self._authenticate()
        _, query = self.split
        wanted = set(query.get("status", []))
        limit = int((query.get("limit") or ["10"])[0])
        newest_first = (query.get("sortby") or ["-created"])[0] != "created"
        with self.cds._lock:
            jobs = [j for j in self.cds.jobs.values()
                    if not j.dismissed and (not wanted or j.status in wanted)]
        jobs.sort(key=lambda j: j.created, reverse=newest_first)
        self._json(200, {
            "jobs": [self._status_info(j, links=self._job_links(j)) for j in jobs[:limit]],
            "links": [{"href": self.full_url, "rel": "self", "title": "list of submitted jobs"}],
            "metadata": {"totalCount": len(jobs)},
        })

    @_route("POST", f"{API_PREFIX}/retrieve/v1/jobs/delete")
    def jobs_delete(self, match: re.Match[str]) -> None:
        body = self._body()
        self._authenticate()
        ids = body.get("job_ids", []) if isinstance(body, dict) else []
        dismissed = []
        for job_id in ids:
            job = self.cds.job_or_404(str(job_id))
            self.cds.dismiss(job)
            dismissed.append(self._status_info(job, links=self._job_links(job)))
        self._json(200, {"jobs": dismissed})

    @_route("GET", f"{API_PREFIX}/retrieve/v1/jobs/{_ID}")
    def job(self, match: re.Match[str]) -> None:
        self._authenticate()
        job = self.cds.job_or_404(match["id"])
        self._fault("status", job.inputs)
        _, query = self.split

        def flag(name: str) -> bool:
            return (query.get(name) or ["false"])[0].lower() in ("true", "1", "yes")

        start = None
        if query.get("logStartTime"):
            start = datetime.fromisoformat(query["logStartTime"][0])
            start = start.replace(tzinfo=UTC) if start.tzinfo is None else start
        self._json(200, self._status_info(job, links=self._job_links(job), request=flag("request"),
                                          log_=flag("log"), log_start=start))

    @_route("DELETE", f"{API_PREFIX}/retrieve/v1/jobs/{_ID}")
    def job_delete(self, match: re.Match[str]) -> None:
        self._authenticate()
        job = self.cds.job_or_404(match["id"])
        self.cds.dismiss(job)
        self._json(200, self._status_info(job, links=self._job_links(job)))

    @_route("GET", f"{API_PREFIX}/retrieve/v1/jobs/{_ID}/results")
    def job_results(self, match: re.Match[str]) -> None:
        self._authenticate()
        job = self.cds.job_or_404(match["id"])
        fault = self._fault("results", job.inputs)
        if fault is not None and fault.kind == "expire":
            self.cds.expire(job.job_id)
        with self.cds._lock:
            status, asset, errors, expired = job.status, dict(job.asset or {}), list(job.errors), job.expired
        if expired:
            raise _ApiError(404, {"type": "results expired", "title": "results expired",
                                  "detail": f"the results of job {job.job_id} have expired"})
        if status == "successful":
            asset["href"] = f"{self.origin}{asset['href']}"
            self._json(200, {"asset": {"value": asset}})
        elif status in ("failed", "rejected"):
            title = "The job has failed" if status == "failed" else "The job has been rejected"
            self._error(400, {"type": "job results failed", "title": title,
                              "traceback": "\n".join(msg for _, msg in errors)})
        else:
            raise _ApiError(404, {"type": RESULTS_NOT_READY, "title": "job results not ready",
                                  "detail": f"status of {job.job_id} is '{status}'"})

    # -- profiles ---------------------------------------------------------------------------------

    @_route("POST", f"{API_PREFIX}/profiles/v1/account/verification/pat")
    def verify_pat(self, match: re.Match[str]) -> None:
        self._drain()
        self._authenticate()
        self._json(200, {"sub": str(uuid.uuid5(uuid.NAMESPACE_URL, self.cds.key)), "role": "user"})

    @_route("GET", f"{API_PREFIX}/profiles/v1/account/licences")
    def accepted_licences(self, match: re.Match[str]) -> None:
        self._authenticate()
        with self.cds._lock:
            licences = sorted(self.cds.accepted_licences)
        self._json(200, {"licences": [{"id": lid, "revision": rev} for lid, rev in licences]})

    @_route("PUT", f"{API_PREFIX}/profiles/v1/account/licences/{_ID}")
    def accept_licence(self, match: re.Match[str]) -> None:
        body = self._body()
        self._authenticate()
        revision = int(body.get("revision", 0)) if isinstance(body, dict) else 0
        with self.cds._lock:
            self.cds.accepted_licences.add((match["id"], revision))
        self._json(201, {"id": match["id"], "revision": revision})

    # -- the asset, as the object store serves it --------------------------------------------------

    @_route("GET", f"{ASSET_PREFIX}[0-9a-f-]+/[0-9a-f]+\\.(?:nc|zip)")
    def asset(self, match: re.Match[str]) -> None:
        path_only, _ = self.split
        found = self.cds.asset_file(path_only)
        if found is None or not found[0].exists():
            self._json(404, {"detail": "Not Found"})
            return
        path, checksum = found
        job = self.cds.asset_job(path_only)
        fault = self._fault("asset", job.inputs if job else None)
        size = path.stat().st_size
        range_header = self.headers.get("Range")
        span = _parse_range(range_header, size)
        headers = {
            "Accept-Ranges": "bytes",
            "ETag": f'"{checksum}"',
            "Last-Modified": self.date_time_string(int(path.stat().st_mtime)),
        }
        content_type = "application/zip" if path.suffix == ".zip" else "application/netcdf"
        if span == "unsatisfiable":
            self._send(416, b"", content_type, {**headers, "Content-Range": f"bytes */{size}"})
            self.cds.record_download(DownloadRecord(self.command, path_only, range_header, 416, 0))
            return
        start, end = span if isinstance(span, tuple) else (0, size - 1)
        status = 206 if isinstance(span, tuple) else 200
        length = end - start + 1
        truncate = self.command == "GET" and (
            (fault is not None and fault.kind == "truncate") or self.cds.take_truncation())
        corrupt = self.command == "GET" and fault is not None and fault.kind == "corrupt"
        self.cds.record_call(self.command, path_only, status)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(length))
        for name, value in headers.items():
            self.send_header(name, value)
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        if truncate:
            self.send_header("Connection", "close")
        self.end_headers()
        sent = 0
        if self.command == "GET":
            limit = length // 2 if truncate else length
            with path.open("rb") as fh:
                fh.seek(start)
                sent = _copy(fh, self.wfile, limit, flip=corrupt)
            if truncate:
                # Headers promised `length` bytes; closing now is a transfer cut mid-way.
                self.wfile.flush()
                self.close_connection = True
        self.cds.record_download(
            DownloadRecord(self.command, path_only, range_header, status, sent, truncated=truncate)
        )


def _copy(src: BinaryIO, dst: Any, limit: int, flip: bool = False) -> int:
    sent = 0
    while sent < limit:
        block = src.read(min(1 << 20, limit - sent))
        if not block:
            break
        if flip:
            # Bit rot in transit: every 4096th byte inverted, length unchanged (only a checksum tells).
            data = bytearray(block)
            for i in range(0, len(data), 4096):
                data[i] ^= 0xFF
            block = bytes(data)
        dst.write(block)
        sent += len(block)
    return sent


_RANGE_RE = re.compile(r"^bytes=(\d*)-(\d*)$")


def _parse_range(header: str | None, size: int) -> tuple[int, int] | str | None:
    """(first, last) byte of a single satisfiable range, "unsatisfiable", or None for the whole file.

    A malformed header or several ranges are ignored (the whole file, 200), which RFC 9110 allows.
    """
    if not header:
        return None
    m = _RANGE_RE.match(header.strip())
    if m is None:
        return None
    first, last = m.group(1), m.group(2)
    if not first and not last:
        return None
    if not first:  # suffix: the last N bytes
        suffix = int(last)
        if suffix == 0 or size == 0:
            return "unsatisfiable"
        return max(0, size - suffix), size - 1
    start = int(first)
    if last and int(last) < start:
        return None
    if start >= size:
        return "unsatisfiable"
    end = int(last) if last else size - 1
    return start, min(end, size - 1)


def _labels(inputs: dict[str, Any]) -> dict[str, Any]:
    """Human labels of the request, as the job page shows them (keys title-cased, values as given)."""
    return {key.replace("_", " ").capitalize(): value for key, value in inputs.items()}


def _input_schemas() -> dict[str, Any]:
    def enum(title: str, values: list[str]) -> dict[str, Any]:
        return {"title": title, "schema": {"type": "array", "items": {"type": "string", "enum": values}}}

    return {
        "product_type": enum("Product type", ["reanalysis"]),
        "variable": enum("Variable", sorted(synth.META)),
        "year": enum("Year", [str(y) for y in range(1940, datetime.now(UTC).year + 1)]),
        "month": enum("Month", [f"{m:02d}" for m in range(1, 13)]),
        "day": enum("Day", [f"{d:02d}" for d in range(1, 32)]),
        "time": enum("Time", [f"{h:02d}:00" for h in range(24)]),
        "area": {"title": "Sub-region extraction",
                 "schema": {"type": "array", "minItems": 4, "maxItems": 4, "items": {"type": "number"}}},
        "grid": {"title": "Grid", "schema": {"type": "array", "minItems": 2, "maxItems": 2,
                                             "items": {"type": "string"}}},
        "data_format": {"title": "Data format", "schema": {"type": "string", "enum": ["grib", "netcdf"]}},
        "download_format": {"title": "Download format",
                            "schema": {"type": "string", "enum": ["unarchived", "zip"]}},
    }


def _iter_routes() -> Iterator[str]:
    """The served routes, for the CLI banner."""
    for method, pattern, _ in _ROUTES:
        yield f"{method:6} {pattern.pattern.strip('^$')}"


def serve(port: int, host: str = "127.0.0.1", key: str = DEFAULT_KEY, workdir: Path | None = None) -> None:
    """Run a local CDS in the foreground until SIGINT or SIGTERM."""
    done = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        done.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with LocalCDS(host=host, port=port, key=key, workdir=workdir) as cds:
            print(f"local CDS at {cds.url}\n  CDSAPI_URL={cds.url}\n  CDSAPI_KEY={cds.key}", flush=True)
            for line in _iter_routes():
                log.info("  %s", line)
            done.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
