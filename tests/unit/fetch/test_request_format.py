"""The data format of a month's request: from the setting, the trigger form and the CLI to the CDS
request, its hash, its staging folder and its cost limit. No network, no database."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from era5etl import settings
from era5etl.core.errors import InputError
from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import VARIABLES
from era5etl.fetch import MonthRequest, cost, plan
from era5etl.fetch.manifest import download_kind
from era5etl.fetch.request import DATA_FORMATS, FILE_KINDS, parse_data_format
from era5etl.pipeline.job import MonthJob


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


def test_a_staged_part_is_named_by_what_the_cds_sent(samples: Path) -> None:
    grib = samples / "grib1_2t_10u_10v_2d_tp_plus_wave_point_2015-08_2days_hourly.grib"
    nc = samples / "newcds_accum_tp_2025-05_hourly_expver0005.nc"
    zipped = samples / "newcds_zip_instant_accum_2023-09_hourly.nc"
    assert (download_kind(grib), download_kind(nc), download_kind(zipped)) == ("grib", "nc", "zip")
    from era5etl.core.files import file_kind

    assert file_kind(grib) in FILE_KINDS["grib"] and file_kind(grib) not in FILE_KINDS["netcdf"]
    assert file_kind(nc) in FILE_KINDS["netcdf"] and file_kind(nc) not in FILE_KINDS["grib"]
