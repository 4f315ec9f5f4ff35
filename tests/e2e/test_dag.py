"""One whole run of a month through `airflow dags test` (the DAGs' integrity: tests/dags/)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from era5etl.core.grid import Area, Grid, expected_rows
from era5etl.core.months import Month
from era5etl.core.paths import PROJECT_ROOT
from era5etl.core.variables import DEFAULT_VARIABLES, parse_list
from era5etl.db import connect
from era5etl.fetch import MonthRequest, staged_download
from era5etl.fetch.manifest import removal

DAG_FILE = PROJECT_ROOT / "dags" / "era5_monthly.py"


POOLS = {"era5_cds": 4, "era5_db": 2}


@pytest.fixture(scope="module")
def pools() -> None:
    """The pools the DAG's tasks use, as scripts/setup.sh creates them (idempotent)."""
    from airflow.models.pool import Pool

    for name, slots in POOLS.items():
        Pool.create_or_update_pool(name, slots, f"era5etl test pool {name}", include_deferred=False)


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
    # The validate task released the month's download (ERA5_KEEP_DOWNLOADS=none): the manifest stays, noting it.
    request = MonthRequest(month, area, Grid(), tuple(parse_list(list(DEFAULT_VARIABLES))))
    folder = request.folder(Path(env["ERA5_STAGING_DIR"]))
    removed = removal(folder)
    assert staged_download(folder) is None and removed is not None and removed.after == "validated"
    assert removed.files == len(recorded[0][1]["files"]) and removed.bytes > 0
