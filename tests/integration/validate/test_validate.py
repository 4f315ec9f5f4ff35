"""The validation suite against the real TimescaleDB and Great Expectations.

One small month is staged from a synthetic CDS download and loaded by the pipeline's own steps,
once; every test works on a copy of it, breaks it one way, and checks the suite names that way.
"""

from __future__ import annotations

import dataclasses
import json
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from psycopg import sql

from era5etl.core.grid import Area, Grid, expected_rows, location_ids
from era5etl.core.months import Month
from era5etl.core.variables import VARIABLES
from era5etl.db import connect, drop_table, ensure_schema
from era5etl.fetch import MANIFEST
from era5etl.pipeline.job import MonthJob
from era5etl.pipeline.steps import ValidationFailed, load_step, prepare, stage_step, validate_step
from era5etl.validate import area_predicates, validate_month
from localcds import synth

from ..helpers import cli

MONTH = Month(2024, 2)  # 29 days: a leap February, so a day count off by one would show
AREA = Area.parse("45.5/7/45/7.5")  # 3 x 3 points, 6,264 rows: quick, yet a real grid
GRID = Grid()
EXPECTED = expected_rows(MONTH, AREA, GRID)
# One row every test can aim at: 2024-02-10 12:00 at (45.25, 7.25), the middle of the area.
AT = "2024-02-10 12:00+00"
MIDDLE = int(location_ids(45.25, 7.25))
OUTSIDE = int(location_ids(50.0, 7.25))  # a grid point well north of the box


def _drop(url: str, table: str) -> None:
    with connect(url, autocommit=True) as conn:
        drop_table(conn, table)
        for book in ("era5_months", "era5_metrics", "era5_validation_days"):
            conn.execute(f"DELETE FROM {book} WHERE table_name = %s", (table,))


@pytest.fixture(scope="module")
def loaded(db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MonthJob]:
    """The month staged and loaded by the pipeline's steps (no validation yet)."""
    staging = tmp_path_factory.mktemp("staging")
    job = MonthJob(MONTH, AREA, GRID, VARIABLES, f"v_{uuid.uuid4().hex[:10]}", "test-load", staging)
    folder = job.request.folder(staging)
    folder.mkdir(parents=True)
    path = synth.write_download(job.request.cds_request(), folder / "download.nc")
    (folder / MANIFEST).write_text(json.dumps({"file": path.name, "bytes": path.stat().st_size,
                                               "request_hash": job.request.hash}))
    prepare(db_url, job)
    stage_step(db_url, job)
    load_step(db_url, job)
    yield job
    _drop(db_url, job.table)


@pytest.fixture
def copy_of(db_url: str, loaded: MonthJob) -> Iterator[Callable[..., MonthJob]]:
    """Make a fresh copy of the loaded month in a table of its own (the job pointing at it)."""
    made: list[str] = []

    def make(chunk_interval: str = "1 day") -> MonthJob:
        name = f"v_{uuid.uuid4().hex[:10]}"
        # The same layout as the loaded month's table (its area's points decide it: db.new_layout).
        ensure_schema(db_url, name, chunk_interval, points=loaded.area.points(loaded.grid))
        with connect(db_url, autocommit=True) as conn:
            # The rollups the load wrote too: validate checks them against the hourly rows.
            for suffix in ("", "_daily", "_monthly"):
                conn.execute(f"INSERT INTO {name}{suffix} SELECT * FROM {loaded.table}{suffix}")
        made.append(name)
        return dataclasses.replace(loaded, table=name, run_id=f"test-{name}")

    yield make
    for name in made:
        _drop(db_url, name)


@pytest.fixture(autouse=True)
def results_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "validation"
    monkeypatch.setenv("ERA5_VALIDATION_DIR", str(folder))
    # Every test validates a copy of the one month staged once (``loaded``): its download must outlive them all.
    monkeypatch.setenv("ERA5_KEEP_DOWNLOADS", "all")
    return folder


