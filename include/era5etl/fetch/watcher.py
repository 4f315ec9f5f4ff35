"""JobWatcher: one look at a few CDS jobs, without retries, for the Airflow trigger to poll with."""

from __future__ import annotations

from era5etl.fetch.api import CdsApi, classify
from era5etl.fetch.credentials import Credentials
from era5etl.fetch.errors import FetchError, JobLost, ResultsExpired, RetryLater, Transient
from era5etl.fetch.options import FetchOptions


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
        self._api: CdsApi | None = None

    def _redact(self, text: str) -> str:
        key = self._key or self.credentials.key
        return text.replace(key, "***") if key else text

    def look(self, job_ids: list[str]) -> dict[str, str]:
        if self._api is None:
            url, self._key = self.credentials.resolve()
            try:
                self._api = CdsApi(url, self._key, self.options, self._redact)
            except Exception as exc:
                raise self._raise(exc, "connecting to the CDS") from None
        states: dict[str, str] = {}
        for job_id in job_ids:
            try:
                states[job_id] = str(self._api.remote(job_id).json.get("status"))
            except Exception as exc:
                err = classify(exc, f"checking CDS job {job_id}", "job", self._redact)
                if isinstance(err, (JobLost, ResultsExpired)):
                    states[job_id] = "lost"
                    continue
                raise self._raise(err, f"checking CDS job {job_id}") from None
        return states

    def _raise(self, exc: Exception, what: str) -> Exception:
        err = classify(exc, what, "job", self._redact)
        if isinstance(err, Transient):
            return RetryLater(self._redact(f"{what}: {err}"), err.hint)
        if isinstance(err, FetchError):
            return err
        return FetchError(self._redact(f"{what}: {err}"))

    def close(self) -> None:
        if self._api is not None:
            self._api.close()
            self._api = None


__all__ = ["JobWatcher"]
