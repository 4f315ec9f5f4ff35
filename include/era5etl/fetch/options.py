"""FetchOptions: how hard the fetch tries and how long it waits (the ERA5_CDS_* settings)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from era5etl import settings


@dataclass(frozen=True)
class FetchOptions:
    """How hard to try and how long to wait; every figure has an ERA5_CDS_* environment variable."""

    cost_limit: float | None = None  # ERA5_CDS_COST_LIMIT; None: cost.DEFAULT_LIMITS for the format
    max_parallel: int = 4  # ERA5_CDS_MAX_PARALLEL: jobs queued/running at once per service URL
    retries: int = 5  # ERA5_CDS_RETRIES: attempts per call for faults that may heal
    backoff_base: float = 2.0  # ERA5_CDS_BACKOFF_BASE: first pause; doubles per attempt, with jitter
    backoff_cap: float = 60.0  # ERA5_CDS_BACKOFF_CAP
    max_hint: float = 300.0  # ERA5_CDS_MAX_RETRY_AFTER: longest Retry-After honoured within a call
    # ERA5_CDS_POLL_BASE: first wait on a queued job, growing 1.5x. A quarter second, not the stock client's
    # 1 s: a job the CDS finishes at once (a small request) is downloaded 0.75 s sooner, for three more
    # looks in a job's first 8 s (a backfill of small months waited 1 s a month, docs/benchmarks.md).
    poll_base: float = 0.25
    poll_cap: float = 60.0  # ERA5_CDS_POLL_CAP: waits grow 1.5x up to this
    wait_timeout: float = 12 * 3600.0  # ERA5_CDS_WAIT_TIMEOUT: the CLI's patience with the queue
    http_timeout: float = 60.0  # ERA5_CDS_HTTP_TIMEOUT: per request

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> FetchOptions:
        """The ERA5_CDS_* settings (``era5etl.settings``; ``env`` over the environment)."""
        s = settings.load(env)
        return cls(cost_limit=s.cds_cost_limit, max_parallel=s.cds_max_parallel, retries=s.cds_retries,
                   backoff_base=s.cds_backoff_base, backoff_cap=s.cds_backoff_cap, max_hint=s.cds_max_retry_after,
                   poll_base=s.cds_poll_base, poll_cap=s.cds_poll_cap, wait_timeout=s.cds_wait_timeout,
                   http_timeout=s.cds_http_timeout)

    def backoff(self, attempt: int, hint: float | None = None) -> float:
        """Pause before attempt ``attempt + 1``: the service's hint if it gave one, else 2^n with jitter."""
        if hint is not None:
            return min(max(hint, 0.0), self.max_hint)
        ceiling = min(self.backoff_cap, self.backoff_base * 2.0 ** (attempt - 1))
        # Jitter in the upper half: parallel tasks that failed together do not retry in step.
        return ceiling * random.uniform(0.5, 1.0)


__all__ = ["FetchOptions"]
