"""ERA5T to final: a month loaded as ERA5T is found and reloaded from a fresh download once final ERA5 covers it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from era5etl.core.grid import Area, Grid, expected_rows
from era5etl.core.months import Month
from era5etl.db import connect
from localcds.server import LocalCDS

from ..helpers import cli

AREA = "46/7/45/8"


@pytest.fixture
def cds() -> Iterator[LocalCDS]:
    # A server of its own: the test moves its clock, which must not leak into the session's server.
    with LocalCDS() as server:
        yield server


def _set_clock(cds: LocalCDS, when: datetime) -> None:
    cds.clock = lambda: when


def _ledger(url: str, table: str) -> dict[str, tuple[str, int, list[str], str]]:
    with connect(url) as conn:
        rows = conn.execute("SELECT to_char(month, 'YYYY-MM'), state, rows, expver, request_hash FROM era5_months"
                            " WHERE table_name = %s", (table,)).fetchall()
    return {m: (state, n, expver, h) for m, state, n, expver, h in rows}


def _count(url: str, table: str, month: Month) -> int:
    with connect(url) as conn:
        row = conn.execute(f"SELECT count(*) FROM {table} WHERE time >= %s AND time < %s",
                           (month.start, month.end)).fetchone()
    return int(row[0]) if row else 0


def test_era5t_month_is_reloaded_as_final(db_url: str, table: str, cds: LocalCDS, tmp_path: Path) -> None:
    env = {"CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(tmp_path)}
    recent, old = Month(2024, 1), Month(2023, 6)
    expected = expected_rows(recent, Area.parse(AREA), Grid())

    # February 2024: January is out as ERA5T, June 2023 is already final.
    _set_clock(cds, datetime(2024, 2, 20, tzinfo=UTC))
    for month in (recent, old):
        code, out, err, _ = cli("run-month", str(month), "--area", AREA, "--table", table, env=env)
        assert code == 0, out + err
    before = _ledger(db_url, table)
    assert before[str(recent)][:3] == ("validated", expected, ["0005"])
    assert before[str(old)][2] == ["0001"]

    # Final January is not due before May: nothing to do yet.
    code, out, err, listed = cli("finalize", "--table", table, "--as-of", "2024-02-20", "--json", env=env)
    assert code == 0, out + err
    assert listed is not None and listed["months"] == []

    # June 2024: the CDS now serves January as final ERA5.
    _set_clock(cds, datetime(2024, 6, 10, tzinfo=UTC))
    submitted = len(cds.requests)
    code, out, err, done = cli("finalize", "--table", table, "--as-of", "2024-06-10", "--run", "--json", env=env)
    assert code == 0, out + err
    assert done is not None
    assert [(m["month"], m["expver"]) for m in done["months"]] == [(str(recent), ["0005"])]
    [reload] = done["reloaded"]
    assert (reload["month"], reload["rows"], reload["expver"], reload["final"]) == (str(recent), expected, ["0001"],
                                                                                   True)
    # A fresh download: a new request hash and staging folder, a new CDS job; the ERA5T job superseded.
    assert reload["request_hash"] != before[str(recent)][3]
    assert len(cds.requests) == submitted + 1
    assert reload["superseded_jobs"] >= 1
    assert (tmp_path / str(recent) / reload["request_hash"] / "manifest.json").exists()
    assert (tmp_path / str(recent) / before[str(recent)][3]).is_dir()

    after = _ledger(db_url, table)
    assert after[str(recent)] == ("validated", expected, ["0001"], reload["request_hash"])
    assert after[str(old)] == before[str(old)]  # the final month was not touched
    assert _count(db_url, table, recent) == expected
    with connect(db_url) as conn:
        jobs = conn.execute("SELECT state, previous_job_ids FROM era5_cds_jobs WHERE month = %s AND api_url = %s",
                            (recent.start.date(), cds.url)).fetchall()
    assert [state for state, _ in jobs] == ["downloaded"] and len(jobs[0][1]) >= 1

    # Nothing is left to finalize.
    code, out, err, again = cli("finalize", "--table", table, "--as-of", "2024-06-10", "--json", env=env)
    assert code == 0 and again is not None and again["months"] == [], out + err


def test_finalize_lists_in_human_form(db_url: str, table: str) -> None:
    code, out, err, _ = cli("finalize", "--table", table)
    assert code == 0, err
    assert "0 month(s) hold ERA5T" in out


def test_finalize_rejects_a_bad_date() -> None:
    code, _, err, _ = cli("finalize", "--as-of", "June")
    assert code == 2 and "YYYY-MM-DD" in err