def _sql(url: str, stmt: str, params: dict[str, Any] | None = None) -> None:
    with connect(url, autocommit=True) as conn:
        conn.execute(stmt, params or {})


def _ledger(url: str, table: str) -> dict[str, Any]:
    with connect(url) as conn:
        cur = conn.execute("SELECT state, rows, error, validation_failed, validation_path, validated_at"
                           " FROM era5_months WHERE table_name = %s", (table,))
        row = cur.fetchone()
        assert row is not None
        return dict(zip([d.name for d in cur.description or []], row, strict=True))


def _validate_metrics(url: str, table: str) -> list[tuple[str, int, int, dict[str, Any]]]:
    with connect(url) as conn:
        rows = conn.execute("SELECT run_id, rows, bytes, detail FROM era5_metrics WHERE table_name = %s"
                            " AND task = 'validate' ORDER BY id", (table,)).fetchall()
    return [(r[0], int(r[1]), int(r[2]), r[3]) for r in rows]


def test_a_correct_month_validates_and_its_result_is_kept(db_url: str, copy_of: Callable[..., MonthJob],
                                                           results_dir: Path) -> None:
    job = copy_of()
    v = validate_step(db_url, job)
    assert (v.success, v.failed, v.observed_rows, v.expected_rows) == (True, [], EXPECTED, EXPECTED)

    folder = results_dir / job.table / "2024-02" / "45.5_7_45_7.5"
    assert v.result_path == folder / "result.json" and v.docs_path == folder / "docs" / "index.html"
    result = json.loads(v.result_path.read_text())
    assert result["success"] is True and len(result["results"]) > 20
    assert "era5_month" in v.docs_path.read_text()
    ledger = _ledger(db_url, job.table)
    assert (ledger["state"], ledger["rows"], ledger["error"]) == ("validated", EXPECTED, None)
    assert (ledger["validation_failed"], ledger["validation_path"]) == ([], str(folder))
    [(run_id, rows, nbytes, detail)] = _validate_metrics(db_url, job.table)
    assert (run_id, rows, detail["success"]) == (job.run_id, EXPECTED, True) and nbytes > 0

    # The per-day profile the suite judged stays in the database: one row per day of the month.
    with connect(db_url) as conn:
        days = conn.execute("SELECT day, rows FROM era5_validation_days WHERE validation_id = %s ORDER BY day",
                            (v.validation_id,)).fetchall()
    assert len(days) == MONTH.days and {r[1] for r in days} == {24 * AREA.points(GRID)}


ROW = "time = %(at)s AND location_id = %(id)s"


