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

Only the standard library serves HTTP, so nothing joins the pipeline's dependencies. Data come from
:mod:`localcds.synth`. Switches on the server object inject faults for tests: the old global
ones (``fail_months``, ``queue_seconds``, ``truncate_downloads``, ``accepted_licences``) and
:meth:`LocalCDS.inject`, which aims a fault at one endpoint and, through ``match``, at the requests
it chooses, a given number of times -- so one test can mix faults across the parts of a month.
The cost check mirrors the real one (:mod:`era5etl.fetch.cost`): 403 "cost limits exceeded".

One concern a module: :mod:`localcds.protocol` (the API's fixed vocabulary), :mod:`localcds.jobs`
(the job model and queue), :mod:`localcds.faults` (fault injection), :mod:`localcds.records` (what
the server saw), :mod:`localcds.handler` (HTTP plumbing and the route table), :mod:`localcds.routes`
(the API's endpoints), :mod:`localcds.assets` (asset serving), and here the server object,
:class:`LocalCDS`, and :func:`serve`. Import the emulator's API from here.
"""

from __future__ import annotations

import logging
import signal
import tempfile
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Self

from era5etl.fetch import cost as costing
from localcds.assets import AssetHandler
from localcds.faults import (
    FAULT_KINDS as FAULT_KINDS,
    FAULT_PLACES as FAULT_PLACES,
    Fault as Fault,
    FaultSwitches,
)
from localcds.handler import HTTPServer, iter_routes
from localcds.jobs import Job as Job, JobQueue
from localcds.protocol import (
    API_PREFIX as API_PREFIX,
    ASSET_PREFIX as ASSET_PREFIX,
    DEFAULT_KEY as DEFAULT_KEY,
    ERA5_LICENCE as ERA5_LICENCE,
    NO_SUCH_JOB as NO_SUCH_JOB,
    NO_SUCH_PROCESS as NO_SUCH_PROCESS,
    RESULTS_NOT_READY as RESULTS_NOT_READY,
    utcnow,
)
from localcds.records import CallRecord as CallRecord, DownloadRecord as DownloadRecord, Records
from localcds.routes import ApiHandler

log = logging.getLogger(__name__)


class _Handler(ApiHandler, AssetHandler):
    """Every endpoint: the API's and the asset's."""


class LocalCDS(JobQueue, FaultSwitches, Records):
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
        self.clock: Callable[[], datetime] = utcnow
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
        self._httpd: HTTPServer | None = None
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
        self._httpd = HTTPServer((self.host, self._port), _Handler, self)
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


def serve(port: int, host: str = "127.0.0.1", key: str = DEFAULT_KEY, workdir: Path | None = None) -> None:
    """Run a local CDS in the foreground until SIGINT or SIGTERM."""
    done = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        done.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with LocalCDS(host=host, port=port, key=key, workdir=workdir) as cds:
            print(f"local CDS at {cds.url}\n  CDSAPI_URL={cds.url}\n  CDSAPI_KEY={cds.key}", flush=True)
            for line in iter_routes(_Handler):
                log.info("  %s", line)
            done.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
