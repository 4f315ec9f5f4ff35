"""One month's fetch session: credentials resolved once, the key redacted, every CDS call classified and retried.

:class:`CdsSession` is the base of :class:`~era5etl.fetch.fetcher.Fetcher`: its state (request, parts,
staging folder, job store, options) and the plumbing every call to the CDS goes through.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from era5etl.fetch import cost as costing
from era5etl.fetch.api import CdsApi, classify
from era5etl.fetch.credentials import Credentials
from era5etl.fetch.errors import JobFailedError, RetriesExhausted, Transient
from era5etl.fetch.jobs import JobStore, MemoryJobStore
from era5etl.fetch.options import FetchOptions
from era5etl.fetch.request import MonthRequest, RequestPart, plan

log = logging.getLogger(__name__)

T = TypeVar("T")


class CdsSession:
    """A month's fetch: its state, and the client and retries its calls to the CDS go through."""

    def __init__(self, request: MonthRequest, staging_root: Path, credentials: Credentials, *,
                 store: JobStore | None = None, options: FetchOptions | None = None) -> None:
        self.request = request
        self.folder = request.folder(staging_root)
        self.credentials = credentials
        self.store: JobStore = store if store is not None else MemoryJobStore()
        self.options = options if options is not None else FetchOptions.from_env()
        self.parts = plan(request, self.options.cost_limit)
        self._resolved: tuple[str, str] | None = None
        self._api: CdsApi | None = None
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

    def _new_api(self) -> CdsApi:
        url, key = self._creds()
        return CdsApi(url, key, self.options, self._redact)

    @property
    def api(self) -> CdsApi:
        if self._api is None:
            self._api = self._new_api()
        return self._api

    def close(self) -> None:
        if self._api is not None:
            self._api.close()
            self._api = None

    def _limit(self, cost: costing.Cost) -> float:
        return self.options.cost_limit if self.options.cost_limit is not None else cost.limit()

    def classify(self, exc: Exception, what: str, where: str, part: RequestPart | None = None,
                  job_id: str | None = None) -> Exception:
        def cost() -> tuple[costing.Cost, float]:
            c = part.cost() if part is not None else self.request.cost()
            return c, self._limit(c)

        return classify(exc, what, where, self._redact, cost=cost,
                         job_failed=lambda reason: self._job_failed(job_id, part, reason),
                         collection=self.request.dataset.collection)

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
                err = self.classify(exc, what, where, part, job_id)
                if not isinstance(err, Transient):
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
