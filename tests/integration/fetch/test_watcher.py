"""One look at CDS jobs (fetch.watcher), as the Airflow trigger polls: against the local CDS through the
real cdsapi client, a finished job's status, a job the CDS does not know as "lost", a bad key refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import VARIABLES
from era5etl.db import ensure_schema
from era5etl.fetch import AuthError, Credentials, FetchOptions, MonthRequest, fetch
from era5etl.fetch.jobs import PgJobStore
from era5etl.fetch.watcher import JobWatcher
from localcds.server import LocalCDS

pytestmark = pytest.mark.integration

FAST = FetchOptions(retries=2, backoff_base=0.05, backoff_cap=0.2, poll_base=0.05, poll_cap=0.2,
                    wait_timeout=60, http_timeout=10)


def test_a_finished_job_and_an_unknown_one(cds: LocalCDS, db_url: str, tmp_path: Path) -> None:
    ensure_schema(db_url)
    store = PgJobStore(db_url)
    request = MonthRequest(Month.parse("2021-02"), Area.parse("46/7/46/7"), Grid(), VARIABLES)
    fetch(request, tmp_path, Credentials(cds.url, cds.key), store=store, options=FAST)
    job = store.get(cds.url, request.hash)
    assert job is not None and job.job_id

    watcher = JobWatcher(Credentials(cds.url, cds.key), FAST)
    try:
        states = watcher.look([job.job_id, "00000000-0000-0000-0000-000000000000"])
    finally:
        watcher.close()
    assert states == {job.job_id: "successful", "00000000-0000-0000-0000-000000000000": "lost"}


def test_a_key_the_cds_refuses_is_an_auth_error_without_the_key(cds: LocalCDS) -> None:
    watcher = JobWatcher(Credentials(cds.url, "not-the-key"), FAST)
    with pytest.raises(AuthError) as err:
        watcher.look(["00000000-0000-0000-0000-000000000000"])
    assert "not-the-key" not in str(err.value)
    watcher.close()
