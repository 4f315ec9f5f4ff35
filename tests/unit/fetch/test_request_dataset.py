"""A month's request carries its dataset: the collection it is sent to and hashed with, the dataset's
fixed keys, the pressure levels asked for, their cost. Single-level hashes are those of before the
datasets, so existing staging folders keep their names. No network, no database."""

from __future__ import annotations

import hashlib
import json

import pytest

from era5etl import settings
from era5etl.core.datasets import PRESSURE_LEVELS, SINGLE_LEVELS
from era5etl.core.errors import InputError
from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import VARIABLES, parse_list
from era5etl.fetch import MonthRequest, plan
from era5etl.fetch.request import RequestPart

AREA = Area.parse("50/5/45/10")
PL_VARS = tuple(parse_list("temperature,geopotential", catalogue=PRESSURE_LEVELS.catalogue))


def _old_hash(request: dict[str, object]) -> str:
    """The hash as fetch/request.py computed it before datasets: the collection under "dataset"."""
    canonical = json.dumps({"dataset": "reanalysis-era5-single-levels", **request}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _old_request(month: Month, data_format: str = "netcdf") -> dict[str, object]:
    return {"product_type": ["reanalysis"], "variable": [v.cds_name for v in VARIABLES],
            "year": [f"{month.year:04d}"], "month": [f"{month.month:02d}"],
            "day": [f"{d:02d}" for d in range(1, month.days + 1)], "time": [f"{h:02d}:00" for h in range(24)],
            "area": AREA.cds, "grid": Grid().cds, "data_format": data_format, "download_format": "unarchived"}


@pytest.mark.parametrize("data_format", ["netcdf", "grib"])
def test_single_level_requests_and_hashes_are_unchanged(data_format: str) -> None:
    month = Month(2024, 2)
    req = MonthRequest(month, AREA, Grid(), VARIABLES, data_format=data_format)  # type: ignore[arg-type]
    assert req.dataset is SINGLE_LEVELS and req.levels == ()
    assert req.cds_request() == _old_request(month, data_format)
    assert req.hash == _old_hash(_old_request(month, data_format))
    explicit = MonthRequest(month, AREA, Grid(), VARIABLES, data_format=data_format,  # type: ignore[arg-type]
                            dataset=SINGLE_LEVELS)
    assert explicit.hash == req.hash
    revised = MonthRequest(month, AREA, Grid(), VARIABLES, revision="final-1")
    assert revised.hash == _old_hash({**_old_request(month), "revision": "final-1"})


def test_a_pressure_level_request() -> None:
    req = MonthRequest(Month(2024, 1), AREA, Grid(), PL_VARS, dataset=PRESSURE_LEVELS, levels=(850, 500))
    body = req.cds_request()
    assert body["product_type"] == ["reanalysis"]
    assert body["pressure_level"] == ["500", "850"]
    assert body["variable"] == ["temperature", "geopotential"]
    assert req.levels == (500, 850)
    # The collection is part of the key; and the cost counts every level.
    canonical = json.dumps({"dataset": "reanalysis-era5-pressure-levels", **body}, sort_keys=True)
    assert req.hash == hashlib.sha256(canonical.encode()).hexdigest()[:16]
    one = MonthRequest(Month(2024, 1), AREA, Grid(), PL_VARS, dataset=PRESSURE_LEVELS, levels=(500,))
    assert req.cost().fields == 2 * one.cost().fields
    assert req.hash != one.hash


def test_no_levels_asked_is_all_of_them() -> None:
    req = MonthRequest(Month(2024, 1), AREA, Grid(), PL_VARS, dataset=PRESSURE_LEVELS)
    assert req.levels == PRESSURE_LEVELS.levels
    assert len(req.cds_request()["pressure_level"]) == 37


def test_parts_keep_the_collection_and_stay_under_the_limit() -> None:
    req = MonthRequest(Month(2024, 1), AREA, Grid(), PL_VARS, dataset=PRESSURE_LEVELS)
    parts = plan(req, cost_limit=req.cost().value / 5)
    assert len(parts) > 1
    assert all(p.cost().value <= req.cost().value / 5 for p in parts)
    assert all(p.cds_request()["pressure_level"] == req.cds_request()["pressure_level"] for p in parts)
    part = RequestPart(req, 0, 1, req.variables, (1,))
    canonical = json.dumps({"dataset": PRESSURE_LEVELS.collection, **part.cds_request()}, sort_keys=True)
    assert part.hash == hashlib.sha256(canonical.encode()).hexdigest()[:16]


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(InputError, match="not variables of pressure-levels"):
        MonthRequest(Month(2024, 1), AREA, Grid(), VARIABLES, dataset=PRESSURE_LEVELS)
    with pytest.raises(InputError, match="not one of"):
        MonthRequest(Month(2024, 1), AREA, Grid(), PL_VARS, dataset=PRESSURE_LEVELS, levels=(600, 1013))
    with pytest.raises(InputError, match="no pressure levels"):
        MonthRequest(Month(2024, 1), AREA, Grid(), VARIABLES, levels=(500,))


def test_settings_per_dataset() -> None:
    base = settings.load({})
    assert (base.dataset, base.table, base.levels) == ("single-levels", "weather", ())
    pl = settings.load({"ERA5_DATASET": "Pressure-Levels", "ERA5_LEVELS": "850,500"})
    assert (pl.dataset, pl.table, pl.levels) == ("pressure-levels", "weather_pressure_levels", (500, 850))
    assert pl.variables == PRESSURE_LEVELS.default_variables
    named = settings.load({"ERA5_DATASET": "pressure-levels", "ERA5_TABLE": "upper_air", "ERA5_VARIABLES": "w,vo"})
    assert (named.table, named.variables) == ("upper_air", ("vertical_velocity", "vorticity"))
    with pytest.raises(InputError, match="ERA5_DATASET"):
        settings.load({"ERA5_DATASET": "model-levels"})
    with pytest.raises(InputError, match=r"ERA5_LEVELS=.500.: single-levels has no pressure levels"):
        settings.load({"ERA5_LEVELS": "500"})
    with pytest.raises(InputError, match="2m_temperature"):
        settings.load({"ERA5_DATASET": "pressure-levels", "ERA5_VARIABLES": "2m_temperature"})