@pytest.mark.parametrize(("breakage", "failed"), [
    pytest.param(f"DELETE FROM {{t}} WHERE {ROW}", ["row_count_month", "row_count_day:2024-02-10"],
                 id="one-row-deleted"),
    pytest.param(f"INSERT INTO {{t}} SELECT * FROM {{t}} WHERE {ROW}",
                 ["row_count_month", "row_count_day:2024-02-10", "no_duplicates"], id="one-row-duplicated"),
    pytest.param(f"UPDATE {{t}} SET temperature_2m = 70 WHERE {ROW}", ["temperature_2m_bounds"],
                 id="temperature-too-warm"),
    pytest.param(f"UPDATE {{t}} SET temperature_2m = 'NaN' WHERE {ROW}", ["temperature_2m_bounds"],
                 id="temperature-nan"),
    pytest.param(f"UPDATE {{t}} SET zonal_wind_10m = -121 WHERE {ROW}", ["zonal_wind_10m_bounds"],
                 id="wind-too-strong"),
    pytest.param(f"UPDATE {{t}} SET total_cloud_cover = 1.5 WHERE {ROW}", ["total_cloud_cover_bounds"],
                 id="cloud-over-one"),
    pytest.param(f"UPDATE {{t}} SET total_precipitation = -0.1 WHERE {ROW}", ["total_precipitation_bounds"],
                 id="precipitation-negative"),
    pytest.param(f"UPDATE {{t}} SET snowfall = 'Infinity' WHERE {ROW}", ["snowfall_bounds"],
                 id="snowfall-infinite"),
    pytest.param(f"UPDATE {{t}} SET location_id = %(outside)s WHERE {ROW}", ["inside_area"],
                 id="location-id-outside-the-area"),
    pytest.param(f"UPDATE {{t}} SET latitude = 50 WHERE {ROW}", ["inside_area"],
                 id="coordinates-outside-the-area"),
    pytest.param(f"INSERT INTO {{t}} (time, location_id, latitude, longitude) SELECT time, %(outside)s, latitude,"
                 f" longitude FROM {{t}} WHERE {ROW}",
                 ["row_count_month", "row_count_day:2024-02-10", "inside_area"], id="location-outside-inserted"),
    pytest.param(f"UPDATE {{t}} SET location_id = NULL WHERE {ROW}", ["location_id_not_null"],
                 id="location-id-null"),
    # A point missing all month: every one of the 29 days is named (GX lists only 20 unless told).
    pytest.param("DELETE FROM {t} WHERE location_id = %(id)s",
                 ["row_count_month", *(f"row_count_day:2024-02-{d:02d}" for d in range(1, 30))],
                 id="one-point-missing-all-month"),
])
def test_a_broken_month_fails_with_its_reason_named(
    db_url: str, copy_of: Callable[..., MonthJob], results_dir: Path, breakage: str, failed: list[str]
) -> None:
    job = copy_of()
    _sql(db_url, breakage.format(t=job.table), {"at": AT, "id": MIDDLE, "outside": OUTSIDE})
    v = validate_month(db_url, job.table, MONTH, AREA, GRID)
    assert v.success is False
    assert v.failed == failed
    result = json.loads(v.result_path.read_text()) if v.result_path else {}
    assert result.get("success") is False
    assert v.docs_path is not None and v.docs_path.exists()


def test_rows_of_another_area_in_the_same_month_do_not_fail_it(db_url: str, copy_of: Callable[..., MonthJob]) -> None:
    job = copy_of()
    # A neighbour's point, whole and consistent (its own coordinates and id), as a second area's load leaves.
    _sql(db_url, f"INSERT INTO {job.table} (time, location_id, latitude, longitude, temperature_2m)"
                 " VALUES (%(at)s, %(id)s, 50, 7.25, 10)", {"at": AT, "id": OUTSIDE})
    v = validate_month(db_url, job.table, MONTH, AREA, GRID)
    assert (v.success, v.failed, v.observed_rows) == (True, [], EXPECTED)


@pytest.mark.parametrize("interval", ["7 days", "36 hours"])
def test_chunks_other_than_a_day_are_read_once_and_still_judged_by_day(
    db_url: str, copy_of: Callable[..., MonthJob], interval: str
) -> None:
    job = copy_of(interval)  # 36 hours: chunk edges at noon, so days straddle two chunks
    assert validate_month(db_url, job.table, MONTH, AREA, GRID).success
    _sql(db_url, f"INSERT INTO {job.table} SELECT * FROM {job.table} WHERE {ROW}", {"at": AT, "id": MIDDLE})
    v = validate_month(db_url, job.table, MONTH, AREA, GRID)
    assert v.failed == ["row_count_month", "row_count_day:2024-02-10", "no_duplicates"]
    assert v.observed_rows == EXPECTED + 1


