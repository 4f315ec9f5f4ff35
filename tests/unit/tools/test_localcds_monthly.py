"""The local CDS's monthly means (tools/localcds/synth/monthly.py) against the real CDS files of
tests/data/era5-samples: the same layout, attributes and stamps; and their values the means of the
local CDS's own hourly values, an accumulation's monthly mean a mean daily total (24 x the hour's)."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import eccodes
import netCDF4
import numpy as np
import pytest

from localcds import synth
from localcds.synth.monthly import LAND_MONTHLY_DATASET, MONTHLY_DATASET

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "era5-samples"
NOW = datetime(2026, 1, 1, tzinfo=UTC)
# Grid-specific values differ between any two requests; everything else must be the real file's.
GRID_KEYS = {"GRIB_numberOfPoints", "GRIB_Nx", "GRIB_Ny", "GRIB_latitudeOfFirstGridPointInDegrees",
             "GRIB_latitudeOfLastGridPointInDegrees", "GRIB_longitudeOfFirstGridPointInDegrees",
             "GRIB_longitudeOfLastGridPointInDegrees"}


def _request(product: str = "monthly_averaged_reanalysis", **over: Any) -> dict[str, Any]:
    hours = ["00:00"] if product == "monthly_averaged_reanalysis" else [f"{h:02d}:00" for h in range(24)]
    return {"product_type": [product], "variable": ["2m_temperature", "total_precipitation"], "year": ["2020"],
            "month": ["01", "02"], "time": hours, "area": [46, 8, 45, 9], "data_format": "netcdf",
            "download_format": "unarchived", **over}


def _members(path: Path, tmp: Path) -> dict[str, Path]:
    with zipfile.ZipFile(path) as zf:
        zf.extractall(tmp)
        return {name: tmp / name for name in zf.namelist()}


def _layout(path: Path) -> dict[str, Any]:
    with netCDF4.Dataset(path) as ds:
        history, _ = json.JSONDecoder().raw_decode(ds.history.split(" with ", 1)[1])
        return {
            "global": sorted(ds.ncattrs()), "filter": history["filter_by_keys"],
            "dims": list(ds.dimensions),
            "variables": {n: (str(v.dtype), v.dimensions,
                              {k: repr(v.getncattr(k)) for k in v.ncattrs() if k not in GRID_KEYS},  # NaN fills
                              v.filters() if v.dimensions else None) for n, v in ds.variables.items()},
            "hours": sorted({int(t) % 86400 // 3600 for t in ds["valid_time"][:]}),
            "days": sorted({datetime.fromtimestamp(int(t), UTC).day for t in ds["valid_time"][:]}),
        }


def test_monthly_means_netcdf_is_laid_out_as_the_real_new_cds_files(tmp_path: Path) -> None:
    path = synth.write_download(_request(), tmp_path / "download", dataset=MONTHLY_DATASET, now=NOW)
    members = _members(path, tmp_path / "zip")
    assert sorted(members) == ["data_stream-moda_stepType-avgad.nc", "data_stream-moda_stepType-avgua.nc"]
    for name, real in (("data_stream-moda_stepType-avgua.nc", "era5mm_newcds_nc_t2m_avgua_2005-2024_63x35.nc"),
                       ("data_stream-moda_stepType-avgad.nc", "era5mm_newcds_nc_tp_avgad_2005-2024_63x35.nc")):
        ours, theirs = _layout(members[name]), _layout(SAMPLES / real)
        assert ours == theirs, name  # dims, dtypes, attributes, compression, stream, step type, stamps
    # The stamps: the instantaneous means at 00 UTC on the 1st, the mean daily totals at 06 UTC.
    assert _layout(members["data_stream-moda_stepType-avgad.nc"])["hours"] == [6]


def test_by_hour_of_day_netcdf_and_grib_match_the_real_by_hour_file(tmp_path: Path) -> None:
    request = _request("monthly_averaged_reanalysis_by_hour_of_day", month=["01"])
    nc = _members(synth.write_download(request, tmp_path / "nc", dataset=MONTHLY_DATASET, now=NOW), tmp_path / "z")
    assert sorted(nc) == ["data_stream-mnth_stepType-avgas.nc", "data_stream-mnth_stepType-avgua.nc"]
    grib = synth.write_download({**request, "data_format": "grib"}, tmp_path / "g", dataset=MONTHLY_DATASET,
                                now=NOW)

    def messages(path: Path, limit: int) -> dict[str, set[tuple[str, ...]]]:
        out: dict[str, set[tuple[str, ...]]] = {}
        with path.open("rb") as f:
            for _ in range(limit):
                if (h := eccodes.codes_grib_new_from_file(f)) is None:
                    break
                keys = ("marsClass", "marsStream", "marsType", "stepType", "timeRangeIndicator", "edition",
                        "dataTime", "stepRange", "validityTime")
                out.setdefault(eccodes.codes_get_string(h, "shortName"), set()).add(
                    tuple(eccodes.codes_get_string(h, k) for k in keys))
                eccodes.codes_release(h)
        return out

    # The real file's first month: 24 hours of its 7 parameters.
    ours, theirs = messages(grib, 48), messages(SAMPLES / "era5mm_byhour_grib1_mnth_7vars_2004-2006_9x9.grib", 24 * 7)
    for short in ("2t", "tp"):
        assert ours[short] == theirs[short], short  # 24 hours: bases, steps, validity hours, step types
    # NetCDF: the accumulation's 24 stamps run from 07 UTC on the 1st to 06 UTC on the 2nd, in time order.
    with netCDF4.Dataset(nc["data_stream-mnth_stepType-avgas.nc"]) as ds:
        stamps = [datetime.fromtimestamp(int(t), UTC) for t in ds["valid_time"][:]]
        assert ds["tp"].GRIB_stepType == "avgas"
    assert stamps == sorted(stamps) and (stamps[0].day, stamps[0].hour, stamps[-1].day, stamps[-1].hour) == (1, 7, 2, 6)


def test_land_monthly_grib_is_laid_out_as_the_real_one(tmp_path: Path) -> None:
    request = _request(variable=["2m_temperature"], area=[13, -70, 11, -67], data_format="grib", month=["01"])
    path = synth.write_download(request, tmp_path / "g", dataset=LAND_MONTHLY_DATASET, now=NOW)

    def first(path: Path) -> dict[str, str]:
        with path.open("rb") as f:
            h = eccodes.codes_grib_new_from_file(f)
            try:
                return {k: eccodes.codes_get_string(h, k) for k in (
                    "edition", "marsClass", "marsStream", "marsType", "stepType", "timeRangeIndicator",
                    "bitmapPresent", "dataTime", "stepRange", "iDirectionIncrementInDegrees")}
            finally:
                eccodes.codes_release(h)

    ours = first(path)
    theirs = first(SAMPLES / "era5land-monthly_grib1-moda_stl1_1950-01..2025-01_901msgs_21x31_bitmap-sea.grib")
    assert ours == theirs


def _hourly_mean(tmp_path: Path, short: str, hours: range, dataset: str = synth.DATASET) -> np.ndarray[Any, Any]:
    """The local CDS's own hourly values of January 2020 averaged: over every hour, or per hour of day."""
    request = {"variable": [{"t2m": "2m_temperature", "tp": "total_precipitation"}[short]], "year": ["2020"],
               "month": ["01"], "day": [f"{d:02d}" for d in range(1, 32)], "time": [f"{h:02d}:00" for h in hours],
               "area": [46, 8, 45, 9], "data_format": "netcdf", "download_format": "unarchived"}
    if dataset == synth.DATASET:
        request["product_type"] = ["reanalysis"]
    path = synth.write_download(request, tmp_path / f"hourly-{short}-{len(hours)}", dataset=dataset, now=NOW)
    with netCDF4.Dataset(path) as ds:
        return np.asarray(ds[short][:], dtype=np.float64)


