"""Staging that stays bounded: a month's download goes once the month is validated (ERA5_KEEP_DOWNLOADS),
a rerun fetches it again and says so, and ``status`` and the page show what staging holds.

Every month is fetched through the real cdsapi client from the local CDS, staged, loaded into the
real TimescaleDB and validated by Great Expectations, by the CLI or by the pipeline's own steps.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import VARIABLES
from era5etl.db import connect
from era5etl.fetch import MANIFEST, Credentials, retention, staged_download
from era5etl.pipeline.job import MonthJob
from era5etl.pipeline.steps import (
    DownloadRemoved,
    ValidationFailed,
    fetch_step,
    load_step,
    prepare,
    run_month,
    stage_step,
    validate_step,
)
from era5etl.report import load_dashboard, render_page, to_json

from ..helpers import cli

AREA = "46/7/45/8"  # 5 x 5 points: a month is 18,600 rows, quick yet a real grid


def _env(cds: Any, staging: Path, keep: str | None = None) -> dict[str, str]:
    env = {"CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(staging)}
    return env | ({"ERA5_KEEP_DOWNLOADS": keep} if keep else {})


def _download_files(staging: Path) -> list[Path]:
    """The files a download consists of (parts, partial transfers), not the JSON records kept beside them."""
    return sorted(p for p in staging.rglob("*") if p.is_file() and p.suffix != ".json")


def _folder(staging: Path, month: str) -> Path:
    [folder] = (staging / month).iterdir()  # one request folder: <month>/<request hash>
    return folder


def ledger_state(url: str, table: str, month: str) -> str:
    with connect(url) as conn:
        row = conn.execute("SELECT state FROM era5_months WHERE table_name = %s AND month = %s",
                           (table, Month.parse(month).start.date())).fetchone()
    assert row is not None
    return str(row[0])


def _job(table: str, staging: Path, month: Month) -> MonthJob:
    return MonthJob(month, Area.parse(AREA), Grid(), VARIABLES, table, f"test-staging-{month}", staging)


def _differences(url: str, table: str, snapshot: str) -> tuple[int, int, int]:
    """Rows only in the table, rows only in the snapshot (every column compared, NULLs and NaNs alike), rows."""
    with connect(url) as conn:
        extra = conn.execute(f"SELECT count(*) FROM (SELECT * FROM {table} EXCEPT ALL SELECT * FROM {snapshot}) d"
                             ).fetchone()
        lost = conn.execute(f"SELECT count(*) FROM (SELECT * FROM {snapshot} EXCEPT ALL SELECT * FROM {table}) d"
                            ).fetchone()
        rows = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    assert extra is not None and lost is not None and rows is not None
    return int(extra[0]), int(lost[0]), int(rows[0])


def _fetch_details(url: str, table: str) -> list[dict[str, Any]]:
    with connect(url) as conn:
        rows = conn.execute("SELECT detail FROM era5_metrics WHERE table_name = %s AND task = 'fetch' ORDER BY id",
                            (table,)).fetchall()
    return [r[0] for r in rows]


def test_a_validated_month_leaves_no_download_and_a_rerun_fetches_it_again_and_loads_exactly(
    db_url: str, cds: Any, table: str, tmp_path: Path
) -> None:
    staging = tmp_path / "staging"
    env = _env(cds, staging)
    code, out, err, first = cli("run-month", "2024-01", "--area", AREA, "--table", table, "--json", env=env)
    assert code == 0, out + err
    assert first is not None and first["success"] is True and first["steps"][0]["note"] is None
    fetched = first["steps"][0]["bytes"]

    # Nothing of the download is left; its records are, the manifest noting the removal.
    assert fetched > 0 and _download_files(staging) == []
    folder = _folder(staging, "2024-01")
    manifest = json.loads((folder / MANIFEST).read_text())
    removed = manifest["removed"]
    assert (removed["after"], removed["bytes"], removed["files"]) == ("validated", fetched, len(manifest["parts"]))
    assert manifest["request"]["variable"] and manifest["request_hash"] == folder.name
    for part in manifest["parts"]:
        marker = json.loads((folder / part["file"]).with_suffix(".json").read_text())
        assert marker["md5"] == part["md5"] and len(part["md5"]) == 32 and marker["job_id"] == part["job_id"]
    with connect(db_url) as conn:
        ledger = conn.execute("SELECT state, request_hash FROM era5_months WHERE table_name = %s", (table,)).fetchone()
    assert ledger == ("validated", folder.name)  # the ledger's hash still leads to the kept manifest
    code, _, _, status = cli("status", "--table", table, "--json", env=env)
    assert code == 0 and status is not None
    assert status["staging"] == {"root": str(staging), "bytes": 0, "files": 0, "months": [], "released": 1}

    # A rerun: the download is fetched again (a new transfer, said so) and the month loads exactly as before.
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table}_before AS SELECT * FROM {table}")
    transfers = len(cds.downloads)
    try:
        code, out, err, _ = cli("run-month", "2024-01", "--area", AREA, "--table", table, env=env)
        assert code == 0, out + err
        on = datetime.fromisoformat(removed["at"])
        said = f"download of 2024-01 was removed after validation on {on:%Y-%m-%d}; fetching again"
        assert said in out and "validation: passed" in out
        assert len(cds.downloads) > transfers
        again = _fetch_details(db_url, table)[-1]
        assert (again["reused"], again["note"], again["removed_at"]) == (False, said, removed["at"])
        assert _differences(db_url, table, f"{table}_before") == (0, 0, first["rows"])
    finally:
        with connect(db_url, autocommit=True) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {table}_before")
    assert _download_files(staging) == []  # validated again, removed again
    print(f"\nrerun after removal: {said}; {first['rows']:,} rows, every column equal")


def test_keep_all_keeps_the_download_and_status_and_the_page_show_what_staging_holds(
    db_url: str, cds: Any, table: str, tmp_path: Path
) -> None:
    staging = tmp_path / "staging"
    env = _env(cds, staging, keep="all")
    code, out, err, summary = cli("run-month", "2024-02", "--area", AREA, "--table", table, "--json", env=env)
    assert code == 0 and summary is not None and summary["success"], out + err
    files = _download_files(staging)
    assert files and sum(p.stat().st_size for p in files) == summary["steps"][0]["bytes"]
    assert staged_download(_folder(staging, "2024-02")) is not None

    held = retention.usage(staging)
    assert (held.bytes, held.files, held.months, held.released) == (
        summary["steps"][0]["bytes"], len(files), ("2024-02",), 0)
    code, _, _, status = cli("status", "--table", table, "--json", env=env)
    assert code == 0 and status is not None and status["staging"] == held.as_dict()
    code, human, _, _ = cli("status", "--table", table, env=env)
    assert code == 0 and held.text() in human and "1 month (2024-02) held" in human

    dashboard = load_dashboard(db_url, table, AREA, staging_dir=staging)
    assert dashboard.staging == held
    assert to_json(dashboard)["staging"] == held.as_dict()
    page = render_page(dashboard)
    assert f'id="staging" data-bytes="{held.bytes}" data-files="{held.files}"' in page and "(2024-02)" in page


def test_a_stage_or_load_after_the_download_was_removed_changes_nothing(
    db_url: str, cds: Any, table: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 47: clearing `load` (as docs/operating.md said) after a validated month's download was
    removed failed twice over two minutes of retries and left a good month `failed` in the ledger.
    Now both steps refuse before touching anything (the Airflow tasks fail at once: no retry can bring
    the download back), saying which task to clear; the month stays validated, its rows as they were."""
    monkeypatch.delenv("ERA5_KEEP_DOWNLOADS", raising=False)  # the default: removed once validated
    job, credentials = _job(table, tmp_path, Month(2024, 4)), Credentials(cds.url, cds.key)
    run_month(db_url, job, credentials)
    assert staged_download(job.request.folder(tmp_path)) is None
    with connect(db_url) as conn:
        rows = conn.execute(f"SELECT count(*), sum(temperature_2m) FROM {table}").fetchone()
    for step in (stage_step, load_step):
        with pytest.raises(DownloadRemoved, match=r"\(validated; .* the month's rows are the validated ones\. "
                                                  r"To reload the month, clear its fetch task"):
            step(db_url, job)
        assert ledger_state(db_url, table, "2024-04") == "validated"
    with connect(db_url) as conn:
        assert conn.execute(f"SELECT count(*), sum(temperature_2m) FROM {table}").fetchone() == rows
    # The way out it names: a fetch, then the rest.
    assert fetch_step(db_url, job, credentials).removed is not None
    load_step(db_url, job)
    assert validate_step(db_url, job).success