def test_the_airflow_task_fails_a_failed_verdict_at_once_and_passes_a_good_month(
    db_url: str, copy_of: Callable[..., MonthJob], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The DAG's validate task retries (a lost worker or database is not the data's fault), so a
    failed verdict must fail the task without using those retries: AirflowFailException."""
    from airflow.sdk.exceptions import AirflowFailException
    from airflow.sdk.execution_time.context import OutletEventAccessors

    from era5etl.airflow import assets, tasks

    job = copy_of()
    monkeypatch.setenv("AIRFLOW_CONN_ERA5_TIMESCALE", db_url)  # the task reads the hook's connection
    context = {"params": {"month": str(MONTH), "area": str(AREA), "grid": str(GRID), "variables": None,
                          "table": job.table, "revision": "", "data_format": None},
               "run_id": "test-airflow-validate", "outlet_events": OutletEventAccessors()}
    verdict = tasks.validate(**context)  # with the compression and the run's figures, which validate now reports
    assert {k: verdict[k] for k in ("month", "success", "rows", "expected_rows")} == {
        "month": str(MONTH), "success": True, "rows": EXPECTED, "expected_rows": EXPECTED}
    # A validated month's event for the table's Asset, through the task's alias (Airflow's own accessor).
    [event] = context["outlet_events"][assets.VALIDATED].asset_alias_events
    assert (event.dest_asset_key.uri, event.extra["month"], event.extra["rows"]) == (
        f"era5://{job.table}/", str(MONTH), EXPECTED)
    _sql(db_url, f"DELETE FROM {job.table} WHERE {ROW}", {"at": AT, "id": MIDDLE})
    context["outlet_events"] = OutletEventAccessors()
    with pytest.raises(AirflowFailException, match="row_count_month, row_count_day:2024-02-10"):
        tasks.validate(**context)
    assert _ledger(db_url, job.table)["state"] == "failed"
    assert context["outlet_events"][assets.VALIDATED].asset_alias_events == []  # a failed month updates nothing


def test_failure_marks_the_month_failed_and_a_rerun_makes_it_validated(
    db_url: str, copy_of: Callable[..., MonthJob]
) -> None:
    job = copy_of()
    _sql(db_url, f"DELETE FROM {job.table} WHERE {ROW}", {"at": AT, "id": MIDDLE})
    with pytest.raises(ValidationFailed, match="row_count_month, row_count_day:2024-02-10") as caught:
        validate_step(db_url, job)
    folder = caught.value.validation.folder
    assert folder is not None and (folder / "result.json").exists() and (folder / "docs" / "index.html").exists()
    ledger = _ledger(db_url, job.table)
    assert ledger["state"] == "failed" and "row_count_day:2024-02-10" in ledger["error"]
    assert (ledger["validation_failed"], ledger["validation_path"]) == (
        ["row_count_month", "row_count_day:2024-02-10"], str(folder))
    [(_, rows, _, detail)] = _validate_metrics(db_url, job.table)
    assert (rows, detail["success"], detail["failed"]) == (EXPECTED - 1, False, ledger["validation_failed"])

    # Rerun: load again (replacing the month) and validate; the ledger forgets the old verdict.
    rerun = dataclasses.replace(job, run_id="test-rerun")
    load_step(db_url, rerun)
    assert _ledger(db_url, job.table)["validation_path"] is None  # a load makes the last verdict stale
    assert validate_step(db_url, rerun).success
    ledger = _ledger(db_url, job.table)
    assert (ledger["state"], ledger["rows"], ledger["error"], ledger["validation_failed"]) == (
        "validated", EXPECTED, None, [])
    assert [(m[0], m[1], m[3]["success"]) for m in _validate_metrics(db_url, job.table)] == [
        (job.run_id, EXPECTED - 1, False), ("test-rerun", EXPECTED, True)]


def test_cli_validate_json_and_status(db_url: str, copy_of: Callable[..., MonthJob]) -> None:
    job = copy_of()
    validate_step(db_url, job)
    _sql(db_url, f"UPDATE {job.table} SET total_cloud_cover = -0.5 WHERE {ROW}", {"at": AT, "id": MIDDLE})
    code, out, err, result = cli("validate", "2024-02", "--area", str(AREA), "--table", job.table, "--json")
    assert code == 1, out + err
    assert result is not None and result["success"] is False
    assert result["failed"] == ["total_cloud_cover_bounds"]
    assert result["failures"][0]["days"] == ["2024-02-10"]
    assert (result["expected_rows"], result["observed_rows"]) == (EXPECTED, EXPECTED)
    assert Path(result["result_path"]).exists() and Path(result["docs_path"]).exists()

    # The on-demand verdict is the month's truth now: the ledger says failed, and why.
    code, out, err, status = cli("status", "--table", job.table, "--json")
    assert code == 0, out + err
    assert status is not None
    [month] = status["months"]
    assert (month["state"], month["validation_failed"]) == ("failed", ["total_cloud_cover_bounds"])
    assert month["validation_path"] == str(Path(result["result_path"]).parent)


def test_cli_validate_refuses_a_users_table_and_records_nothing(db_url: str, copy_of: Callable[..., MonthJob]
                                                                 ) -> None:
    job = copy_of()
    own = f"own_{uuid.uuid4().hex[:8]}"
    _sql(db_url, f"CREATE TABLE {own} (LIKE {job.table})", {})
    try:
        _sql(db_url, f"INSERT INTO {own} SELECT * FROM {job.table}", {})
        for table in (own, f"{own}_missing"):
            code, out, err, _ = cli("validate", "2024-02", "--area", str(AREA), "--table", table)
            assert code == 2 and "error:" in err and "Traceback" not in err, out + err
            assert ("is not one of the pipeline's" if table == own else "does not exist") in err, err
        with connect(db_url) as conn:
            assert conn.execute("SELECT count(*) FROM era5_validation_days WHERE table_name LIKE %s",
                                (f"{own}%",)).fetchone() == (0,)
            assert conn.execute("SELECT count(*) FROM era5_months WHERE table_name LIKE %s",
                                (f"{own}%",)).fetchone() == (0,)
    finally:
        _sql(db_url, f"DROP TABLE IF EXISTS {own}", {})


@pytest.mark.parametrize(("grid", "lat", "lon", "inside"), [
    ("0.5", 45.0, 7.0, True),
    ("0.5", 45.5, 7.5, True),
    ("0.5", 45.25, 7.0, False),  # on the 0.25 lattice, not on the 0.5 grid the area was asked on
    ("0.25", 45.25, 7.25, True),
    ("0.25", 45.75, 7.25, False),  # north of the box
])
def test_the_area_lattice_in_sql(db_url: str, grid: str, lat: float, lon: float, inside: bool) -> None:
    _, on_lattice = area_predicates(AREA, Grid.parse(grid))
    stmt = sql.SQL("SELECT {} FROM (SELECT {}::int AS location_id, {}::float4 AS latitude,"
                   " {}::float4 AS longitude) AS r").format(
        on_lattice, sql.Literal(int(location_ids(lat, lon))), sql.Literal(lat), sql.Literal(lon))
    with connect(db_url) as conn:
        row = conn.execute(stmt).fetchone()
    assert row == (inside,)


def test_data_docs_pages_are_rendered_from_the_bytecode_cache_and_equal_gxs_own(tmp_path: Path) -> None:
    """The cached views (validate.docs_views) keep Jinja's compiled templates on disk and render
    exactly what GX's own views render."""
    from great_expectations.render import RenderedDocumentContent
    from great_expectations.render.view import DefaultJinjaPageView

    from era5etl.validate import docs_views

    cache = docs_views.bytecode_cache()
    cache.clear()
    document = RenderedDocumentContent(sections=[], renderer_type="SiteIndexPageRenderer", page_title="era5",
                                       utm_medium="validation-results-page")
    def page(view: DefaultJinjaPageView) -> str:  # the render's own time stamp left out
        return re.sub(r"\d{8}T\d{6}\.\d+Z", "<now>", view.render(document))

    fresh = page(DefaultJinjaPageView())
    assert page(docs_views.CachedPageView()) == fresh
    compiled = list(Path(cache.directory).glob("__jinja2_*.cache"))
    assert compiled, "the first render filled the cache"
    # A second view (a new environment, as GX makes per page) loads them: no file is rewritten.
    stamps = {p: p.stat().st_mtime_ns for p in compiled}
    assert page(docs_views.CachedPageView()) == fresh
    assert {p: p.stat().st_mtime_ns for p in compiled} == stamps
    assert docs_views.CachedIndexPageView().env.bytecode_cache is cache
