"""One month of each dataset other than single levels, triggered over Airflow's REST API on its own DAG
from the monthly DAG factory (`era5_monthly_pressure_levels`, `era5_monthly_land`, and the monthly means'
`era5_monthly_monthly_means`, `era5_monthly_monthly_means_by_hour`, `era5_monthly_land_monthly_means`):
month-named runs, each loading its own table from the local CDS (through the real cdsapi) and validated.

The shared stack (``tests/e2e/stack.py``): its ERA5_TABLE is the single-level test table, so each run
names its own table in its conf, as a user loading another dataset beside single levels would.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest

from era5etl.core.grid import Area, Grid, expected_rows
from era5etl.core.months import Month
from era5etl.db import connect, drop_table

if TYPE_CHECKING:
    from tests.e2e.stack import AirflowStack

pytestmark = pytest.mark.e2e
pytest_plugins = ["tests.e2e.stack"]

MONTH = "2018-04"  # a month no other test loads
AREA = "46/7/45.5/7.5"  # 3 x 3 points at 0.25 degree
LAND_AREA = "46/8/45/9.2"  # 11 x 13 points at ERA5-Land's 0.1 degree, part sea in the local CDS's land mask


def _ledger(url: str, table: str) -> dict[str, Any]:
    with connect(url) as conn:
        cur = conn.execute("SELECT state, rows, expected_rows, dataset, levels, land_points, grid, validated_at,"
                           " validation_failed FROM era5_months WHERE table_name = %s AND month = %s",
                           (table, Month.parse(MONTH).start.date()))
        row = cur.fetchone()
        names = [d.name for d in cur.description or []]
    assert row is not None, table
    return dict(zip(names, row, strict=True))


def _count(url: str, table: str) -> tuple[int, int]:
    m = Month.parse(MONTH)
    with connect(url) as conn:
        row = conn.execute(f'SELECT count(*), min(time) FROM "{table}" WHERE time >= %s - interval \'1 day\''
                           " AND time < %s", (m.start, m.end)).fetchone()
    assert row is not None
    return int(row[0]), row[1]


def test_a_month_of_each_other_dataset_over_rest(airflow_stack: AirflowStack) -> None:
    stack = airflow_stack
    runs = {
        "era5_monthly_pressure_levels": {"month": MONTH, "area": AREA, "levels": [850, 500],
                                         "variables": ["temperature", "geopotential"],
                                         "table": f"e2e_pl_{uuid.uuid4().hex[:8]}"},
        "era5_monthly_land": {"month": MONTH, "area": LAND_AREA, "variables": ["2m_temperature", "total_precipitation"],
                              "table": f"e2e_land_{uuid.uuid4().hex[:8]}"},
        **{f"era5_monthly_{name}": {"month": MONTH, "area": AREA if name != "land_monthly_means" else LAND_AREA,
                                    "variables": ["2m_temperature", "total_precipitation"],
                                    "table": f"e2e_{name}_{uuid.uuid4().hex[:6]}"}
           for name in ("monthly_means", "monthly_means_by_hour", "land_monthly_means")},
    }
    try:
        for dag_id, conf in runs.items():
            stack.api("PATCH", f"dags/{dag_id}", {"is_paused": False})
            run_id = f"manual__{MONTH}"
            run = stack.api("POST", f"dags/{dag_id}/dagRuns",
                            {"logical_date": None, "dag_run_id": run_id, "conf": conf})
            assert (run["dag_run_id"], run["conf"]["month"]) == (run_id, MONTH), run

        for dag_id in runs:
            run_id = f"manual__{MONTH}"

            def done(dag_id: str = dag_id, run_id: str = run_id) -> bool:
                state = stack.api("GET", f"dags/{dag_id}/dagRuns/{quote(run_id)}")["state"]
                if state == "failed":
                    tis = stack.api("GET", f"dags/{dag_id}/dagRuns/{quote(run_id)}/taskInstances")
                    raise stack.fail(f"{dag_id} {run_id} failed: {tis}")
                return bool(state == "success")

            stack.wait_for(f"{dag_id} {run_id}", done, timeout=600)

        pl = runs["era5_monthly_pressure_levels"]
        entry = _ledger(stack.db_url, pl["table"])
        want = expected_rows(Month.parse(MONTH), Area.parse(AREA), Grid()) * 2
        assert (entry["state"], entry["rows"], entry["expected_rows"]) == ("validated", want, want), entry
        assert (entry["dataset"], entry["levels"]) == ("pressure-levels", [500, 850]), entry
        assert entry["validated_at"] is not None and entry["validation_failed"] == [], entry
        assert _count(stack.db_url, pl["table"])[0] == want

        land = runs["era5_monthly_land"]
        entry = _ledger(stack.db_url, land["table"])
        points = entry["land_points"]
        assert entry["dataset"] == "land" and entry["grid"] == "0.1" and 0 < points < 11 * 13, entry
        want = Month.parse(MONTH).hours * points
        assert (entry["state"], entry["rows"], entry["expected_rows"]) == ("validated", want, want), entry
        assert entry["validated_at"] is not None and entry["validation_failed"] == [], entry
        rows, first = _count(stack.db_url, land["table"])
        assert rows == want and first == Month.parse(MONTH).start, "the previous day's 23 UTC is not a row"

        # The monthly means: a row a month and point (24 by hour of day; ERA5-Land's land points).
        for name, dataset, times in (("monthly_means", "monthly-means", 1),
                                     ("monthly_means_by_hour", "monthly-means-by-hour", 24),
                                     ("land_monthly_means", "land-monthly-means", 1)):
            entry = _ledger(stack.db_url, runs[f"era5_monthly_{name}"]["table"])
            points = entry["land_points"] if dataset == "land-monthly-means" else Area.parse(AREA).points(Grid())
            want = times * points
            assert entry["dataset"] == dataset and points > 0, entry
            assert (entry["state"], entry["rows"], entry["expected_rows"]) == ("validated", want, want), entry
            assert entry["validated_at"] is not None and entry["validation_failed"] == [], entry
            assert _count(stack.db_url, runs[f"era5_monthly_{name}"]["table"]) == (want, Month.parse(MONTH).start)
    finally:
        for dag_id in runs:
            stack.api("PATCH", f"dags/{dag_id}", {"is_paused": True})
        with connect(stack.db_url, autocommit=True) as conn:
            for conf in runs.values():
                drop_table(conn, conf["table"])
