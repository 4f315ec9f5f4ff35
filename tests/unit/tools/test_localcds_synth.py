"""The synthetic ERA5 generator: grids, times, values, and the file layout it writes."""

from __future__ import annotations

import time
import zipfile
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import netCDF4
import numpy as np
import pytest
import xarray as xr

from era5etl.core.grid import location_ids
from era5etl.core.months import Month
from localcds import synth

NOW = datetime(2025, 11, 22, 12, 0, tzinfo=UTC)


def request(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "product_type": ["reanalysis"],
        "variable": ["2m_temperature", "total_precipitation"],
        "year": ["2024"],
        "month": ["01"],
        "day": ["01", "02"],
        "time": [f"{h:02d}:00" for h in range(24)],
        "area": [50, 5, 45, 10],
        "grid": ["0.25", "0.25"],
        "data_format": "netcdf",
        "download_format": "unarchived",
    }
    return {**base, **overrides}


def load(path: Path, tmp: Path) -> dict[str, xr.Dataset]:
    """Every data variable of a download (NetCDF or ZIP), loaded into memory."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            zf.extractall(tmp)
            files = [tmp / n for n in zf.namelist()]
    else:
        files = [path]
    out = {}
    for f in files:
        with xr.open_dataset(f) as ds:
            loaded = ds.load()
        for name in loaded.data_vars:
            out[str(name)] = loaded
    return out


# -- parsing --------------------------------------------------------------------------------------


def test_grid_is_the_lattice_anchored_at_zero_edges_inclusive() -> None:
    req = synth.parse_request(request(area=[50.1, 4.9, 44.9, 10.1]))
    assert req.latitudes[0] == 50.0 and req.latitudes[-1] == 45.0 and len(req.latitudes) == 21
    assert req.longitudes[0] == 5.0 and req.longitudes[-1] == 10.0 and len(req.longitudes) == 21
    coarse = synth.parse_request(request(area=[50, 5, 45, 10], grid=["1.5", "1.5"]))
    assert coarse.latitudes == (49.5, 48.0, 46.5, 45.0)
    assert coarse.longitudes == (6.0, 7.5, 9.0)
    # The stager maps points to the table's global 0.25 grid; every generated point must be on it.
    assert location_ids(np.array(req.latitudes)[:, None], np.array(req.longitudes)[None, :]).shape == (21, 21)


def test_longitudes_keep_the_requests_convention() -> None:
    # As the real sample shows (west -8.5 came back as -8.5): no wrapping into 0..360.
    assert synth.parse_request(request(area=[40.5, -8.5, 39.5, -7.5])).longitudes == (
        -8.5, -8.25, -8.0, -7.75, -7.5)
    across = synth.parse_request(request(area=[1, 179.5, 0, -179.5]))
    assert across.longitudes == (179.5, 179.75, 180.0, 180.25, 180.5)
    world = synth.parse_request(request(area=None))
    assert (world.longitudes[0], world.longitudes[-1], len(world.longitudes)) == (0.0, 359.75, 1440)
    assert (world.latitudes[0], world.latitudes[-1], len(world.latitudes)) == (90.0, -90.0, 721)


def test_days_that_do_not_exist_are_dropped_and_times_sorted() -> None:
    req = synth.parse_request(request(month=["04", "02"], year="2023", day=[str(d) for d in range(31, 0, -1)],
                                      time=["12:00", "00:00"]))
    assert len(req.times) == (28 + 30) * 2
    assert req.times[0] == datetime(2023, 2, 1, 0, tzinfo=UTC)
    assert req.times[-1] == datetime(2023, 4, 30, 12, tzinfo=UTC)
    assert list(req.times) == sorted(req.times)
    assert req.months == (Month(2023, 2), Month(2023, 4))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"variable": ["2m_temperature", "nope"]}, "variable"),
        ({"variable": []}, "variable"),
        ({"data_format": "netcdf3"}, "data_format"),
        ({"product_type": ["ensemble_members"]}, "product_type"),
        ({"year": []}, "year"),
        ({"time": ["00:30"]}, "time"),
        ({"area": [45, 5, 50, 10]}, "area"),
        ({"area": [50.2, 5.1, 50.1, 5.2]}, "no point"),
        ({"grid": ["0"]}, "grid"),
        ({"download_format": "tgz"}, "download_format"),
    ],
)
def test_requests_the_cds_would_refuse(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(synth.RequestError, match=message):
        synth.parse_request(request(**overrides))


def test_archive_choice_follows_the_step_types() -> None:
    assert synth.parse_request(request()).archived  # instant + accum: two files, one ZIP
    assert not synth.parse_request(request(variable=["total_precipitation", "snowfall"])).archived
    assert not synth.parse_request(request(variable=["2m_temperature", "total_cloud_cover"])).archived
    assert synth.parse_request(request(variable=["snowfall"], download_format="zip")).archived


def test_expver_is_era5t_for_the_last_three_months() -> None:
    today = date(2025, 11, 22)
    assert synth.expver_for(Month(2025, 7), today) == "0001"
    assert synth.expver_for(Month(2025, 8), today) == "0005"
    assert synth.expver_for(Month(2025, 11), today) == "0005"
    assert synth.expver_for(Month(2024, 12), date(2025, 4, 1)) == "0001"


# -- values ---------------------------------------------------------------------------------------


ALL = ["2m_temperature", "10m_u_component_of_wind", "10m_v_component_of_wind", "2m_dewpoint_temperature",
       "surface_pressure", "mean_sea_level_pressure", "total_cloud_cover", "total_precipitation", "snowfall"]


def test_values_are_plausible_for_every_variable(tmp_path: Path) -> None:
    # Jan, a box from the Alps to Scandinavia: snow must fall somewhere, dew point stay below temperature.
    path = synth.write_download(request(variable=ALL, area=[70, 5, 40, 25], grid=["1", "1"],
                                        day=[str(d) for d in range(1, 15)]), tmp_path / "d", now=NOW)
    v = load(path, tmp_path / "x")
    t2m, d2m = v["t2m"]["t2m"].values, v["d2m"]["d2m"].values
    assert t2m.min() > 220 and t2m.max() < 310
    assert (d2m < t2m).all()
    # Pseudo-orography reaches ~2.7 km, where the surface pressure is ~70 kPa.
    assert v["sp"]["sp"].values.min() > 60_000 and v["msl"]["msl"].values.max() < 106_000
    assert (v["sp"]["sp"].values <= v["msl"]["msl"].values + 1).all()
    for wind in ("u10", "v10"):
        assert 0.5 < np.abs(v[wind][wind].values).mean() < 15 and np.abs(v[wind][wind].values).max() < 40
    tcc = v["tcc"]["tcc"].values
    assert tcc.min() == 0.0 and tcc.max() == 1.0 and 0.3 < tcc.mean() < 0.8
    tp, sf = v["tp"]["tp"].values, v["sf"]["sf"].values
    assert tp.min() == 0.0 and 0.0 < tp.mean() < 0.002 and tp.max() < 0.03
    assert (sf >= 0).all() and (sf <= tp).all() and sf.max() > 0
    # Rain falls under cloud.
    assert tcc[tp > 0].mean() > tcc[tp == 0].mean()
    for ds in v.values():
        for name in ds.data_vars:
            assert ds[name].dtype == np.float32 and not np.isnan(ds[name].values).any()


def test_temperature_follows_latitude_and_local_solar_time(tmp_path: Path) -> None:
    path = synth.write_download(
        request(variable=["2m_temperature"], area=[60, -120, -60, 120], grid=["30", "30"], month=["07"],
                day=[str(d) for d in range(1, 29)]), tmp_path / "t.nc", now=NOW)
    with xr.open_dataset(path) as ds:
        t2m = ds["t2m"].load()
    by_lat = t2m.mean(("valid_time", "longitude"))
    assert float(by_lat.sel(latitude=0)) > float(by_lat.sel(latitude=60)) + 10
    assert float(by_lat.sel(latitude=30)) > float(by_lat.sel(latitude=-30))  # July: the north is in summer
    # Afternoon (15h local) warmer than before dawn (03h local), at every longitude.
    hours = t2m["valid_time"].dt.hour.values
    for lon in t2m["longitude"].values:
        local = (hours + lon / 15) % 24
        column = t2m.sel(longitude=lon, latitude=0).values
        assert column[np.isclose(local, 15)].mean() > column[np.isclose(local, 3)].mean() + 2


def test_same_request_same_values_and_overlaps_agree(tmp_path: Path) -> None:
    req = request(variable=["2m_temperature", "total_cloud_cover", "total_precipitation"])
    a = load(synth.write_download(req, tmp_path / "a", now=NOW), tmp_path / "xa")
    b = load(synth.write_download(req, tmp_path / "b", now=datetime(2026, 1, 1, tzinfo=UTC)), tmp_path / "xb")
    # A differently shaped request over part of the same box, days and hours.
    part = request(variable=["2m_temperature", "total_precipitation"], area=[48, 7, 46, 12],
                   day=["02"], time=["06:00", "18:00"])
    c = load(synth.write_download(part, tmp_path / "c", now=NOW), tmp_path / "xc")
    for name in ("t2m", "tcc", "tp"):
        np.testing.assert_array_equal(a[name][name].values, b[name][name].values)
    for name in ("t2m", "tp"):
        shared = a[name][name].sel(latitude=c[name]["latitude"], longitude=slice(7, 10),
                                   valid_time=c[name]["valid_time"])
        np.testing.assert_array_equal(shared.values, c[name][name].sel(longitude=slice(7, 10)).values)


def test_seed_changes_the_values(tmp_path: Path) -> None:
    req = request(variable=["2m_temperature"])
    a = load(synth.write_download(req, tmp_path / "a.nc", now=NOW, seed=0), tmp_path / "xa")
    b = load(synth.write_download(req, tmp_path / "b.nc", now=NOW, seed=1), tmp_path / "xb")
    assert not np.array_equal(a["t2m"]["t2m"].values, b["t2m"]["t2m"].values)


def test_sliced_writing_gives_the_same_file_content_as_one_piece(tmp_path: Path) -> None:
    req = request(variable=["2m_temperature", "10m_u_component_of_wind"], day=[str(d) for d in range(1, 4)])
    whole = synth.write_download(req, tmp_path / "whole.nc", now=NOW)
    # 21 x 21 points and a budget of 4000 values: nine hours per slice, written one slice at a time.
    sliced = synth.write_download(req, tmp_path / "sliced.nc", now=NOW, slice_values=4000)
    with netCDF4.Dataset(whole) as w, netCDF4.Dataset(sliced) as s:
        assert w["t2m"].chunking() == [72, 21, 21]
        assert s["t2m"].chunking() == [9, 21, 21]
        for name in ("t2m", "u10", "valid_time", "expver"):
            np.testing.assert_array_equal(w[name][:], s[name][:])
    days = synth.write_download(req, tmp_path / "days.nc", now=NOW, slice_values=24 * 441 + 100)
    with netCDF4.Dataset(days) as d:
        assert d["t2m"].chunking() == [24, 21, 21]


def test_a_test_month_is_fast(tmp_path: Path) -> None:
    req = request(variable=["2m_temperature", "10m_u_component_of_wind", "10m_v_component_of_wind",
                            "total_cloud_cover", "total_precipitation", "snowfall"],
                  day=[str(d) for d in range(1, 32)])
    started = time.perf_counter()
    path = synth.write_download(req, tmp_path / "month.zip", now=NOW)
    assert time.perf_counter() - started < 3
    with zipfile.ZipFile(path) as zf:
        assert zf.namelist() == [synth.INSTANT_FILE, synth.ACCUM_FILE]
        info = zf.getinfo(synth.INSTANT_FILE)
        assert info.compress_type == zipfile.ZIP_DEFLATED and info.external_attr >> 16 == 0o100644


# -- availability ---------------------------------------------------------------------------------


def test_hours_not_yet_published_are_left_out(tmp_path: Path) -> None:
    req = request(variable=["2m_temperature"], year=["2025"], month=["11"], day=["15", "16", "17", "18"])
    path = synth.write_download(req, tmp_path / "recent.nc", now=NOW)  # published up to 17 Nov 12:00
    with xr.open_dataset(path) as ds:
        assert str(ds["valid_time"].values[-1]).startswith("2025-11-17T12:00")
        assert set(ds["expver"].values) == {"0005"}
    with pytest.raises(synth.NoDataError, match="available"):
        synth.write_download(request(year=["2025"], month=["12"]), tmp_path / "future.nc", now=NOW)


def test_single_step_type_zip_on_request(tmp_path: Path) -> None:
    req = request(variable=["snowfall"], download_format="zip")
    path = synth.write_download(req, tmp_path / "sf", now=NOW)
    with zipfile.ZipFile(path) as zf:
        assert zf.namelist() == [synth.ACCUM_FILE]
