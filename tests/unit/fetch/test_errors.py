"""The fetch's errors (fetch.errors) on the error tree: each a Failure (exit 1), which ones a retry may
heal, the service's Retry-After carried, and FetchPending passing ``except Exception`` untouched."""

from __future__ import annotations

import pytest

from era5etl.core.errors import BadInput, Failure
from era5etl.fetch.errors import (
    AuthError,
    BadAssetError,
    Busy,
    CostLimitError,
    FetchError,
    FetchPending,
    JobFailedError,
    JobLost,
    LicenceError,
    RequestRefused,
    ResultsExpired,
    RetriesExhausted,
    RetryLater,
)

FINAL = [AuthError, LicenceError, CostLimitError, JobFailedError, BadAssetError, RequestRefused]


@pytest.mark.parametrize("kind", [*FINAL, RetryLater, RetriesExhausted])
def test_every_fetch_error_is_a_failure_and_a_runtime_error(kind: type[FetchError]) -> None:
    assert issubclass(kind, FetchError) and issubclass(kind, Failure) and issubclass(kind, RuntimeError)
    assert not issubclass(kind, BadInput)


def test_only_what_may_heal_is_retryable() -> None:
    assert [k.__name__ for k in FINAL if k.retryable] == []
    assert RetryLater.retryable and RetriesExhausted.retryable


def test_retry_later_carries_the_services_hint() -> None:
    assert RetryLater("429 too many requests", hint=30.0).hint == 30.0
    assert RetryLater("502").hint is None


def test_resubmit_signals_are_failures_outside_the_fetch_errors() -> None:
    for kind in (JobLost, ResultsExpired, Busy):
        assert issubclass(kind, Failure) and not issubclass(kind, FetchError)


def test_pending_is_not_caught_as_an_exception() -> None:
    pending = FetchPending("http://cds/api", ["job-1"], 1, 3, 30.0, "2 of 3 parts queued")
    with pytest.raises(FetchPending):
        try:
            raise pending
        except Exception:  # what step bookkeeping catches to mark a failure
            pytest.fail("FetchPending was caught as an Exception")
    assert (pending.job_ids, pending.parts_done, pending.parts, pending.retry_after) == (["job-1"], 1, 3, 30.0)