def test_monthly_values_are_the_hourly_means_and_accumulations_a_mean_daily_total(tmp_path: Path) -> None:
    path = synth.write_download(_request(month=["01"]), tmp_path / "m", dataset=MONTHLY_DATASET, now=NOW)
    members = _members(path, tmp_path / "z")
    with netCDF4.Dataset(members["data_stream-moda_stepType-avgua.nc"]) as ds:
        t2m = np.asarray(ds["t2m"][0], dtype=np.float64)
    with netCDF4.Dataset(members["data_stream-moda_stepType-avgad.nc"]) as ds:
        tp = np.asarray(ds["tp"][0], dtype=np.float64)
        assert ds["tp"].units == "m"  # as the real file says, although it is m a day
    hourly_t2m, hourly_tp = _hourly_mean(tmp_path, "t2m", range(24)), _hourly_mean(tmp_path, "tp", range(24))
    # Each hourly value is on a 16-bit lattice, each mean too: a few lattice steps apart at most.
    np.testing.assert_allclose(t2m, hourly_t2m.mean(axis=0), atol=0.02)
    np.testing.assert_allclose(tp, 24 * hourly_tp.mean(axis=0), atol=2e-4)
    assert np.abs(tp - hourly_tp.mean(axis=0)).max() > 1e-3, "a day's amount, not an hour's"


def test_requests_the_monthly_collections_refuse() -> None:
    with pytest.raises(synth.RequestError, match="day"):
        synth.parse_request({**_request(), "day": ["01"]}, MONTHLY_DATASET)
    with pytest.raises(synth.RequestError, match="00:00"):
        synth.parse_request({**_request(), "time": ["12:00"]}, MONTHLY_DATASET)
    with pytest.raises(synth.RequestError, match="product_type"):
        synth.parse_request(_request("monthly_averaged_reanalysis_by_hour_of_day"), LAND_MONTHLY_DATASET)
    with pytest.raises(synth.NoDataError, match="published"):  # a month appears about five days after it ends
        synth.write_download(_request(year=["2025"], month=["12"]), Path("/nonexistent/x"), dataset=MONTHLY_DATASET,
                             now=datetime(2026, 1, 3, tzinfo=UTC))
