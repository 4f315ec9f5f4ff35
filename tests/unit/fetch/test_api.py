"""How a CDS answer is told apart (fetch.api.classify, retry_after_seconds): requests' own Response and
HTTPError objects, built with the status, headers and JSON body the CDS sends, mapped to a fault worth
another attempt, a lost job or expired results to submit again, or a final error naming what to do."""

from __future__ import annotations

import email.utils
import json
from datetime import UTC, datetime, timedelta

import pytest
import requests

from era5etl.core.errors import Transient
from era5etl.fetch.api import classify, retry_after_seconds
from era5etl.fetch.errors import (
    AuthError,
    FetchError,
    JobLost,
    LicenceError,
    RequestRefused,
    ResultsExpired,
)

KEY = "secret-token-123"


def redact(text: str) -> str:
    return text.replace(KEY, "***")


def http_error(status: int, body: dict[str, object] | None = None, headers: dict[str, str] | None = None
               ) -> requests.HTTPError:
    response = requests.Response()
    response.status_code = status
    response.reason = "Reason"
    response.headers.update(headers or {})
    response._content = json.dumps(body).encode() if body is not None else b"<html>busy</html>"
    return requests.HTTPError(f"{status}", response=response)


def test_retry_after_in_seconds_or_as_a_date() -> None:
    assert retry_after_seconds(http_error(429, headers={"Retry-After": "7"}).response) == 7.0
    soon = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    got = retry_after_seconds(http_error(503, headers={"Retry-After": soon}).response)
    assert got is not None and 100 < got <= 120
    assert retry_after_seconds(http_error(503).response) is None
    assert retry_after_seconds(http_error(503, headers={"Retry-After": "soon"}).response) is None


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503])
def test_busy_and_server_faults_are_worth_another_attempt(status: int) -> None:
    err = classify(http_error(status, headers={"Retry-After": "3"}), "submitting", "submit", redact)
    assert isinstance(err, Transient) and err.hint == 3.0


def test_connection_problems_are_transient_and_other_errors_final() -> None:
    assert isinstance(classify(requests.ConnectionError("reset"), "downloading", "asset", redact), Transient)
    assert isinstance(classify(requests.Timeout("slow"), "downloading", "asset", redact), Transient)
    err = classify(RuntimeError(f"odd {KEY}"), "submitting", "submit", redact)
    assert type(err) is FetchError and KEY not in str(err)


def test_a_rejected_key_says_where_to_fix_it_without_the_key() -> None:
    err = classify(http_error(401, {"title": "Unauthorized", "detail": f"key {KEY} invalid"}), "submitting",
                   "submit", redact)
    assert isinstance(err, AuthError) and "era5_cds" in str(err) and KEY not in str(err)


def test_a_licence_not_accepted_names_it() -> None:
    detail = "required licences not accepted: [{'id': 'licence-to-use-copernicus-products', 'revision': 12}]"
    err = classify(http_error(403, {"title": "Forbidden: licences", "detail": detail}), "submitting", "submit",
                   redact, collection="reanalysis-era5-land")
    assert isinstance(err, LicenceError)
    assert "'licence-to-use-copernicus-products' (revision 12)" in str(err) and "reanalysis-era5-land" in str(err)


def test_a_404_is_a_lost_job_or_expired_results_by_what_was_asked() -> None:
    assert isinstance(classify(http_error(404, {"title": "not found"}), "checking", "job", redact), JobLost)
    expired = http_error(404, {"title": "Results expired", "detail": "results expired"})
    assert isinstance(classify(expired, "checking", "results", redact), ResultsExpired)
    assert isinstance(classify(http_error(404), "downloading", "asset", redact), ResultsExpired)


def test_anything_else_is_refused_with_the_services_words() -> None:
    err = classify(http_error(400, {"title": "Bad request", "detail": "invalid area"}), "submitting", "submit",
                   redact)
    assert isinstance(err, RequestRefused) and "400 Bad request: invalid area" in str(err)
    same = JobLost("gone")
    assert classify(same, "checking", "job", redact) is same  # already classified: passed through
