"""The DAG as Airflow sees it (integrity), and one whole run of a month through `airflow dags test`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from era5etl.core.grid import Area, Grid, expected_rows
from era5etl.core.months import Month
from era5etl.db import PROJECT_ROOT, connect

DAG_FILE = PROJECT_ROOT / "dags" / "era5_monthly.py"


@pytest.fixture(scope="module")
def dagbag() -> Any:
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(DAG_FILE.parent))


POOLS = {"era5_cds": 4, "era5_db": 2}


@pytest.fixture(scope="module")
def pools() -> None:
    """The pools the DAG's tasks use, as scripts/setup.sh creates them (idempotent)."""
    from airflow.models.pool import Pool

    for name, slots in POOLS.items():
        Pool.create_or_update_pool(name, slots, f"era5etl test pool {name}", include_deferred=False)


def test_dags_import_without_errors(dagbag: Any) -> None:
    assert dagbag.import_errors == {}
    assert {"era5_monthly", "era5_finalize"} <= set(dagbag.dags)


def test_dag_shape_and_schedule(dagbag: Any) -> None:
    dag = dagbag.dags["era5_monthly"]
    assert [t.task_id for t in dag.topological_sort()] == [
        "wait_for_era5", "fetch", "stage", "load", "validate", "compress", "report"]
    assert dag.catchup is True
    # The CDS queue per credential and the database's writers are bounded by pools.
    pools = {t.task_id: t.pool for t in dag.tasks}
    assert pools["fetch"] == "era5_cds"
    assert pools["load"] == pools["validate"] == pools["compress"] == "era5_db"
    # The month waits for publication without holding a worker slot.
    wait = dag.get_task("wait_for_era5")
    assert "era5_publication_target" in wait.target_time
    assert dag.max_active_runs == int(os.environ.get("ERA5_MAX_ACTIVE_RUNS", "4"))
    # Each run's data interval is exactly one calendar month (not the zero-length @monthly one).
    # The timetable as the scheduler holds it (the SDK's is only its definition).
    from airflow.serialization.encoders import coerce_to_core_timetable

    timetable = coerce_to_core_timetable(dag.timetable)
    interval = timetable.infer_manual_data_interval(run_after=datetime(2024, 3, 15, tzinfo=UTC))
    assert (interval.start, interval.end) == (datetime(2024, 2, 1, tzinfo=UTC), datetime(2024, 3, 1, tzinfo=UTC))
    info = timetable.next_dagrun_info(last_automated_data_interval=None, restriction=_restriction(dag))
    assert info is not None and info.data_interval.start == dag.start_date
    assert set(dag.params.keys()) >= {"month", "area", "grid", "variables", "table", "revision"}


def test_finalize_dag_triggers_monthly_runs(dagbag: Any) -> None:
    dag = dagbag.dags["era5_finalize"]
    assert [t.task_id for t in dag.topological_sort()] == ["find", "reload"]
    assert dag.get_task("reload").partial_kwargs["trigger_dag_id"] == "era5_monthly"
    assert dag.max_active_runs == 1


def _restriction(dag: Any) -> Any:
    from airflow.timetables.base import TimeRestriction

    return TimeRestriction(earliest=dag.start_date, latest=None, catchup=True)


def test_dag_file_imports_no_heavy_core_at_parse_time() -> None:
    # The scheduler parses DAG files often: the core's data libraries must load only inside tasks.
    code = (
        "import sys, runpy; runpy.run_path(sys.argv[1]);"
        "print([m for m in ('xarray', 'great_expectations', 'netCDF4', 'cdsapi') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code, str(DAG_FILE)], capture_output=True, text=True,
                         env=os.environ.copy(), check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_full_dag_run_loads_and_validates_a_month(db_url: str, cds: Any, table: str, pools: None) -> None:
    month, area = Month(2024, 2), Area.parse("46/7/45/8")
    # A manual run takes its month from the `month` param (as the trigger form offers it).
    conf = {"table": table, "area": str(area), "month": str(month)}
    env = {**os.environ, "CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key,
           "ERA5_STAGING_DIR": str(PROJECT_ROOT / ".local" / "test-staging"),
           "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    run = subprocess.run(
        [str(Path(sys.executable).parent / "airflow"), "dags", "test", "era5_monthly", "2024-02-01",
         "-c", json.dumps(conf)],
        capture_output=True, text=True, env=env, timeout=600,
    )
    log = run.stdout + run.stderr
    assert run.returncode == 0, log[-5000:]
    with connect(db_url) as conn:
        rows = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
        state = conn.execute("SELECT state, rows FROM era5_months WHERE table_name = %s", (table,)).fetchone()
        recorded = conn.execute(
            "SELECT task, detail FROM era5_metrics WHERE table_name = %s ORDER BY id", (table,)).fetchall()
        licence = conn.execute("SELECT current_setting('timescaledb.license', true)").fetchone()
    expected = expected_rows(month, area, Grid())
    assert rows == (expected,)
    assert state == ("validated", expected)
    assert [task for task, _ in recorded] == ["fetch", "stage", "load", "validate", "compress"]
    # This machine's TimescaleDB is the Apache build: the month is said to stay uncompressed, and the run succeeds.
    packed = recorded[-1][1]
    if licence == ("apache",):
        assert packed["state"] == "unavailable" and "'apache'" in packed["reason"]
    else:
        assert packed["state"] == "compressed" and packed["ratio"] > 1
