"""`era5etl run-month`: fetch through the real cdsapi client from the local CDS, stage, load, validate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from era5etl.core.grid import Area, Grid, expected_rows
from era5etl.core.months import Month
from era5etl.core.variables import VARIABLES
from era5etl.db import connect
from era5etl.fetch import MANIFEST, MonthRequest
from era5etl.pipeline.errors import PipelineError
from era5etl.pipeline.job import MonthJob
from era5etl.pipeline.steps import prepare, stage_step
from localcds import synth

from ..helpers import cli

AREA = "46/7/45/8"  # 5 x 5 points: a month is 18,600 rows, quick yet a real grid


def _env(cds: Any, staging: Path) -> dict[str, str]:
    return {"CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(staging)}


def _counts(url: str, table: str) -> dict[tuple[str, float], int]:
    """Rows per (month, west edge): what each load owns in the table."""
    with connect(url) as conn:
        rows = conn.execute(
            f"SELECT to_char(time, 'YYYY-MM'), min(longitude), count(*) FROM {table} "
            "GROUP BY 1, floor(longitude / 2) ORDER BY 1, 2"
        ).fetchall()
    return {(m, float(w)): int(n) for m, w, n in rows}


def test_run_month_loads_validates_records_and_reruns_idempotently(
    db_url: str, cds: Any, table: str, tmp_path: Path
) -> None:
    env = _env(cds, tmp_path)
    expected = expected_rows(Month(2024, 1), Area.parse(AREA), Grid())
    code, out, err, summary = cli("run-month", "2024-01", "--area", AREA, "--table", table, "--json", env=env)
    assert code == 0, out + err
    assert summary is not None
    assert (summary["rows"], summary["expected_rows"], summary["success"]) == (expected, expected, True)
    assert summary["rows_per_s"] > 0

    with connect(db_url) as conn:
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (expected,)
        ledger = conn.execute("SELECT state, rows, expected_rows, expver FROM era5_months WHERE table_name = %s",
                              (table,)).fetchall()
        metrics = conn.execute("SELECT task, rows, bytes, seconds, rows_per_s FROM era5_metrics "
                               "WHERE table_name = %s ORDER BY id", (table,)).fetchall()
    assert ledger == [("validated", expected, expected, ["0001"])]
    assert [m[0] for m in metrics] == ["fetch", "stage", "load", "validate", "compress"]
    load_row = metrics[2]
    assert load_row[1] == expected and load_row[2] > 0 and load_row[3] > 0 and load_row[4] > 0

    # Neighbours: the next month, and another area in the same month.
    assert cli("run-month", "2024-02", "--area", AREA, "--table", table, env=env)[0] == 0
    assert cli("run-month", "2024-01", "--area", "46/9/45/10", "--table", table, env=env)[0] == 0
    before = _counts(db_url, table)
    submitted = len(cds.requests)

    # Again: validation removed the download, so it is fetched again from the same CDS job (no new
    # request); the month replaced, nothing doubled, neighbours untouched.
    code, out, err, again = cli("run-month", "2024-01", "--area", AREA, "--table", table, "--json", env=env)
    assert code == 0, out + err
    assert again is not None and again["rows"] == expected and again["success"] is True
    assert _counts(db_url, table) == before
    assert len(cds.requests) == submitted
    human = cli("run-month", "2024-01", "--area", AREA, "--table", table, env=env)[1]
    assert "rows/s" in human and "validation: passed" in human


def test_validation_failure_is_reported(db_url: str, cds: Any, table: str, tmp_path: Path) -> None:
    assert cli("run-month", "2024-03", "--area", AREA, "--table", table, env=_env(cds, tmp_path))[0] == 0
    with connect(db_url, autocommit=True) as conn:
        # One row by its key (ctid is per chunk, so it cannot name a single row of a hypertable).
        conn.execute(f"DELETE FROM {table} WHERE (time, location_id) = "
                     f"(SELECT time, location_id FROM {table} ORDER BY time, location_id LIMIT 1)")
    code, _, _, result = cli("validate", "2024-03", "--area", AREA, "--table", table, "--json")
    assert code == 1
    assert result is not None and result["success"] is False
    # The first row of the month went: the month's count and that day's count both say so.
    assert result["failed"] == ["row_count_month", "row_count_day:2024-03-01"]
    assert result["observed_rows"] == expected_rows(Month(2024, 3), Area.parse(AREA), Grid()) - 1


def test_requested_variable_missing_from_download_fails_and_loads_nothing(
    db_url: str, table: str, tmp_path: Path
) -> None:
    month, area, grid = Month(2024, 4), Area.parse(AREA), Grid()
    job = MonthJob(month, area, grid, VARIABLES, table, "test-run", tmp_path)
    # Stage a download for the full request that lacks snowfall, as a short CDS answer would.
    folder = job.request.folder(tmp_path)
    folder.mkdir(parents=True)
    partial = MonthRequest(month, area, grid, tuple(v for v in VARIABLES if v.short_name != "sf"))
    path = synth.write_download(partial.cds_request(), folder / "download.zip")
    (folder / MANIFEST).write_text(json.dumps({"file": path.name, "bytes": path.stat().st_size,
                                               "request_hash": job.request.hash}))
    prepare(db_url, job)
    with pytest.raises(PipelineError, match="snowfall"):
        stage_step(db_url, job)
    with connect(db_url) as conn:
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
        state = conn.execute("SELECT state, error FROM era5_months WHERE table_name = %s", (table,)).fetchone()
    assert state is not None and state[0] == "failed" and "snowfall" in state[1]


@pytest.mark.parametrize(("args", "words"), [
    (["run-month", "2024-13"], "month"),
    (["run-month", "January", "--local-cds"], "yyyy-mm"),
    (["run-month", "2024-01", "--area", "45/7/46/8", "--local-cds"], "south"),
    (["run-month", "2024-01", "--area", "46/7/45", "--local-cds"], "n/w/s/e"),
    (["run-month", "2024-01", "--variables", "sea_ice", "--local-cds"], "unknown variable"),
    (["validate", "24-01"], "month"),
])
def test_bad_arguments_are_clear_errors(args: list[str], words: str) -> None:
    code, _, err, _ = cli(*args)
    assert code == 2
    assert err.startswith("error:") and words in err.lower() and "Traceback" not in err, err
