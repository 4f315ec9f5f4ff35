"""Fetch a month from the CDS like a production client: split under the cost limit, remember every
job, re-attach after a crash, answer every fault, and stage only verified files.

A month is one :class:`MonthRequest`; its hash names the staging folder. When the month costs more
than the service allows (:mod:`era5etl.fetch.cost`) it is split into :class:`RequestPart`\\ s, each a
CDS job of its own, fetched side by side up to ``max_parallel`` jobs per credential. Each part is
downloaded under a hidden name, checked (size against ``file:size``, MD5 against ``file:checksum``,
the magic bytes of NetCDF or ZIP) and only then renamed to ``part-NN.nc|zip`` with a small
``part-NN.json`` beside it; ``manifest.json``, written last, lists every part and marks the month
usable. A partial or unverified file is therefore never what a later step reads.

Every job id is written to a :class:`~era5etl.cds.jobs.JobStore` the moment the CDS hands it out,
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
(``retry_max=1``) and every call goes through :meth:`Fetcher._retry`.

:meth:`Fetcher.step` makes one pass and never waits for the CDS queue: it raises
:class:`FetchPending` while jobs are queued (what the Airflow operator defers on). :meth:`Fetcher.run`
loops over passes, sleeping in between (the CLI). The API key goes to the client and nowhere else:
not to logs, errors, the job table, XCom or metrics; the client's debug log, which prints it, is off.
This module does not import Airflow.
"""

from __future__ import annotations

import contextlib
import email.utils
import fcntl
import hashlib
import json
import logging
import math
import os
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from era5etl.core.errors import InputError
from era5etl.core.files import file_kind, write_json
from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import Variable
from era5etl.fetch import cost as costing
from era5etl.fetch.jobs import JobRecord, JobStore, MemoryJobStore

if TYPE_CHECKING:
    import requests

log = logging.getLogger(__name__)

DATASET = "reanalysis-era5-single-levels"
MANIFEST = "manifest.json"
LICENCE_PAGE = "https://cds.climate.copernicus.eu/datasets/{dataset}?tab=download#manage-licences"
PROFILE_PAGE = "https://cds.climate.copernicus.eu/profile"

T = TypeVar("T")


# -------------------------------------------------------------------------------------------------
# Errors


class FetchError(RuntimeError):
    """The CDS refused or failed the request; the message says why and what to do (never the key)."""

    #: False when retrying cannot help (the Airflow operator then fails without using its retries).
    retryable = True


class AuthError(FetchError):
    retryable = False


class LicenceError(FetchError):
    retryable = False

    def __init__(self, message: str, licences: list[tuple[str, int]]) -> None:
        super().__init__(message)
        self.licences = licences


class CostLimitError(FetchError):
    retryable = False

    def __init__(self, message: str, estimate: float, limit: float) -> None:
        super().__init__(message)
        self.estimate = estimate
        self.limit = limit


class JobFailedError(FetchError):
    retryable = False

    def __init__(self, message: str, job_id: str | None, reason: str) -> None:
        super().__init__(message)
        self.job_id = job_id
        self.reason = reason


class BadAssetError(FetchError):
    """The CDS delivered a product that is empty or not NetCDF/ZIP; the job is marked failed."""

    retryable = False


class RequestRefused(FetchError):
    """The CDS refused the request itself (4xx): sending it again would change nothing."""

    retryable = False


