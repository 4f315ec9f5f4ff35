"""A month's CDS request (fetch.request), no network, no database:

* its dataset: the collection it is sent to and hashed with, the dataset's
fixed keys, the pressure levels asked for, their cost. Single-level hashes are those of before the
datasets, so existing staging folders keep their names.
* its data format: from the setting, the trigger form and the CLI to the CDS
request, its hash, its staging folder and its cost limit.
* an ERA5-Land month is fetched with the hour before it: one CDS job more, the previous day's 23 UTC
(the CDS crosses days with hours), of the same variables, area and grid; none before the collection's
first month. The month's hash (its staging folder) is the month's request alone.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from era5etl import settings
from era5etl.core.datasets import LAND, PRESSURE_LEVELS, SINGLE_LEVELS
from era5etl.core.errors import InputError
from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import VARIABLES, parse_list
from era5etl.fetch import MonthRequest, cost, plan
from era5etl.fetch.request import DATA_FORMATS, FILE_KINDS, RequestPart, parse_data_format
from era5etl.pipeline.job import MonthJob, dataset_grid

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


# -- the data format --------------------------------------------------------------------------------


def request(data_format: Any = "netcdf", area: str = "50/5/45/10", revision: str = "") -> MonthRequest:
    return MonthRequest(Month(2024, 1), Area.parse(area), Grid(), VARIABLES, revision=revision,
                        data_format=data_format)


def test_the_request_asks_for_its_format_and_netcdf_stays_the_default() -> None:
    assert MonthRequest(Month(2024, 1), Area.parse("50/5/45/10"), Grid(), VARIABLES).data_format == "netcdf"
    assert request().cds_request()["data_format"] == "netcdf"
    assert request("grib").cds_request()["data_format"] == "grib"
    assert set(DATA_FORMATS) == {"netcdf", "grib"} == set(FILE_KINDS)


def test_the_same_month_in_two_formats_is_two_requests() -> None:
    nc, grib = request("netcdf"), request("grib")
    assert nc.hash != grib.hash
    assert nc.folder(Path("/staging")) != grib.folder(Path("/staging"))
    # Each part is its own CDS job, keyed by its own hash: no part of one format is reused by the other.
    assert {p.hash for p in plan(nc)}.isdisjoint(p.hash for p in plan(grib))
    assert all(p.cds_request()["data_format"] == "grib" for p in plan(grib))
    # A revision still names a fresh download of a GRIB request.
    assert request("grib", revision="final-20240615").hash not in (grib.hash, nc.hash)


def test_grib_is_estimated_and_split_against_its_own_larger_limit() -> None:
    # The whole globe for a month of six variables: 4,464 fields. NetCDF weighs them by the area.
    nc, grib = request("netcdf", "90/-180/-90/179.75"), request("grib", "90/-180/-90/179.75")
    assert (nc.cost().data_format, grib.cost().data_format) == ("netcdf", "grib")
    assert grib.cost().limit() == cost.DEFAULT_LIMITS["grib"] > nc.cost().limit() == cost.DEFAULT_LIMITS["netcdf"]
    assert grib.cost().value == grib.cost().fields < nc.cost().value
    # A limit between the two costs: NetCDF must be split, the same GRIB month goes as one job.
    between = (grib.cost().value + nc.cost().value) / 2
    assert len(plan(grib, between)) == 1
    assert len(plan(nc, between)) > 1
    # Without a configured limit each format gets its own: a month costing more than NetCDF's limit in
    # fields, under GRIB's, is one GRIB job and several NetCDF ones.
    decade_of_days = MonthRequest(Month(2024, 1), Area.parse("90/-180/-90/179.75"), Grid(), VARIABLES * 15,
                                  data_format="grib")
    fields = decade_of_days.cost().fields
    assert cost.DEFAULT_LIMITS["netcdf"] < fields <= cost.DEFAULT_LIMITS["grib"]
    assert len(plan(decade_of_days)) == 1
    assert len(plan(MonthRequest(Month(2024, 1), Area.parse("90/-180/-90/179.75"), Grid(), VARIABLES * 15))) > 1


def test_a_grib_split_ignores_step_types_a_netcdf_split_keeps_them_apart() -> None:
    # Three parts' worth of variables a day: NetCDF groups instant and accum variables apart where that
    # costs no extra part; a GRIB file holds both kinds, so its parts are just even runs.
    limit = 24 * 2.0
    nc = plan(request("netcdf", "90/-180/-90/179.75"), limit * 2.0)
    grib = plan(request("grib", "90/-180/-90/179.75"), limit)
    for part in nc:
        assert len({v.step_type for v in part.variables}) == 1
    assert sorted(v.cds_name for p in grib if p.days[0] == 1 for v in p.variables) == sorted(
        v.cds_name for v in VARIABLES)


@pytest.mark.parametrize("text", ["xml", "netcdf3", "", "grib2"])
def test_an_unknown_format_is_refused_with_the_ones_there_are(text: str) -> None:
    with pytest.raises(InputError, match="netcdf, grib"):
        parse_data_format(text)
    with pytest.raises(InputError, match="netcdf, grib"):
        request(text)
    assert parse_data_format(" GRIB ") == "grib"


def test_the_setting_chooses_the_format_and_a_caller_overrides_it() -> None:
    assert settings.load({}).data_format == "netcdf"
    grib_settings = settings.load({"ERA5_DATA_FORMAT": "GRIB"})
    assert grib_settings.data_format == "grib"
    job = MonthJob.create(grib_settings, Month(2024, 1), run_id="t")
    assert job.request.data_format == "grib" and job.request.cds_request()["data_format"] == "grib"
    assert MonthJob.create(grib_settings, Month(2024, 1), run_id="t", data_format="netcdf").request.data_format \
        == "netcdf"
    with pytest.raises(InputError, match="ERA5_DATA_FORMAT='netcdf4'"):
        settings.load({"ERA5_DATA_FORMAT": "netcdf4"})
    with pytest.raises(InputError, match="data format 'hdf'"):
        MonthJob.create(grib_settings, Month(2024, 1), run_id="t", data_format="hdf")


def test_the_trigger_form_offers_the_formats_and_the_run_uses_its_choice() -> None:
    from era5etl.airflow import tasks

    params = tasks.default_params(settings.load({}))
    schema = params["data_format"].schema
    assert schema["title"] and params["data_format"].description
    assert params["data_format"].value == "netcdf"
    jsonschema.validate("grib", schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate("zarr", schema)
    context = {"params": {"month": "2024-02", "data_format": "grib"}, "run_id": "manual__x"}
    job = tasks.job(context)
    assert (job.month, job.request.data_format) == (Month(2024, 2), "grib")
    # A run created before the param existed has none: the setting decides.
    assert tasks.job({"params": {"month": "2024-02"}, "run_id": "old"}).request.data_format == "netcdf"


def test_run_month_takes_data_format_and_refuses_another_with_exit_2() -> None:
    from era5etl.cli import build_parser

    args = build_parser().parse_args(["run-month", "2024-01", "--data-format", "GRIB"])
    assert args.data_format == "grib"
    assert build_parser().parse_args(["run-month", "2024-01"]).data_format is None
    bad = subprocess.run([sys.executable, "-m", "era5etl", "run-month", "2024-01", "--data-format", "zarr"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert "--data-format" in bad.stderr and "grib" in bad.stderr


# -- ERA5-Land --------------------------------------------------------------------------------------


LAND_AREA = Area.parse("46/8/45/9.2")
LAND_01 = Grid(Decimal("0.1"))
LAND_VARS = tuple(parse_list("2m_temperature,total_precipitation", catalogue=LAND.catalogue))


def test_a_land_month_has_a_part_for_the_previous_days_23utc() -> None:
    request = MonthRequest(Month(2020, 3), LAND_AREA, LAND_01, LAND_VARS, dataset=LAND)
    parts = plan(request)
    assert [p.previous_hour for p in parts] == [False, True]
    assert {p.count for p in parts} == {2} and [p.index for p in parts] == [0, 1]
    month, before = (p.cds_request() for p in parts)
    assert "product_type" not in month and month["grid"] == ["0.1", "0.1"]
    assert (before["year"], before["month"], before["day"], before["time"]) == (["2020"], ["02"], ["29"], ["23:00"])
    assert {k: v for k, v in before.items() if k not in ("year", "month", "day", "time")} == \
        {k: v for k, v in month.items() if k not in ("year", "month", "day", "time")}
    assert parts[0].hash != parts[1].hash and "23 UTC" in parts[1].label
    # The month's folder is named by the month's request, not by its parts.
    assert request.hash == MonthRequest(Month(2020, 3), LAND_AREA, LAND_01, LAND_VARS, dataset=LAND).hash


def test_january_asks_for_the_last_day_of_the_year_before_and_the_first_month_for_none() -> None:
    before = plan(MonthRequest(Month(2020, 1), LAND_AREA, LAND_01, LAND_VARS, dataset=LAND))[-1].cds_request()
    assert (before["year"], before["month"], before["day"]) == (["2019"], ["12"], ["31"])
    assert [p.previous_hour for p in plan(MonthRequest(Month(1950, 1), LAND_AREA, LAND_01, LAND_VARS, dataset=LAND))] \
        == [False]


def test_single_levels_have_no_previous_hour_part() -> None:
    request = MonthRequest(Month(2020, 3), LAND_AREA, Grid(), tuple(parse_list("2m_temperature")),
                           dataset=SINGLE_LEVELS)
    assert [p.previous_hour for p in plan(request)] == [False]


def test_a_land_month_is_on_the_01_degree_grid_unless_told_a_multiple_of_it() -> None:
    s = settings.load({})
    assert dataset_grid(s, LAND) == LAND_01 and dataset_grid(s, SINGLE_LEVELS) == Grid()
    assert dataset_grid(s, LAND, "0.5") == Grid(Decimal("0.5"))
    with pytest.raises(InputError, match=r"multiple of 0\.1"):
        dataset_grid(s, LAND, "0.25")
    with pytest.raises(InputError, match=r"multiple of 0\.25"):
        Grid.parse("0.1")
    job = MonthJob.create(s, Month(2020, 1), run_id="t", dataset="land", area=str(LAND_AREA))
    assert job.grid == LAND_01 and job.table == "weather_land" and job.variables == tuple(
        v for v in LAND.catalogue if v.cds_name in LAND.default_variables)
    assert len(plan(job.request)) == 2


@pytest.mark.parametrize(("name", "product", "times"), [
    ("monthly-means", "monthly_averaged_reanalysis", 1),
    ("monthly-means-by-hour", "monthly_averaged_reanalysis_by_hour_of_day", 24),
    ("land-monthly-means", "monthly_averaged_reanalysis", 1)])
def test_a_month_of_monthly_means_is_asked_by_month_and_time_in_one_job(name: str, product: str, times: int) -> None:
    from era5etl.core.datasets import DATASETS
    from localcds import synth

    job = MonthJob.create(settings.load({}), Month(2020, 2), run_id="t", dataset=name, area="46/8/45/9")
    request = job.request.cds_request()
    assert "day" not in request and (request["year"], request["month"]) == (["2020"], ["02"])
    assert request["product_type"] == [product] and len(request["time"]) == times
    assert sorted(request["variable"]) == sorted(DATASETS[name].default_variables)
    parts = plan(job.request)
    assert [p.cds_request() for p in parts] == [request] and "2020-02" in parts[0].label
    # The local CDS takes it as the real one would (it refuses a day, a time off 00:00 for the means).
    assert synth.parse_request(request, DATASETS[name].collection).months == (Month(2020, 2),)
    # Rows: a point's one time a month (24 by hour of day), not its 696 hours.
    assert job.expected_rows == times * job.area.points(job.grid)
