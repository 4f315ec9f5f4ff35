"""A month of ten variables in GRIB through Airflow, as a user triggers it: the six, a dewpoint, a
pressure, a radiation and a maximum. The run adds the four columns to its table, loads every row with
all ten filled, and validates all ten against their catalogued bounds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from era5etl.core.tiles import TILE_COLUMN
from era5etl.core.variables import CATALOGUE, DEFAULT_VARIABLES
from era5etl.db import connect, drop_table
from era5etl.db.columns import table_columns

if TYPE_CHECKING:
    from tests.e2e.stack import AirflowStack

pytestmark = pytest.mark.e2e
pytest_plugins = ["tests.e2e.stack"]

DAG_ID = "era5_monthly"
MONTH = "2018-11"  # a month no other test loads
EXTRA = ["2m_dewpoint_temperature", "mean_sea_level_pressure", "surface_solar_radiation_downwards",
         "maximum_2m_temperature_since_previous_post_processing"]
TEN = [*DEFAULT_VARIABLES, *EXTRA]


def test_a_ten_variable_grib_month_runs_end_to_end(airflow_stack: AirflowStack) -> None:
    stack = airflow_stack
    table = f"{stack.table}_ten"  # a table of its own: the shared one keeps the six
    columns = [v.column for v in CATALOGUE if v.cds_name in TEN]
    stack.unpause()  # a triggered run starts only on an unpaused DAG; catch-up is off, so nothing else runs
    try:
        run_id = f"manual__ten_{MONTH}"
        stack.api("POST", f"dags/{DAG_ID}/dagRuns", {"logical_date": None, "dag_run_id": run_id, "conf": {
            "month": MONTH, "variables": TEN, "data_format": "grib", "table": table}})

        stack.wait_run_success(run_id, f"{run_id} loaded", timeout=400)
        want = stack.expected(MONTH)
        with connect(stack.db_url) as conn:
            # the six, then the four added (and, in tiles, the key the loader fills: not a data column)
            assert [c for c in table_columns(conn, table)[4:] if c != TILE_COLUMN] == columns
            filled = conn.execute(f"SELECT count(*), {', '.join(f'count({c})' for c in columns)} FROM {table}"
                                  ).fetchone()
            ledger = conn.execute("SELECT state, rows, validation_path FROM era5_months WHERE table_name = %s",
                                  (table,)).fetchone()
            stage = conn.execute("SELECT detail FROM era5_metrics WHERE table_name = %s AND task = 'stage'",
                                 (table,)).fetchone()
        assert filled == (want, *[want] * len(columns)), filled
        assert ledger is not None and ledger[:2] == ("validated", want), ledger
        assert stage is not None and stage[0]["variables"] == [v.cds_name for v in CATALOGUE if v.cds_name in TEN]
        result = json.loads(Path(ledger[2], "result.json").read_text())
        checked = {r["expectation_config"]["meta"]["check"] for r in result["results"]}
        assert {f"{c}_bounds" for c in columns} <= checked, checked
        fetch = stack.task_instances(run_id)["fetch"]
        assert fetch["state"] == "success", fetch
    finally:
        stack.pause()
        with connect(stack.db_url, autocommit=True) as conn:
            drop_table(conn, table)
            for book in ("era5_months", "era5_metrics", "era5_validation_days"):
                conn.execute(f"DELETE FROM {book} WHERE table_name = %s", (table,))
