"""A month's fetch session (fetch.session): its parts planned against the configured cost limit, the
credentials resolved once, and every CDS answer classified in the month's terms: a failed job named
with the service's last words, a request too large with our estimate and limit, the key never shown.
No network: the answers are requests' and the CDS client's own exception objects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests
from ecmwf.datastores.processing import ProcessingFailedError

from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import VARIABLES
from era5etl.fetch import Credentials, FetchOptions, MonthRequest, plan
from era5etl.fetch.errors import CostLimitError, JobFailedError
from era5etl.fetch.session import CdsSession

KEY = "secret-token-123"
REQUEST = MonthRequest(Month(2024, 2), Area.parse("60/-10/35/30"), Grid(), VARIABLES)


def session(tmp_path: Path, **options: float) -> CdsSession:
    return CdsSession(REQUEST, tmp_path, Credentials("http://cds.local/api/", KEY),
                      options=FetchOptions(**options))


def test_the_parts_are_planned_against_the_configured_limit(tmp_path: Path) -> None:
    assert session(tmp_path).parts == plan(REQUEST, None)
    small = session(tmp_path, cost_limit=REQUEST.cost().value / 3)
    assert len(small.parts) > 1 and small.parts == plan(REQUEST, REQUEST.cost().value / 3)
    assert session(tmp_path).folder == REQUEST.folder(tmp_path)


def test_the_credentials_are_resolved_once(tmp_path: Path) -> None:
    s = session(tmp_path)
    assert s.api_url == "http://cds.local/api"
    assert s.api_url == "http://cds.local/api"


def test_a_failed_job_is_named_with_the_services_last_lines_and_not_the_key(tmp_path: Path) -> None:
    reason = f"Traceback ...\nkey={KEY}\nmars - ERROR - no data for 2024-02-30"
    err = session(tmp_path).classify(ProcessingFailedError(reason), "waiting", "job", job_id="job-9")
    assert isinstance(err, JobFailedError)
    message = str(err)
    assert "job-9" in message and "2024-02" in message and "mars - ERROR - no data" in message
    assert KEY not in message


def test_a_request_too_large_says_our_estimate_and_limit(tmp_path: Path) -> None:
    response = requests.Response()
    response.status_code = 403
    response._content = json.dumps({"title": "Cost limits exceeded", "detail": "Your request is too large"}).encode()
    err = session(tmp_path, cost_limit=1234.0).classify(requests.HTTPError(response=response), "submitting", "submit")
    assert isinstance(err, CostLimitError)
    assert "against a configured limit of 1,234" in str(err) and "ERA5_CDS_COST_LIMIT" in str(err)


@pytest.mark.parametrize("where", ["submit", "job"])
def test_an_unknown_client_error_is_final_and_redacted(tmp_path: Path, where: str) -> None:
    err = session(tmp_path).classify(RuntimeError(f"odd answer for {KEY}"), "asking", where)
    assert "***" in str(err) and KEY not in str(err)
