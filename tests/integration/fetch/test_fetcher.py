"""The fetcher (fetch.fetcher) against every fault the CDS can throw, through the real cdsapi client and the local CDS.

For each: the right outcome (healed after retry, or a failure naming the cause and what to do),
nothing partial staged, and no request submitted twice. Jobs are recorded in the real database.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import VARIABLES
from era5etl.db import connect
from era5etl.fetch import (
    MANIFEST,
    AuthError,
    BadAssetError,
    CostLimitError,
    Credentials,
    Download,
    FetchError,
    FetchOptions,
    JobFailedError,
    LicenceError,
    MonthRequest,
    RetriesExhausted,
    fetch,
    plan,
    staged_download,
)
from era5etl.fetch.jobs import PgJobStore
from era5etl.stage import open_download
from localcds.server import ERA5_LICENCE, LocalCDS

pytestmark = pytest.mark.integration

AREA = Area.parse("46/7/46/7")  # one grid point: a month is a few kB, every fault costs milliseconds
FAST = FetchOptions(retries=4, backoff_base=0.05, backoff_cap=0.2, poll_base=0.05, poll_cap=0.2,
                    wait_timeout=60, http_timeout=10)


@pytest.fixture(autouse=True)
def _reset(cds: LocalCDS) -> Iterator[None]:
    yield
    cds.clear_faults()
    cds.queue_seconds = 0.0
    cds.accepted_licences = {ERA5_LICENCE}
    cds.cost_limits = {"grib": 120_000.0, "netcdf": 60_000.0}


@pytest.fixture
def store(db_url: str) -> PgJobStore:
    from era5etl.db import ensure_schema

    ensure_schema(db_url)
    return PgJobStore(db_url)


def month(text: str, area: Area = AREA) -> MonthRequest:
    return MonthRequest(Month.parse(text), area, Grid(), VARIABLES)


def run(cds: LocalCDS, request: MonthRequest, staging: Path, store: PgJobStore, key: str | None = None,
        **options: Any) -> Download:
    return fetch(request, staging, Credentials(cds.url, key or cds.key), store=store,
                 options=replace(FAST, **options))


def of_month(request: MonthRequest, days: tuple[int, ...] | None = None) -> Callable[[dict[str, Any]], bool]:
    """A fault's ``match``: requests for this month (and, if given, starting on one of these days)."""
    def match(inputs: dict[str, Any]) -> bool:
        same = inputs.get("year") == [f"{request.month.year:04d}"] and inputs.get("month") == [
            f"{request.month.month:02d}"]
        return same and (days is None or int(inputs["day"][0]) in days)

    return match


def submitted(cds: LocalCDS, request: MonthRequest) -> int:
    """How many jobs the CDS created for this month (all parts)."""
    return sum(1 for r in cds.requests if of_month(request)(r))


def files(staging: Path) -> list[str]:
    """Every file under staging, hidden ones included: what a crash or a fault left behind."""
    return sorted(str(p.relative_to(staging)) for p in staging.rglob("*") if p.is_file())


def api_calls(cds: LocalCDS, method: str, suffix: str) -> int:
    return sum(1 for c in cds.calls if c.method == method and c.path.endswith(suffix))


# -------------------------------------------------------------------------------------------------


def test_split_month_is_fetched_in_parts_within_the_cap_and_reads_as_one(
    cds: LocalCDS, store: PgJobStore, tmp_path: Path, db_url: str
) -> None:
    request = month("2023-01")
    cds.queue_seconds = 0.3
    download = run(cds, request, tmp_path, store, cost_limit=1200, max_parallel=2)

    # 6 variables x 31 days x 24 h = 4464 fields; at most 8 days of everything fit under 1200.
    assert download.parts == 4 and len(download.paths) == 4 and not download.reused
    assert submitted(cds, request) == 4 == download.submissions
    assert download.queue_seconds >= 0.3 and download.download_seconds > 0
    # Never more than two jobs in the CDS at once: the cap held, as the CDS saw it.
    jobs = sorted((j.created, j.finished) for j in cds.jobs.values() if of_month(request)(j.inputs)
                  if j.finished is not None)
    assert len(jobs) == 4
    assert max(sum(1 for c, f in jobs if c <= t < f) for t, _ in jobs) <= 2

    folder = request.folder(tmp_path)
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["request_hash"] == request.hash
    assert [p["file"] for p in manifest["parts"]] == [f"part-{i:02d}.zip" for i in range(4)]
    assert files(tmp_path) == sorted(
        [f"{request.month}/{request.hash}/{MANIFEST}"]
        + [f"{request.month}/{request.hash}/part-{i:02d}.{ext}" for i in range(4) for ext in ("json", "zip")])
    found = staged_download(folder)
    assert found is not None and found.paths == download.paths
    with open_download(found.paths) as staged:  # parts split by days join into the whole month
        assert len(staged.valid_time) == request.month.hours and staged.points == 1
        assert [v.cds_name for v in staged.variables] == [v.cds_name for v in VARIABLES]

    with connect(db_url) as conn:
        rows = conn.execute(
            "SELECT part, parts, state, submissions, queue_seconds >= 0.3, download_seconds > 0, month_hash"
            " FROM era5_cds_jobs WHERE api_url = %s AND month_hash = %s ORDER BY part", (cds.url, request.hash),
        ).fetchall()
    assert rows == [(i, 4, "downloaded", 1, True, True, request.hash) for i in range(4)]

    # Intact: not downloaded again, not even asked about.
    calls = len(cds.calls)
    again = run(cds, request, tmp_path, store, cost_limit=1200)
    assert again.reused and again.paths == download.paths and len(cds.calls) == calls