@pytest.mark.parametrize("keep", ["none", "failed", "all"])
def test_a_failed_validation_keeps_the_download_only_if_the_setting_says_so(
    db_url: str, cds: Any, table: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep: str
) -> None:
    monkeypatch.setenv("ERA5_KEEP_DOWNLOADS", keep)
    job, credentials = _job(table, tmp_path, Month(2024, 3)), Credentials(cds.url, cds.key)
    folder = job.request.folder(tmp_path)
    prepare(db_url, job)
    fetch_step(db_url, job, credentials)
    stage_step(db_url, job)
    load_step(db_url, job)
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f"DELETE FROM {table} WHERE (time, location_id) = "
                     f"(SELECT time, location_id FROM {table} ORDER BY time, location_id LIMIT 1)")
    with pytest.raises(ValidationFailed, match="row_count_month"):
        validate_step(db_url, job)
    kept = staged_download(folder) is not None
    assert kept is (keep != "none")

    # The month is loaded again: from the kept download, or (removed) after a fetch that says why.
    if not kept:
        with pytest.raises(DownloadRemoved, match=r"the download of 2024-03 was removed after validation on "
                                                  r"\d{4}-\d\d-\d\d \(failed; .*no complete download for load .* "
                                                  r"the month stays failed\. To reload the month, clear its fetch"):
            load_step(db_url, job)
        assert ledger_state(db_url, table, "2024-03") == "failed"  # nothing was changed
        download = fetch_step(db_url, job, credentials)
        assert download.removed is not None and download.removed.after == "failed" and not download.reused
    load_step(db_url, job)
    assert validate_step(db_url, job).success
    # Validated now: the download goes unless every download is kept.
    assert (staged_download(folder) is not None) is (keep == "all")
    assert bool(_download_files(tmp_path)) is (keep == "all")


