"""A month the ledger records as pressure levels is finalized as one: its reload conf names its
dataset and levels (for its own dataset's DAG) and the reload job asks the pressure-level collection
for those levels. No database, no network."""

from __future__ import annotations

from datetime import UTC, datetime

from era5etl import settings
from era5etl.core.datasets import PRESSURE_LEVELS, SINGLE_LEVELS
from era5etl.pipeline.finalize import reload_job
from era5etl.pipeline.schedule import select_to_finalize

NOW = datetime(2025, 6, 1, tzinfo=UTC)


def _row(**extra: object) -> dict[str, object]:
    return {"table_name": "upper", "month": "2024-01", "area": "46/7/45/8", "grid": "0.25", "state": "validated",
            "expver": ["0005"], **extra}


def test_a_pressure_level_month_is_reloaded_as_one() -> None:
    [item] = select_to_finalize([_row(dataset="pressure-levels", levels=[500, 850])], NOW, after_months=3)
    assert item.conf("final-20250601") == {"month": "2024-01", "area": "46/7/45/8", "grid": "0.25",
                                           "table": "upper", "revision": "final-20250601",
                                           "dataset": "pressure-levels", "levels": [500, 850]}
    job = reload_job(item, "final-20250601", settings.load({}), "r")
    assert job.dataset is PRESSURE_LEVELS and job.levels == (500, 850) and job.table == "upper"
    assert job.request.cds_request()["pressure_level"] == ["500", "850"]
    assert job.variables == PRESSURE_LEVELS.base_variables


def test_rows_from_before_datasets_are_single_levels() -> None:
    [item] = select_to_finalize([_row()], NOW, after_months=3)
    assert item.dataset == "single-levels" and "dataset" not in item.conf("r")
    assert reload_job(item, "r", settings.load({}), "r").dataset is SINGLE_LEVELS