class RetryLater(FetchError):
    """A fault that may heal (5xx, 429, a dropped connection); ``hint``: the service's Retry-After."""

    def __init__(self, message: str, hint: float | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class RetriesExhausted(FetchError):
    """A fault that usually heals did not, within the configured attempts."""


class FetchPending(BaseException):
    """CDS jobs are still queued or running; nothing is wrong, the fetch is not done yet.

    A BaseException, like Airflow's ``TaskDeferred`` and for the same reason: step bookkeeping
    that catches ``Exception`` to mark a failure must let it pass.
    """

    def __init__(self, api_url: str, job_ids: list[str], parts_done: int, parts: int, retry_after: float,
                 message: str) -> None:
        super().__init__(message)
        self.api_url = api_url
        self.job_ids = job_ids
        self.parts_done = parts_done
        self.parts = parts
        self.retry_after = retry_after


class _Transient(Exception):
    """A fault worth another attempt; ``hint`` is the service's own wait (Retry-After), if any."""

    def __init__(self, message: str, hint: float | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class _JobLost(Exception):
    """The CDS does not know the job (deleted, dismissed, another service): submit again."""


class _ResultsExpired(Exception):
    """The job succeeded but its results are gone from the cache: submit again."""


class _Busy(Exception):
    """Another process is downloading this part right now."""


# -------------------------------------------------------------------------------------------------
# Requests


@dataclass(frozen=True)
class Credentials:
    url: str | None = None
    key: str | None = None

    def __repr__(self) -> str:  # the key must never reach a log line
        return f"Credentials(url={self.url!r}, key={'***' if self.key else None})"

    __str__ = __repr__

    @classmethod
    def from_env(cls) -> Credentials:
        """CDSAPI_URL / CDSAPI_KEY; when unset cdsapi falls back to ~/.cdsapirc itself."""
        return cls(os.environ.get("CDSAPI_URL"), os.environ.get("CDSAPI_KEY"))

    def resolve(self) -> tuple[str, str]:
        """(url, key) as cdsapi finds them: given values, else CDSAPI_URL / CDSAPI_KEY, else ~/.cdsapirc."""
        import cdsapi.api

        try:
            url, key, _ = cdsapi.api.get_url_key_verify(self.url, self.key, None)
        except Exception:
            raise AuthError(
                "no CDS credentials: define the Airflow connection 'era5_cds' (host: the API URL, "
                "password: your personal access token), or set CDSAPI_URL and CDSAPI_KEY, or write "
                "~/.cdsapirc"
            ) from None
        url, key = str(url).rstrip("/"), str(key).strip()
        if ":" in key:
            raise AuthError(
                "the CDS key has the legacy 'UID:KEY' form of the retired CDS; use the personal access "
                f"token shown on {PROFILE_PAGE}"
            )
        return url, key


def _hash(request: Mapping[str, Any]) -> str:
    canonical = json.dumps({"dataset": DATASET, **request}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class MonthRequest:
    month: Month
    area: Area
    grid: Grid
    variables: tuple[Variable, ...]
    # Not sent to the CDS: a new revision asks for a fresh download of the same request (ERA5T
    # replaced by final ERA5), so it must name another staging folder. Empty keeps the old hashes.
    revision: str = ""

    def cds_request(self) -> dict[str, Any]:
        return {
            "product_type": ["reanalysis"],
            "variable": [v.cds_name for v in self.variables],
            "year": [f"{self.month.year:04d}"],
            "month": [f"{self.month.month:02d}"],
            "day": [f"{d:02d}" for d in range(1, self.month.days + 1)],
            "time": [f"{h:02d}:00" for h in range(24)],
            "area": self.area.cds,
            "grid": self.grid.cds,
            "data_format": "netcdf",
            "download_format": "unarchived",
        }

    @property
    def hash(self) -> str:
        """The month's key: its staging folder, whatever split its download took."""
        if self.revision:
            return _hash({**self.cds_request(), "revision": self.revision})
        return _hash(self.cds_request())

    def folder(self, staging_root: Path) -> Path:
        return staging_root / str(self.month) / self.hash

    def cost(self) -> costing.Cost:
        return costing.estimate(self.cds_request())


@dataclass(frozen=True)
class RequestPart:
    """One CDS job's share of a month: some of its variables over a run of its days."""

    month: MonthRequest
    index: int
    count: int
    variables: tuple[Variable, ...]
    days: tuple[int, ...]  # day numbers, 1-based

    def cds_request(self) -> dict[str, Any]:
        request = self.month.cds_request()
        request["variable"] = [v.cds_name for v in self.variables]
        request["day"] = [f"{d:02d}" for d in self.days]
        return request

    @property
    def hash(self) -> str:
        return _hash(self.cds_request())

    @property
    def stem(self) -> str:
        return f"part-{self.index:02d}"

    @property
    def label(self) -> str:
        days = f"days {self.days[0]:02d}-{self.days[-1]:02d}"
        return f"{self.month.month} part {self.index + 1}/{self.count} ({days}, {len(self.variables)} variables)"

    def cost(self) -> costing.Cost:
        return costing.estimate(self.cds_request())


def plan(request: MonthRequest, cost_limit: float | None = None) -> list[RequestPart]:
    """The parts the month is fetched in: one when it fits under the limit, else as few as fit."""
    whole = request.cost()
    limit = cost_limit if cost_limit is not None else whole.limit()
    days = tuple(range(1, request.month.days + 1))
    if whole.value <= limit:
        return [RequestPart(request, 0, 1, request.variables, days)]
    try:
        splits = costing.split(len(request.variables), len(days), 24, whole.weight, limit,
                               groups=[0 if v.step_type == "instant" else 1 for v in request.variables])
    except costing.CostError as exc:
        raise CostLimitError(f"{request.month}: {exc}", whole.value, limit) from None
    return [
        RequestPart(request, i, len(splits), tuple(request.variables[v] for v in s.variables),
                    tuple(days[d] for d in s.days))
        for i, s in enumerate(splits)
    ]


# -------------------------------------------------------------------------------------------------
# Options


def _env_float(env: Mapping[str, str], name: str, default: float | None) -> float | None:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise InputError(f"{name}={raw!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise InputError(f"{name}={raw!r} must be a non-negative number")
    return value


@dataclass(frozen=True)
class FetchOptions:
    """How hard to try and how long to wait; every figure has an ERA5_CDS_* environment variable."""

    cost_limit: float | None = None  # ERA5_CDS_COST_LIMIT; None: cost.DEFAULT_LIMITS for the format
    max_parallel: int = 4  # ERA5_CDS_MAX_PARALLEL: jobs queued/running at once per service URL
    retries: int = 5  # ERA5_CDS_RETRIES: attempts per call for faults that may heal
    backoff_base: float = 2.0  # ERA5_CDS_BACKOFF_BASE: first pause; doubles per attempt, with jitter
    backoff_cap: float = 60.0  # ERA5_CDS_BACKOFF_CAP
    max_hint: float = 300.0  # ERA5_CDS_MAX_RETRY_AFTER: longest Retry-After honoured within a call
    poll_base: float = 1.0  # ERA5_CDS_POLL_BASE: first wait on a queued job (the stock client's too)
    poll_cap: float = 60.0  # ERA5_CDS_POLL_CAP: waits grow 1.5x up to this
    wait_timeout: float = 12 * 3600.0  # ERA5_CDS_WAIT_TIMEOUT: the CLI's patience with the queue
    http_timeout: float = 60.0  # ERA5_CDS_HTTP_TIMEOUT: per request

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> FetchOptions:
        env = os.environ if env is None else env
        d = cls()

        def num(name: str, default: float) -> float:
            value = _env_float(env, name, default)
            assert value is not None
            return value

        parallel = int(num("ERA5_CDS_MAX_PARALLEL", d.max_parallel))
        retries = int(num("ERA5_CDS_RETRIES", d.retries))
        if parallel < 1 or retries < 1:
            raise InputError("ERA5_CDS_MAX_PARALLEL and ERA5_CDS_RETRIES must be at least 1")
        return cls(
            cost_limit=_env_float(env, "ERA5_CDS_COST_LIMIT", d.cost_limit),
            max_parallel=parallel,
            retries=retries,
            backoff_base=num("ERA5_CDS_BACKOFF_BASE", d.backoff_base),
            backoff_cap=num("ERA5_CDS_BACKOFF_CAP", d.backoff_cap),
            max_hint=num("ERA5_CDS_MAX_RETRY_AFTER", d.max_hint),
            poll_base=num("ERA5_CDS_POLL_BASE", d.poll_base),
            poll_cap=num("ERA5_CDS_POLL_CAP", d.poll_cap),
            wait_timeout=num("ERA5_CDS_WAIT_TIMEOUT", d.wait_timeout),
            http_timeout=num("ERA5_CDS_HTTP_TIMEOUT", d.http_timeout),
        )

    def backoff(self, attempt: int, hint: float | None = None) -> float:
        """Pause before attempt ``attempt + 1``: the service's hint if it gave one, else 2^n with jitter."""
        if hint is not None:
            return min(max(hint, 0.0), self.max_hint)
        ceiling = min(self.backoff_cap, self.backoff_base * 2.0 ** (attempt - 1))
        # Jitter in the upper half: parallel tasks that failed together do not retry in step.
        return ceiling * random.uniform(0.5, 1.0)


# -------------------------------------------------------------------------------------------------
# Downloads in staging


@dataclass
class Download:
    paths: list[Path]
    bytes: int
    seconds: float
    request_hash: str
    reused: bool
    parts: int = 1
    submissions: int = 0
    queue_seconds: float = 0.0  # longest time a part's job waited in the CDS queue
    download_seconds: float = 0.0  # time spent transferring assets, summed over parts

    @property
    def path(self) -> Path:
        """The first part; a split month has several, see ``paths``."""
        return self.paths[0]


def staged_download(folder: Path) -> Download | None:
    """The complete download in ``folder`` (every part the manifest lists, at its size), or None."""
    manifest = folder / MANIFEST
    if not manifest.exists():
        return None
    try:
        meta = json.loads(manifest.read_text())
        entries = meta.get("parts") or [{"file": meta["file"], "bytes": meta["bytes"]}]
        paths, total = [], 0
        for entry in entries:
            path = folder / entry["file"]
            if not path.exists() or path.stat().st_size != int(entry["bytes"]):
                return None
            paths.append(path)
            total += int(entry["bytes"])
    except (ValueError, KeyError, TypeError):
        return None  # a manifest we cannot read marks nothing usable
    return Download(paths, total, 0.0, str(meta.get("request_hash", "")), reused=True, parts=len(paths))


def _sniff(path: Path) -> str | None:
    """"nc" or "zip" from the magic bytes (the CDS names nothing), None for anything else."""
    kind = file_kind(path)
    return "nc" if kind in ("nc3", "hdf5") else kind if kind == "zip" else None


def file_md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class _PartFile:
    path: Path
    bytes: int
    md5: str
    request_hash: str
    job_id: str | None

    def entry(self) -> dict[str, Any]:
        return {"file": self.path.name, "bytes": self.bytes, "md5": self.md5, "request_hash": self.request_hash,
                "job_id": self.job_id}


def _utc(text: str | None) -> datetime | None:
    if not text:
        return None
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def _canonical(request: Mapping[str, Any]) -> str:
    return json.dumps(request, sort_keys=True)


# -------------------------------------------------------------------------------------------------
# The client


class _Api:
    """The real cdsapi client (the new CDS one, ``ecmwf.datastores``), with its own retries off."""

    def __init__(self, url: str, key: str, options: FetchOptions, redact: Callable[[str], str]) -> None:
        import cdsapi
        import requests

        def relay(level: int) -> Callable[..., None]:
            def emit(msg: Any, *args: Any, **kwargs: Any) -> None:
                if log.isEnabledFor(level):
                    log.log(level, "%s", redact(str(msg) % args if args else str(msg)))

            return emit

        # retry_max=1: every fault comes back to us (bounded retries, Retry-After honoured).
        # delete=False: a Remote being garbage-collected must never delete the job we re-attach to.
        # debug_callback drops the client's debug output, whose first line prints the key.
        self.legacy = cdsapi.Client(
            url=url, key=key, quiet=True, debug=False, progress=False, delete=False, retry_max=1,
            sleep_max=max(options.poll_cap, 1.0), timeout=options.http_timeout, wait_until_complete=False,
            info_callback=relay(logging.DEBUG), warning_callback=relay(logging.WARNING),
            error_callback=relay(logging.WARNING), debug_callback=lambda *a, **k: None,
        )
        self.client: Any = self.legacy.client
        self.session = requests.Session()  # for assets: the object store needs no key, so none is sent
        self.remotes: dict[str, Any] = {}

    def submit(self, request: dict[str, Any]) -> Any:
        remote = self.legacy.retrieve(DATASET, request)
        self.remotes[remote.request_id] = remote
        return remote

    def remote(self, job_id: str) -> Any:
        found = self.remotes.get(job_id)
        if found is None:
            found = self.remotes[job_id] = self.client.get_remote(job_id)
        return found

    def close(self) -> None:
        self.session.close()
        self.legacy.session.close()


def _retry_after(response: requests.Response) -> float | None:
    raw = response.headers.get("Retry-After")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _body(response: requests.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _licences(detail: str) -> list[tuple[str, int]]:
    """The licences a 403 names, e.g. "... to proceed: [{'id': 'licence-x', 'revision': 12}]"."""
    import ast

    start = detail.find("[")
    if start < 0:
        return []
    try:
        items = ast.literal_eval(detail[start:detail.rfind("]") + 1])
    except (ValueError, SyntaxError):
        return []
    return [(str(i.get("id")), int(i.get("revision", 0))) for i in items if isinstance(i, dict)]


def _classify(exc: Exception, what: str, where: str, redact: Callable[[str], str], *,
              cost: Callable[[], tuple[costing.Cost, float]] | None = None,
              job_failed: Callable[[str], JobFailedError] | None = None) -> Exception:
    """A permanent FetchError, or one of the internal signals (_Transient, _JobLost, ...).

    ``where`` says what was asked ("submit", "job", "results", "asset", "jobs"): a 404 means a lost
    job on one, expired results on another.
    """
    import requests
    from ecmwf.datastores.processing import ProcessingFailedError

    if isinstance(exc, (FetchError, _Transient, _JobLost, _ResultsExpired, _Busy)):
        return exc
    if isinstance(exc, ProcessingFailedError):
        return job_failed(str(exc)) if job_failed else FetchError(redact(f"{what}: {exc}"))
    if isinstance(exc, (requests.ConnectionError, requests.Timeout)):
        # ChunkedEncodingError (a cut transfer) is a ConnectionError for requests' purposes too.
        return _Transient(f"connection problem ({type(exc).__name__})")
    if isinstance(exc, requests.exceptions.ChunkedEncodingError):
        return _Transient("the transfer was cut")
    if not isinstance(exc, requests.HTTPError) or exc.response is None:
        return FetchError(redact(f"{what}: unexpected error from the CDS client: {exc}"))
    response = exc.response
    status = response.status_code
    body = _body(response)
    title = str(body.get("title") or response.reason or "")
    detail = str(body.get("detail") or "")
    if status in (408, 429) or status >= 500:
        return _Transient(f"HTTP {status} {title}".strip(), _retry_after(response))
    if status == 401:
        return AuthError(redact(
            f"{what}: the CDS rejected the API key ({status} {title}: {detail}). Check the personal "
            f"access token in the Airflow connection 'era5_cds' (password), CDSAPI_KEY or ~/.cdsapirc "
            f"against the one shown on {PROFILE_PAGE}"))
    if status == 403 and "licen" in (title + detail).lower():
        licences = _licences(detail)
        named = ", ".join(f"'{lid}' (revision {rev})" for lid, rev in licences) or "the dataset's licence"
        return LicenceError(redact(
            f"{what}: the licence {named} of {DATASET} has not been accepted for this CDS account. "
            f"Log in to the CDS with the account of this key, open "
            f"{LICENCE_PAGE.format(dataset=DATASET)} and accept it, then rerun"), licences)
    if status == 403 and "cost" in (title + detail).lower():
        estimate, limit = cost() if cost is not None else (None, math.nan)
        ours = (f"Our estimate for it is {estimate}, against a configured limit of {limit:,.0f}: the "
                f"service's limit is lower. Lower ERA5_CDS_COST_LIMIT below {estimate.value:,.0f} so the "
                "month is split into smaller requests") if estimate is not None else (
                "Lower ERA5_CDS_COST_LIMIT so the month is split into smaller requests")
        return CostLimitError(redact(
            f"{what}: the CDS refused the request as too large ({title}: {detail}). {ours}"),
            estimate.value if estimate is not None else math.nan, limit)
    if status == 404 and where in ("job", "results") and "expired" in (title + detail).lower():
        return _ResultsExpired(f"{title}: {detail}".strip(": "))
    if status == 404 and where == "job":
        return _JobLost(f"{title}: {detail}".strip(": "))
    if status == 404 and where == "asset":
        return _ResultsExpired("the asset is no longer in the CDS cache")
    if status == 400 and where == "results" and body.get("traceback") is not None and job_failed:
        return job_failed(f"{title}\n{body.get('traceback')}")
    return RequestRefused(redact(f"{what}: the CDS answered {status} {title}: {detail or body}"))


# -------------------------------------------------------------------------------------------------
# The fetcher


class Fetcher:
    """One month's fetch; :meth:`step` advances it without waiting, :meth:`run` sees it through."""

    def __init__(self, request: MonthRequest, staging_root: Path, credentials: Credentials, *,
                 store: JobStore | None = None, options: FetchOptions | None = None) -> None:
        self.request = request
        self.folder = request.folder(staging_root)
        self.credentials = credentials
        self.store: JobStore = store if store is not None else MemoryJobStore()
        self.options = options if options is not None else FetchOptions.from_env()
        self.parts = plan(request, self.options.cost_limit)
        self._resolved: tuple[str, str] | None = None
        self._api: _Api | None = None
        self._lock = threading.Lock()
        self.submissions = 0

    # -- plumbing ---------------------------------------------------------------------------------

    @property
    def api_url(self) -> str:
        return self._creds()[0]

    def _creds(self) -> tuple[str, str]:
        if self._resolved is None:
            self._resolved = self.credentials.resolve()
        return self._resolved

    def _redact(self, text: str) -> str:
        key = self._resolved[1] if self._resolved else self.credentials.key
        return text.replace(key, "***") if key else text

    def _new_api(self) -> _Api:
        url, key = self._creds()
        return _Api(url, key, self.options, self._redact)

    @property
    def api(self) -> _Api:
        if self._api is None:
            self._api = self._new_api()
        return self._api

    def close(self) -> None:
        if self._api is not None:
            self._api.close()
            self._api = None

    def _limit(self, cost: costing.Cost) -> float:
        return self.options.cost_limit if self.options.cost_limit is not None else cost.limit()

    def _classify(self, exc: Exception, what: str, where: str, part: RequestPart | None = None,
                  job_id: str | None = None) -> Exception:
        def cost() -> tuple[costing.Cost, float]:
            c = part.cost() if part is not None else self.request.cost()
            return c, self._limit(c)

        return _classify(exc, what, where, self._redact, cost=cost,
                         job_failed=lambda reason: self._job_failed(job_id, part, reason))

    def _job_failed(self, job_id: str | None, part: RequestPart | None, reason: str) -> JobFailedError:
        where = part.label if part is not None else str(self.request.month)
        lines = [line for line in reason.strip().splitlines() if line.strip()]
        # The service's own words; MARS puts the useful line last ("mars - ERROR - ...").
        gist = "\n  ".join(lines[-6:]) if lines else "no reason given"
        return JobFailedError(self._redact(
            f"the CDS job {job_id} for {where} failed; the same request would fail again, so it is not "
            f"retried. The service said:\n  {gist}"), job_id, reason)

    def _retry(self, what: str, where: str, fn: Callable[[], T], *, part: RequestPart | None = None,
               job_id: str | None = None, before_retry: Callable[[], T | None] | None = None) -> T:
        """``fn()``; faults that may heal are retried with backoff, the rest raised as they are."""
        began = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            try:
                return fn()
            except Exception as exc:
                err = self._classify(exc, what, where, part, job_id)
                if not isinstance(err, _Transient):
                    raise err from None
                if attempt >= self.options.retries:
                    raise RetriesExhausted(self._redact(
                        f"{what}: the CDS still failed after {attempt} attempts over "
                        f"{time.monotonic() - began:.1f} s (last: {err}). The service may be overloaded or "
                        "down; jobs already submitted are recorded and a rerun re-attaches to them")) from None
                delay = self.options.backoff(attempt, err.hint)
                log.warning("%s: %s; attempt %d of %d, next in %.2f s%s", what, err, attempt,
                            self.options.retries, delay, " (the service's Retry-After)" if err.hint is not None else "")
                time.sleep(delay)
                if before_retry is not None:
                    found = before_retry()
                    if found is not None:
                        return found

    # -- the staged parts -------------------------------------------------------------------------

    def _staged_part(self, part: RequestPart) -> _PartFile | None:
        marker = self.folder / f"{part.stem}.json"
        try:
            meta = json.loads(marker.read_text())
        except (OSError, ValueError):
            return None
        if meta.get("request_hash") != part.hash:
            return None  # a part of another split: same name, different request
        path = self.folder / str(meta.get("file", ""))
        if not path.is_file() or path.stat().st_size != meta.get("bytes"):
            return None
        return _PartFile(path, int(meta["bytes"]), str(meta.get("md5", "")), part.hash, meta.get("job_id"))

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
            if isinstance(outcome, _PartFile):
                done[part.index] = outcome
            elif isinstance(outcome, (_ResultsExpired, _JobLost)):
                retry_soon = True  # the next pass submits it again at once
        if len(done) == len(self.parts):
            return self._finish(done, began)
        message = (f"{self.request.month}: {len(done)} of {len(self.parts)} parts staged, {len(waiting)} CDS "
                   f"job(s) queued or running" + (f", {blocked} waiting for a free job slot" if blocked else ""))
        retry_after = 0.0 if retry_soon else self.options.poll_base
        raise FetchPending(self.api_url, waiting, len(done), len(self.parts), retry_after, message)

    def run(self) -> Download:
        """Passes until the month is staged, sleeping between them (1 s, growing 1.5x to ``poll_cap``)."""
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
            month=self.request.month.start.date(), part=part.index, parts=part.count, dataset=DATASET,
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
        except (_JobLost, _ResultsExpired) as gone:
            log.warning("%s: job %s is gone (%s); submitting again", part.label, record.job_id, gone)
            record.state, record.error = ("expired" if isinstance(gone, _ResultsExpired) else "lost"), str(gone)
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
                remote = self._retry(
                    f"submitting {part.label}", "submit", lambda: self.api.submit(part.cds_request()), part=part,
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
        want = _canonical(part.cds_request())
        horizon = (since or datetime.now(UTC)) - timedelta(minutes=2)  # the CDS's clock is not ours
        try:
            listing = self.api.client.get_jobs(limit=100, sortby="-created")
            for job in listing._json_dict.get("jobs", []):
                created = _utc(job.get("created"))
                if created is not None and created < horizon:
                    break  # newest first: the rest are older still
                if job.get("status") in ("failed", "rejected", "dismissed", "deleted"):
                    continue
                remote = self.api.remote(str(job["jobID"]))
                ids = remote.json.get("metadata", {}).get("request", {}).get("ids")
                if isinstance(ids, dict) and _canonical(ids) == want:
                    log.warning("%s: the CDS has job %s for this request from an unanswered submission; "
                                "adopting it instead of submitting again", part.label, remote.request_id)
                    return remote
        except Exception as exc:  # a best effort: a failed look only means one more submission
            log.warning("%s: could not list recent CDS jobs (%s)", part.label, self._classify(exc, "", "jobs"))
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
        created, started, finished = (_utc(info.get(k)) for k in ("created", "started", "finished"))
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
            raise _JobLost(f"the CDS reports it {status}")
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
            err = self._classify(exc, "", "results", part, job_id)
            if isinstance(err, JobFailedError):
                return err.reason
            return str(err)
        return "the CDS reports the job failed but gave no reason"

    # -- downloads --------------------------------------------------------------------------------

    def _download_all(self, ready: list[tuple[RequestPart, JobRecord]]
                      ) -> list[tuple[RequestPart, _PartFile | Exception]]:
        if not ready:
            return []
        self.folder.mkdir(parents=True, exist_ok=True)
        if len(ready) == 1 or self.options.max_parallel == 1:
            outcomes = [(part, self._download_guarded(part, record, self.api)) for part, record in ready]
        else:
            outcomes = self._download_threads(ready)
        # Every part got its chance (and its verified file kept) before a failure is raised.
        for _, outcome in outcomes:
            if isinstance(outcome, FetchError):
                raise outcome
        return outcomes

    def _download_threads(self, ready: list[tuple[RequestPart, JobRecord]]
                          ) -> list[tuple[RequestPart, _PartFile | Exception]]:

        def one(item: tuple[RequestPart, JobRecord]) -> tuple[RequestPart, _PartFile | Exception]:
            api = self._new_api()  # requests sessions are not shared between threads
            try:
                return item[0], self._download_guarded(item[0], item[1], api)
            finally:
                api.close()

        with ThreadPoolExecutor(max_workers=min(self.options.max_parallel, len(ready)),
                                thread_name_prefix="cds-download") as pool:
            outcomes = list(pool.map(one, ready))
        return outcomes

    def _download_guarded(self, part: RequestPart, record: JobRecord, api: _Api) -> _PartFile | Exception:
        try:
            return self._download(part, record, api)
        except (_ResultsExpired, _JobLost) as gone:
            log.warning("%s: the results of job %s expired (%s); it will be submitted again",
                        part.label, record.job_id, gone)
            record.state, record.error = "expired", str(gone)
            self.store.put(record)
            return gone
        except _Busy as busy:
            return busy
        except FetchError as exc:
            return exc

    def _download(self, part: RequestPart, record: JobRecord, api: _Api) -> _PartFile:
        job_id = str(record.job_id)
        what = f"downloading CDS job {job_id} ({part.label})"
        remote = self._retry(what, "job", lambda: api.remote(job_id), part=part, job_id=job_id)
        results = self._retry(what, "results", lambda: remote.get_results(), part=part, job_id=job_id)
        url, size = str(results.location), int(results.content_length)
        checksum = results.asset.get("file:checksum")
        partial = self.folder / f".{part.stem}.{job_id}.partial"
        began = time.perf_counter()
        self._retry(what, "asset", lambda: self._transfer(api, url, size, checksum, partial), part=part,
                    job_id=job_id)
        seconds = time.perf_counter() - began
        kind = _sniff(partial) if size > 0 else None
        if kind is None:
            head = partial.read_bytes()[:16]
            partial.unlink(missing_ok=True)
            why = "an empty file" if size == 0 else f"{size:,} bytes that are neither NetCDF nor ZIP ({head!r}...)"
            record.state, record.error = "failed", f"bad product: {why}"
            self.store.put(record)
            raise BadAssetError(self._redact(
                f"{what}: the CDS delivered {why}; nothing was staged. The job is marked failed so the next "
                "run submits the request again; if the CDS keeps serving the same product from its cache, "
                "report it to the CDS support with the job id"))
        final = self.folder / f"{part.stem}.{kind}"
        md5 = checksum if isinstance(checksum, str) and checksum else file_md5(partial)
        os.replace(partial, final)
        staged = _PartFile(final, size, md5, part.hash, job_id)
        write_json(self.folder / f"{part.stem}.json", staged.entry())
        record.state, record.downloaded_at, record.download_seconds = "downloaded", datetime.now(UTC), seconds
        record.bytes, record.checksum, record.file = size, md5, str(final)
        self.store.put(record)
        log.info("%s: %s bytes in %.2f s from job %s", part.label, f"{size:,}", seconds, job_id)
        return staged

    def _transfer(self, api: _Api, url: str, size: int, checksum: Any, partial: Path) -> None:
        """Fill ``partial`` up to ``size`` bytes (resuming with Range), then check it against ``checksum``."""
        with open(partial, "a+b") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise _Busy(f"{partial.name} is being downloaded by another process") from None
            have = fh.seek(0, os.SEEK_END)
            if have > size:
                fh.truncate(0)
                have = 0
            if have < size:
                headers = {"Range": f"bytes={have}-"} if have else {}
                with api.session.get(url, stream=True, headers=headers, timeout=self.options.http_timeout) as r:
                    if r.status_code == 416:
                        fh.truncate(0)
                        raise _Transient("the asset is shorter than announced (416); starting over")
                    r.raise_for_status()
                    if r.status_code != 206:
                        fh.truncate(0)
                    fh.seek(0, os.SEEK_END)
                    # 64 KiB: what a cut connection loses is the unfinished chunk, so keep chunks modest.
                    for chunk in r.iter_content(chunk_size=1 << 16):
                        fh.write(chunk)
                fh.flush()
                have = fh.seek(0, os.SEEK_END)
            if have != size:
                raise _Transient(f"download incomplete: {have:,} of {size:,} bytes")
            os.fsync(fh.fileno())
        if isinstance(checksum, str) and len(checksum) == 32 and file_md5(partial) != checksum.lower():
            partial.unlink(missing_ok=True)
            raise _Transient("the download does not match the asset's checksum; downloading it again")

    # -- the end ----------------------------------------------------------------------------------

    def _finish(self, done: dict[int, _PartFile], began: float) -> Download:
        files = [done[p.index] for p in self.parts]
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
            download_seconds=sum(r.download_seconds or 0.0 for r in records),
        )


class JobWatcher:
    """One look at a few CDS jobs at a time: what the Airflow trigger polls with, in a thread.

    No retries here: the caller owns the waiting (the trigger sleeps on its event loop, not in a
    worker). ``look`` returns each job's status ("lost" for one the CDS no longer knows) or raises
    RetryLater for a fault that may heal, or a FetchError that will not.
    """

    def __init__(self, credentials: Credentials, options: FetchOptions | None = None) -> None:
        self.credentials = credentials
        self.options = options if options is not None else FetchOptions()
        self._key: str | None = None
        self._api: _Api | None = None

    def _redact(self, text: str) -> str:
        key = self._key or self.credentials.key
        return text.replace(key, "***") if key else text

    def look(self, job_ids: list[str]) -> dict[str, str]:
        if self._api is None:
            url, self._key = self.credentials.resolve()
            try:
                self._api = _Api(url, self._key, self.options, self._redact)
            except Exception as exc:
                raise self._raise(exc, "connecting to the CDS") from None
        states: dict[str, str] = {}
        for job_id in job_ids:
            try:
                states[job_id] = str(self._api.remote(job_id).json.get("status"))
            except Exception as exc:
                err = _classify(exc, f"checking CDS job {job_id}", "job", self._redact)
                if isinstance(err, (_JobLost, _ResultsExpired)):
                    states[job_id] = "lost"
                    continue
                raise self._raise(err, f"checking CDS job {job_id}") from None
        return states

    def _raise(self, exc: Exception, what: str) -> Exception:
        err = _classify(exc, what, "job", self._redact)
        if isinstance(err, _Transient):
            return RetryLater(self._redact(f"{what}: {err}"), err.hint)
        if isinstance(err, FetchError):
            return err
        return FetchError(self._redact(f"{what}: {err}"))

    def close(self) -> None:
        if self._api is not None:
            self._api.close()
            self._api = None


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


__all__ = ["DATASET", "MANIFEST", "AuthError", "BadAssetError", "CostLimitError", "Credentials", "Download",
           "FetchError", "FetchOptions", "FetchPending", "Fetcher", "JobFailedError", "JobWatcher", "LicenceError",
           "MonthRequest", "RequestPart", "RequestRefused", "RetriesExhausted", "RetryLater", "fetch", "plan",
           "staged_download"]
