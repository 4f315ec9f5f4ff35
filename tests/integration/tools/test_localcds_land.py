"""ERA5-Land from the local CDS through the real cdsapi client: a month fetched in NetCDF and in GRIB
with ERA5-Land's conventions (no product type, 0.1 degree, sea NaN / bitmap-missing, running totals
from 00 UTC, snow cover as GRIB2 with 0..360 longitudes), staged with dataset=LAND and loaded by the
real loader: both formats give the same rows, equal to the files' own decoding with the hourly amounts
written out independently (tests/land_reference.py), and a rerun replaces them exactly. The previous
day's 23 UTC, fetched beside the month, gives the month's first hour its amount."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import cdsapi
import eccodes
import numpy as np
import pandas as pd
import pytest
import xarray as xr

from era5etl.core.datasets import LAND, LAND_GRID
from era5etl.core.variables import load_variables
from era5etl.db.columns import ensure_columns
from era5etl.load import load
from era5etl.stage import open_download
from localcds.server import LocalCDS

from ...land_reference import expected_land_frame, hourly
from ..load.test_load_file import table_frame

VARIABLES = ["2m_temperature", "total_precipitation", "surface_solar_radiation_downwards", "snow_cover"]
AREA = [46, 8, 45, 9.2]  # 11 x 13 points at 0.1 degree, part sea in the synthetic land mask


def request(data_format: str, year: int = 2020, month: int = 1, days: list[int] | None = None,
            times: list[str] | None = None) -> dict[str, Any]:
    return {"variable": VARIABLES, "year": str(year), "month": f"{month:02d}",
            "day": [f"{d:02d}" for d in (days or range(1, 32))],
            "time": times or [f"{h:02d}:00" for h in range(24)], "area": AREA, "data_format": data_format,
            "download_format": "unarchived"}


@pytest.fixture(scope="module")
def cds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCDS]:
    with LocalCDS(workdir=tmp_path_factory.mktemp("localcds")) as server:
        yield server


@pytest.fixture(scope="module")
def fetched(cds: LocalCDS, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    client = cdsapi.Client(url=cds.url, key=cds.key, quiet=True, progress=False, sleep_max=0.2, retry_max=5,
                           timeout=60)
    out = tmp_path_factory.mktemp("land")
    paths = {}
    for fmt, ext in (("netcdf", "nc"), ("grib", "grib")):
        paths[fmt] = out / f"2020-01.{ext}"
        client.retrieve("reanalysis-era5-land", request(fmt), str(paths[fmt]))
        paths[f"{fmt}-before"] = out / f"2019-12-31T23.{ext}"
        client.retrieve("reanalysis-era5-land", request(fmt, 2019, 12, [31], ["23:00"]), str(paths[f"{fmt}-before"]))
    return paths


def test_the_files_have_era5_lands_conventions(fetched: dict[str, Path]) -> None:
    with xr.open_dataset(fetched["netcdf"]) as ds:
        assert set(ds.data_vars) == {"t2m", "tp", "ssrd", "snowc"}  # one file, instant and accumulated
        assert ds["expver"].ndim == 0
        assert ds.sizes["latitude"] == 11 and ds.sizes["longitude"] == 13
        t2m = ds["t2m"].values
        sea = np.isnan(t2m).all(axis=0)
        assert 0 < sea.sum() < sea.size
        for name in ds.data_vars:  # sea in every variable at every hour, land nowhere missing
            values = ds[name].values
            assert np.isnan(values[:, sea]).all() and not np.isnan(values[:, ~sea]).any()
        tp = ds["tp"].values[:, ~sea].astype(np.float64)
        hours = ds["valid_time"].values
    # Running totals from 00 UTC: never decreasing within a day, restarting after 00 UTC.
    day = (hours - np.timedelta64(1, "h")).astype("datetime64[D]")
    for d in np.unique(day):
        run = tp[day == d]
        assert (np.diff(run, axis=0) >= 0).all()
    assert (hourly(tp, hours.astype("datetime64[s]"))[1:] >= 0).all()
    editions, snow_lon = set(), set()
    with fetched["grib"].open("rb") as fh:
        while (h := eccodes.codes_grib_new_from_file(fh)) is not None:
            try:
                edition, name = eccodes.codes_get(h, "edition"), eccodes.codes_get(h, "shortName")
                editions.add((edition, name))
                assert eccodes.codes_get(h, "bitmapPresent") == 1 and eccodes.codes_get(h, "class") == "l5"
                if name == "snowc":
                    snow_lon.add(eccodes.codes_get(h, "longitudeOfFirstGridPointInDegrees"))
                if name == "tp" and eccodes.codes_get(h, "validityTime") == 600:
                    assert (eccodes.codes_get(h, "dataTime"), eccodes.codes_get(h, "stepRange")) == (0, "5-6")
            finally:
                eccodes.codes_release(h)
    assert editions == {(1, "2t"), (1, "tp"), (1, "ssrd"), (2, "snowc")}
    assert snow_lon == {8.0}


def test_the_download_is_one_file_not_a_zip() -> None:
    from localcds.synth import parse_request

    for fmt, ext, kind in (("netcdf", "nc", "application/netcdf"), ("grib", "grib", "application/x-grib")):
        req = parse_request(request(fmt), "reanalysis-era5-land")
        assert (req.extension, req.content_type, req.grid) == (ext, kind, (Decimal("0.1"), Decimal("0.1")))


def test_a_product_type_is_refused(cds: LocalCDS, tmp_path: Path) -> None:
    client = cdsapi.Client(url=cds.url, key=cds.key, quiet=True, progress=False, sleep_max=0.2, retry_max=1,
                           timeout=30)
    with pytest.raises(Exception, match="has no product type"):
        client.retrieve("reanalysis-era5-land", {**request("netcdf"), "product_type": ["reanalysis"]},
                        str(tmp_path / "x.nc"))


def _load(url: str, table: str, paths: list[Path], start: datetime | None = None) -> tuple[int, int, list[str]]:
    with open_download(paths, dataset=LAND) as staged:
        ensure_columns(url, table, load_variables(staged.variables, LAND))
        result = load(url, table, staged, start=start)
        return result.rows, result.deleted, staged.notes


def _holds(url: str, table: str, expected: pd.DataFrame) -> None:
    got = table_frame(url, table).sort_values(["time", "location_id"], ignore_index=True)
    expected = expected.sort_values(["time", "location_id"], ignore_index=True)
    assert len(got) == len(expected)
    np.testing.assert_array_equal(got["time"].to_numpy(), expected["time"].to_numpy())
    for column in expected.columns[1:]:
        np.testing.assert_array_equal(got[column].to_numpy(dtype=np.float64),
                                      expected[column].to_numpy().astype(np.float64), err_msg=column)


def test_a_month_in_netcdf_and_in_grib_loads_the_same_rows(db_url: str, table: str, fetched: dict[str, Path]
                                                           ) -> None:
    expected = expected_land_frame(fetched["netcdf"])
    land = expected["location_id"].nunique()
    assert len(expected) == 744 * land
    rows, deleted, notes = _load(db_url, table, [fetched["netcdf"]])
    assert (rows, deleted) == (744 * land, 0)
    assert any("NULL at 1 hour(s) from 2020-01-01T00:00:00" in n for n in notes)
    _holds(db_url, table, expected)
    first = table_frame(db_url, table)
    assert first[first.time == pd.Timestamp("2020-01-01")]["total_precipitation"].isna().all()

    # The same month as GRIB: the same rows, replacing the NetCDF's; a rerun is exact.
    assert_same = expected_land_frame(fetched["grib"])
    pd.testing.assert_frame_equal(assert_same.sort_values(["time", "location_id"], ignore_index=True),
                                  expected.sort_values(["time", "location_id"], ignore_index=True)[
                                      list(assert_same.columns)])
    for _ in range(2):
        rows, deleted, _ = _load(db_url, table, [fetched["grib"]])
        assert (rows, deleted) == (744 * land, 744 * land)
        _holds(db_url, table, expected)


@pytest.mark.parametrize("fmt", ["netcdf", "grib"])
def test_the_previous_days_23utc_gives_the_first_hour_its_amount(db_url: str, table: str,
                                                                fetched: dict[str, Path], fmt: str) -> None:
    # The month's hours are loaded (start=); the previous day's 23 UTC only gives 00 UTC its difference,
    # and is not a row: it would replace December's 23 UTC with an hour whose own amount is unknown.
    rows, _, notes = _load(db_url, table, [fetched[f"{fmt}-before"], fetched[fmt]], datetime(2020, 1, 1, tzinfo=UTC))
    land = expected_land_frame(fetched[fmt])["location_id"].nunique()
    assert rows == 744 * land
    assert [n for n in notes if "NULL at" in n] == [next(n for n in notes if "NULL at 1 hour(s) from 2019-12-31T23:00"
                                                         in n)]
    got = table_frame(db_url, table)
    first = got[got.time == pd.Timestamp("2020-01-01")].sort_values("location_id")
    assert first["total_precipitation"].notna().all()
    # 00 UTC = the 31st's 24-hour total (the file's 00 UTC value) minus its 23 UTC total.
    with xr.open_dataset(fetched["netcdf"]) as a, xr.open_dataset(fetched["netcdf-before"]) as b:
        total = a["tp"].isel(valid_time=0).values.astype(np.float64).ravel()
        before = b["tp"].isel(valid_time=0).values.astype(np.float64).ravel()
        glat, glon = np.meshgrid(a["latitude"].values, a["longitude"].values, indexing="ij")
    keep = np.isfinite(total)
    ids = LAND_GRID.location_ids(glat.ravel(), glon.ravel())[keep]
    want = ((total - before)[keep] * 1000.0).astype(np.float32).astype(np.float64)[np.argsort(ids)]
    np.testing.assert_array_equal(first["location_id"].to_numpy(), np.sort(ids))
    np.testing.assert_array_equal(first["total_precipitation"].to_numpy(dtype=np.float64), want)
