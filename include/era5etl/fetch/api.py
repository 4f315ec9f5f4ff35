"""The wire adapter: the cdsapi client with its own retries off, and every answer it gives classified.

:func:`classify` turns what the client raised into a permanent :class:`FetchError` with a message saying
what to do, or into one of the internal signals (``Transient``, ``JobLost``, ...) the callers act on.
"""

# Imports inside functions: cdsapi, requests and ecmwf-datastores load only when a request goes to the
# CDS.

from __future__ import annotations

import ast
import email.utils
import logging
import math
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from era5etl.fetch import cost as costing
from era5etl.fetch.credentials import PROFILE_PAGE
from era5etl.fetch.errors import (
    AuthError,
    Busy,
    CostLimitError,
    FetchError,
    JobFailedError,
    JobLost,
    LicenceError,
    RequestRefused,
    ResultsExpired,
    Transient,
)
from era5etl.fetch.options import FetchOptions
from era5etl.fetch.request import DATASET

if TYPE_CHECKING:
    import requests

log = logging.getLogger(__name__)

LICENCE_PAGE = "https://cds.climate.copernicus.eu/datasets/{dataset}?tab=download#manage-licences"


class CdsApi:
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

    def submit(self, request: dict[str, Any], collection: str = DATASET) -> Any:
        remote = self.legacy.retrieve(collection, request)
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


def retry_after_seconds(response: requests.Response) -> float | None:
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
    start = detail.find("[")
    if start < 0:
        return []
    try:
        items = ast.literal_eval(detail[start:detail.rfind("]") + 1])
    except (ValueError, SyntaxError):
        return []
    return [(str(i.get("id")), int(i.get("revision", 0))) for i in items if isinstance(i, dict)]


def classify(exc: Exception, what: str, where: str, redact: Callable[[str], str], *,
              cost: Callable[[], tuple[costing.Cost, float]] | None = None,
              job_failed: Callable[[str], JobFailedError] | None = None, collection: str = DATASET) -> Exception:
    """A permanent FetchError, or one of the internal signals (Transient, JobLost, ...).

    ``where`` says what was asked ("submit", "job", "results", "asset", "jobs"): a 404 means a lost
    job on one, expired results on another.
    """
    import requests
    from ecmwf.datastores.processing import ProcessingFailedError

    if isinstance(exc, (FetchError, Transient, JobLost, ResultsExpired, Busy)):
        return exc
    if isinstance(exc, ProcessingFailedError):
        return job_failed(str(exc)) if job_failed else FetchError(redact(f"{what}: {exc}"))
    if isinstance(exc, (requests.ConnectionError, requests.Timeout)):
        # ChunkedEncodingError (a cut transfer) is a ConnectionError for requests' purposes too.
        return Transient(f"connection problem ({type(exc).__name__})")
    if isinstance(exc, requests.exceptions.ChunkedEncodingError):
        return Transient("the transfer was cut")
    if not isinstance(exc, requests.HTTPError) or exc.response is None:
        return FetchError(redact(f"{what}: unexpected error from the CDS client: {exc}"))
    response = exc.response
    status = response.status_code
    body = _body(response)
    title = str(body.get("title") or response.reason or "")
    detail = str(body.get("detail") or "")
    if status in (408, 429) or status >= 500:
        return Transient(f"HTTP {status} {title}".strip(), retry_after_seconds(response))
    if status == 401:
        return AuthError(redact(
            f"{what}: the CDS rejected the API key ({status} {title}: {detail}). Check the personal "
            f"access token in the Airflow connection 'era5_cds' (password), CDSAPI_KEY or ~/.cdsapirc "
            f"against the one shown on {PROFILE_PAGE}"))
    if status == 403 and "licen" in (title + detail).lower():
        licences = _licences(detail)
        named = ", ".join(f"'{lid}' (revision {rev})" for lid, rev in licences) or "the dataset's licence"
        return LicenceError(redact(
            f"{what}: the licence {named} of {collection} has not been accepted for this CDS account. "
            f"Log in to the CDS with the account of this key, open "
            f"{LICENCE_PAGE.format(dataset=collection)} and accept it, then rerun"), licences)
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
        return ResultsExpired(f"{title}: {detail}".strip(": "))
    if status == 404 and where == "job":
        return JobLost(f"{title}: {detail}".strip(": "))
    if status == 404 and where == "asset":
        return ResultsExpired("the asset is no longer in the CDS cache")
    if status == 400 and where == "results" and body.get("traceback") is not None and job_failed:
        return job_failed(f"{title}\n{body.get('traceback')}")
    return RequestRefused(redact(f"{what}: the CDS answered {status} {title}: {detail or body}"))