def test_a_backfill_keeps_staging_at_one_months_download(
    db_url: str, cds: Any, table: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six months one after another, as ``run-month`` runs them: staging is measured at every step's
    start and end (the download exists from the fetch's end to the validation's), so the high-water
    mark is the largest it was, not a guess."""
    monkeypatch.delenv("ERA5_KEEP_DOWNLOADS", raising=False)  # the default, none
    credentials = Credentials(cds.url, cds.key)
    high, fetched = 0, []
    for number in range(7, 13):
        job = _job(table, tmp_path, Month(2023, number))

        def look(task: str, when: str) -> None:
            nonlocal high
            high = max(high, retention.usage(tmp_path).bytes)

        summary = run_month(db_url, job, credentials, on_step=look)
        assert summary["success"] and summary["rows"] == job.expected_rows
        fetched.append(summary["steps"][0]["bytes"])
        left = retention.usage(tmp_path)
        print(f"{job.month}: downloaded {fetched[-1]:,} bytes; staging after the month {left.bytes:,} bytes "
              f"in {left.files} files; high-water so far {high:,} bytes")
        assert left.bytes == 0 and left.months == ()
    end = retention.usage(tmp_path)
    print(f"6 months: staging high-water mark {high:,} bytes (the largest month's download {max(fetched):,}); "
          f"at the end {end.bytes:,} bytes, {end.released} manifests kept; without removal it would hold "
          f"{sum(fetched):,} bytes")
    assert (end.bytes, end.files, end.released) == (0, 0, 6)
    assert 0 < high <= max(fetched)  # one month's download at most, whatever the backfill's length


def test_a_staging_or_validation_folder_that_cannot_be_written_is_refused_before_the_ledger_hears_of_it(
        db_url: str, table: str, cds: Any, tmp_path: Path) -> None:
    # A folder under a file: refused for root as for anyone (a read-only disk: tests/unit/core/test_files.py).
    (tmp_path / "file").write_text("x")
    bad = tmp_path / "file" / "folder"
    for setting in ("ERA5_STAGING_DIR", "ERA5_VALIDATION_DIR"):
        env = _env(cds, tmp_path / "staging") | {setting: str(bad)}
        code, out, err, _ = cli("run-month", "2024-01", "--area", AREA, "--table", table, env=env)
        assert code == 2 and f"error: {setting}={bad} cannot be made" in err and "Traceback" not in err, out + err
    code, _, err, _ = cli("validate", "2024-01", "--area", AREA, "--table", table,
                          env={"ERA5_VALIDATION_DIR": str(bad)})
    assert code == 2 and "ERA5_VALIDATION_DIR" in err, err
    with connect(db_url) as conn:
        assert conn.execute("SELECT count(*) FROM era5_months WHERE table_name = %s", (table,)).fetchone() == (0,)
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
