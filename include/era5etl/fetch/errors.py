"""The fetch's exceptions: the FetchErrors callers see, FetchPending, and the internal fault signals."""

from __future__ import annotations

from era5etl.core.errors import Failure, Transient as Transient


class FetchError(Failure, RuntimeError):
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


class JobLost(Failure):
    """The CDS does not know the job (deleted, dismissed, another service): submit again."""


class ResultsExpired(Failure):
    """The job succeeded but its results are gone from the cache: submit again."""


class Busy(Failure):
    """Another process is downloading this part right now."""

__all__ = ["AuthError", "BadAssetError", "CostLimitError", "FetchError", "FetchPending", "JobFailedError",
           "LicenceError", "RequestRefused", "RetriesExhausted", "RetryLater"]
