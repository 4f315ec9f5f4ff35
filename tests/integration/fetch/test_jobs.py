"""The record of CDS jobs (fetch.jobs): PgJobStore on the test server's era5_cds_jobs table and the
in-memory store, held to the same contract: a record read back as written, updated in place, counted
against the cap while queued or running, finished jobs superseded, and the submission slot exclusive."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, date, datetime

import pytest

from era5etl.db import ensure_schema
from era5etl.fetch.jobs import JobRecord, JobStore, MemoryJobStore, PgJobStore

pytestmark = pytest.mark.integration


@pytest.fixture(params=["pg", "memory"])
def store(request: pytest.FixtureRequest, db_url: str) -> JobStore:
    if request.param == "memory":
        return MemoryJobStore()
    ensure_schema(db_url)
    return PgJobStore(db_url)


def record(api_url: str, state: str, part: int = 0) -> JobRecord:
    return JobRecord(api_url=api_url, request_hash=f"{uuid.uuid4().hex[:16]}", month_hash="m" * 16,
                     month=date(2024, 3, 1), part=part, parts=2, dataset="reanalysis-era5-single-levels",
                     request={"year": "2024", "month": "03", "variable": ["2m_temperature"]}, state=state)


def test_a_record_reads_back_as_written_and_updates_in_place(store: JobStore) -> None:
    api = f"http://cds-{uuid.uuid4().hex[:6]}/api"
    rec = record(api, "accepted")
    rec.job_id, rec.cost, rec.previous_job_ids = "job-1", 12.5, ["job-0"]
    rec.submitted_at = datetime(2024, 4, 1, 12, tzinfo=UTC)
    store.put(rec)
    got = store.get(api, rec.request_hash)
    assert got is not None and got.updated_at is not None
    assert (got.job_id, got.cost, got.previous_job_ids, got.request, got.submitted_at) == \
        ("job-1", 12.5, ["job-0"], rec.request, rec.submitted_at)
    rec.state, rec.bytes = "downloaded", 4096
    store.put(rec)
    again = store.get(api, rec.request_hash)
    assert again is not None and (again.state, again.bytes, again.job_id) == ("downloaded", 4096, "job-1")
    assert store.get(api, "0" * 16) is None


def test_queued_and_running_jobs_count_against_the_cap(store: JobStore) -> None:
    api = f"http://cds-{uuid.uuid4().hex[:6]}/api"
    for state in ("submitting", "accepted", "running", "successful", "failed", "downloaded"):
        store.put(record(api, state))
    assert store.active(api) == 3
    assert store.active(f"{api}/other") == 0
    with store.submission_slot(api, cap=4) as free:
        assert free
    with store.submission_slot(api, cap=3) as free:
        assert not free


def test_finished_jobs_are_superseded_and_running_ones_left(db_url: str) -> None:
    ensure_schema(db_url)
    store = PgJobStore(db_url)
    api = f"http://cds-{uuid.uuid4().hex[:6]}/api"
    done, running = record(api, "downloaded"), record(api, "running")
    store.put(done)
    store.put(running)
    assert store.supersede([done.request_hash, running.request_hash], "final ERA5 replaces ERA5T") == 1
    after = store.get(api, done.request_hash)
    assert after is not None and (after.state, after.error) == ("expired", "final ERA5 replaces ERA5T")
    still = store.get(api, running.request_hash)
    assert still is not None and still.state == "running"


def test_the_submission_slot_is_held_by_one_process_at_a_time(db_url: str) -> None:
    ensure_schema(db_url)
    api = f"http://cds-{uuid.uuid4().hex[:6]}/api"
    inside = threading.Event()
    order: list[str] = []

    def second() -> None:
        inside.wait(5)
        with PgJobStore(db_url).submission_slot(api, cap=1):
            order.append("second")

    other = threading.Thread(target=second)
    other.start()
    with PgJobStore(db_url).submission_slot(api, cap=1):
        inside.set()
        other.join(0.5)  # the other session waits on the lock meanwhile
        order.append("first")
    other.join(5)
    assert order == ["first", "second"]