def test_faults_that_heal_are_retried_per_request_and_nothing_partial_is_staged(
    cds: LocalCDS, store: PgJobStore, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # 28 days: two parts of 14 days under a limit of 2100; 9 x 9 points, so that half a cut
    # transfer holds whole 64 KiB blocks to resume from (ERA5's packed values compress well).
    request = month("2023-02", Area.parse("47/7/45/9"))
    first, second = of_month(request, days=(1,)), of_month(request, days=(15,))
    faults = [
        cds.inject("submit", status=503, times=2, match=first),  # the gateway's HTML 503, twice
        cds.inject("status", "drop", match=first),  # the connection closed unanswered
        cds.inject("results", status=502, match=first),
        cds.inject("submit", status=429, retry_after=0.4, match=second),  # a rate limit with a wait hint
        cds.inject("asset", "truncate", match=second),  # cut half way: resumed with Range
        cds.inject("asset", "corrupt", match=first),  # right size, wrong bytes: only the MD5 tells
        cds.inject("asset", status=500, match=second),
    ]
    caplog.set_level(logging.DEBUG)
    began = time.monotonic()
    download = run(cds, request, tmp_path, store, cost_limit=2100)

    assert download.parts == 2 and [f.hits for f in faults] == [2, 1, 1, 1, 1, 1, 1]
    assert time.monotonic() - began >= 0.4  # the service's Retry-After was waited out
    assert submitted(cds, request) == 2  # each part's job created once, faults or not
    asset_gets = [d for d in cds.downloads if d.method == "GET"]
    assert any(d.truncated for d in asset_gets)
    assert any(d.status == 206 and d.range for d in asset_gets)  # the cut transfer was resumed
    with open_download(download.paths) as staged:
        assert len(staged.valid_time) == request.month.hours
    folder = f"{request.month}/{request.hash}"  # no partial, no lock file, no temporary left
    assert files(tmp_path) == sorted(
        [f"{folder}/{MANIFEST}"] + [f"{folder}/part-0{i}.{e}" for i in (0, 1) for e in ("json", "zip")])
    # The key is in no log line, not even the client's debug output.
    assert cds.key not in caplog.text
    assert "503" in caplog.text and "Retry-After" in caplog.text


def test_an_answer_lost_after_the_job_was_created_is_adopted_not_resubmitted(
    cds: LocalCDS, store: PgJobStore, tmp_path: Path
) -> None:
    request = month("2023-03")
    cds.inject("submit", "drop_after", match=of_month(request))
    download = run(cds, request, tmp_path, store)
    assert submitted(cds, request) == 1 and download.submissions == 1
    assert staged_download(request.folder(tmp_path)) is not None


def test_a_fault_that_does_not_heal_fails_after_bounded_attempts(
    cds: LocalCDS, store: PgJobStore, tmp_path: Path
) -> None:
    request = month("2023-04")
    cds.inject("status", status=500, times=None, match=of_month(request))
    before = api_calls(cds, "GET", "")
    began = time.monotonic()
    with pytest.raises(RetriesExhausted, match=r"4 attempts.*HTTP 500") as err:
        run(cds, request, tmp_path, store)
    assert time.monotonic() - began < 5  # not 500 tries 120 s apart
    assert "re-attaches" in str(err.value) and cds.key not in str(err.value)
    assert api_calls(cds, "GET", "") - before <= 4 + 2  # the attempts, plus a catalogue look
    assert submitted(cds, request) == 1
    assert files(tmp_path) == []


def fail_case(name: str, cds: LocalCDS, request: MonthRequest) -> tuple[type[FetchError], list[str]]:
    """Arm the fault ``name`` for ``request``; the error expected and words its message must hold."""
    if name == "bad key":
        return AuthError, ["rejected the API key", "era5_cds", "profile"]
    if name == "licence":
        cds.accepted_licences = set()
        return LicenceError, [f"'{ERA5_LICENCE[0]}' (revision {ERA5_LICENCE[1]})", "manage-licences",
                              "reanalysis-era5-single-levels"]
    if name == "cost limit":
        cds.cost_limits = {"netcdf": 1000.0}
        return CostLimitError, ["cost limits exceeded", "too large", "4,464", "60,000", "ERA5_CDS_COST_LIMIT"]
    if name == "failed job":
        cds.inject("job", "fail", match=of_month(request), message="no data for this date")
        return JobFailedError, ["failed", "MARS", "no data for this date", "not retried"]
    if name == "zero-byte product":
        cds.inject("job", "zero_byte", match=of_month(request))
        return BadAssetError, ["an empty file", "nothing was staged"]
    if name == "rejected job":
        cds.inject("job", "reject", match=of_month(request))
        return JobFailedError, ["failed", "temporarily limited"]
    assert name == "corrupt product"
    cds.inject("job", "garbage", match=of_month(request))
    return BadAssetError, ["neither NetCDF nor ZIP", "nothing was staged"]


@pytest.mark.parametrize(("name", "when"), [
    ("bad key", "2023-05"), ("licence", "2023-06"), ("cost limit", "2023-07"), ("failed job", "2023-08"),
    ("zero-byte product", "2023-09"), ("corrupt product", "2023-10"), ("rejected job", "2022-02"),
])
def test_faults_that_cannot_heal_fail_fast_saying_what_to_do(
    cds: LocalCDS, store: PgJobStore, tmp_path: Path, name: str, when: str
) -> None:
    request = month(when)
    error, words = fail_case(name, cds, request)
    key = "wrong-key-123" if name == "bad key" else cds.key
    posts = api_calls(cds, "POST", "/execution")
    began = time.monotonic()
    with pytest.raises(error) as err:
        run(cds, request, tmp_path, store, key=key)
    message = str(err.value)
    for word in words:
        assert word in message, (word, message)
    assert key not in message and not err.value.retryable
    assert time.monotonic() - began < 5
    assert api_calls(cds, "POST", "/execution") - posts == 1  # asked once: asking again changes nothing
    assert files(tmp_path) == []  # nothing staged, not even a partial file


def test_expired_results_are_submitted_again(cds: LocalCDS, store: PgJobStore, tmp_path: Path, db_url: str) -> None:
    request = month("2023-11")
    expire = cds.inject("results", "expire", match=of_month(request))
    download = run(cds, request, tmp_path, store)
    assert expire.hits == 1 and submitted(cds, request) == 2 and download.submissions == 2
    with connect(db_url) as conn:
        row = conn.execute("SELECT state, submissions, cardinality(previous_job_ids) FROM era5_cds_jobs"
                           " WHERE api_url = %s AND request_hash = %s", (cds.url, request.hash)).fetchone()
    assert row == ("downloaded", 2, 1)


def test_a_fetch_killed_while_its_job_is_queued_reattaches_when_retried(
    cds: LocalCDS, store: PgJobStore, tmp_path: Path, db_url: str
) -> None:
    request = month("2023-12")
    cds.inject("job", "queue", seconds=4.0, match=of_month(request))
    code = (
        "import sys; from pathlib import Path; from era5etl.fetch import *;"
        "from era5etl.fetch.jobs import PgJobStore; from era5etl.core.grid import Area, Grid;"
        "from era5etl.core.months import Month; from era5etl.core.variables import VARIABLES;"
        "r = MonthRequest(Month.parse('2023-12'), Area.parse('46/7/46/7'), Grid(), VARIABLES);"
        "fetch(r, Path(sys.argv[1]), Credentials(sys.argv[2], sys.argv[3]), store=PgJobStore(sys.argv[4]),"
        " options=FetchOptions(poll_base=0.05, poll_cap=0.2))"
    )
    child = subprocess.Popen([sys.executable, "-c", code, str(tmp_path), cds.url, cds.key, db_url],
                             env={**os.environ, "ERA5_LOG_LEVEL": "WARNING"})
    try:
        deadline = time.monotonic() + 20
        while (record := store.get(cds.url, request.hash)) is None or record.state != "accepted":
            assert child.poll() is None and time.monotonic() < deadline, "the child never submitted"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)  # the task dies mid-wait: nothing gets to clean up
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
    job_id = record.job_id
    assert cds.jobs[str(job_id)].status == "accepted"  # still queued at the CDS

    download = run(cds, request, tmp_path, store)  # the retry
    assert submitted(cds, request) == 1  # re-attached: no second job
    final = store.get(cds.url, request.hash)
    assert final is not None and final.job_id == job_id and final.state == "downloaded"
    assert final.queue_seconds is not None and final.queue_seconds >= 4.0
    assert staged_download(request.folder(tmp_path)) is not None and download.paths


def test_a_missing_key_and_a_legacy_key_are_clear_errors(tmp_path: Path) -> None:
    request = month("2022-01")
    with pytest.raises(AuthError, match="UID:KEY"):
        fetch(request, tmp_path, Credentials("http://127.0.0.1:9/api", "12345:abcdef"), options=FAST)
    assert "abcdef" not in repr(Credentials("u", "abcdef"))
    assert plan(request)[0].hash == request.hash
