"""The local CDS's GRIB downloads through the real cdsapi client, decoded independently with ecCodes."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import cdsapi
import eccodes
import netCDF4
import numpy as np
import pytest

from localcds.server import LocalCDS

pytestmark = pytest.mark.integration

DATASET = "reanalysis-era5-single-levels"
VARIABLES = ["2m_temperature", "10m_u_component_of_wind", "total_cloud_cover", "total_precipitation", "snowfall"]
SHORT = {"2t": "t2m", "10u": "u10", "tcc": "tcc", "tp": "tp", "sf": "sf"}
ACCUM = {"tp", "sf"}


def month_request(year: int, month: int, days: int, data_format: str, area: list[float]) -> dict[str, Any]:
    return {
        "product_type": ["reanalysis"], "variable": VARIABLES, "year": [f"{year:04d}"], "month": [f"{month:02d}"],
        "day": [f"{d:02d}" for d in range(1, days + 1)], "time": [f"{h:02d}:00" for h in range(24)],
        "area": area, "grid": ["0.25", "0.25"], "data_format": data_format, "download_format": "unarchived",
    }


@pytest.fixture(scope="module")
def cds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCDS]:
    with LocalCDS(workdir=tmp_path_factory.mktemp("localcds")) as server:
        yield server


def client(cds: LocalCDS) -> Any:
    return cdsapi.Client(url=cds.url, key=cds.key, quiet=True, progress=False, sleep_max=0.2, retry_max=5,
                         timeout=30)


def messages(path: Path) -> list[dict[str, Any]]:
    out = []
    with path.open("rb") as fh:
        while (h := eccodes.codes_grib_new_from_file(fh)) is not None:
            try:
                keys = {k: eccodes.codes_get(h, k) for k in (
                    "edition", "centre", "class", "stream", "dataType", "shortName", "dataDate", "dataTime",
                    "stepType", "startStep", "endStep", "expver", "packingType", "bitsPerValue", "bitmapPresent",
                    "validityDate", "validityTime", "Ni", "Nj", "latitudeOfFirstGridPointInDegrees",
                    "longitudeOfFirstGridPointInDegrees", "latitudeOfLastGridPointInDegrees",
                    "longitudeOfLastGridPointInDegrees")}
                keys["values"] = eccodes.codes_get_values(h)
            finally:
                eccodes.codes_release(h)
            out.append(keys)
    return out


def at(date: int, hhmm: int) -> datetime:
    return datetime.strptime(f"{date:08d}{hhmm:04d}", "%Y%m%d%H%M").replace(tzinfo=UTC)


def test_a_grib_request_gives_grib1_with_the_real_files_structure_and_the_netcdf_values(
    cds: LocalCDS, tmp_path: Path
) -> None:
    area = [-26.0, -50.0, -28.0, -49.0]  # the real tp sample's area: west of Greenwich, south of the equator
    grib_path, nc_path = tmp_path / "download.grib", tmp_path / "download.nc"
    client(cds).retrieve(DATASET, month_request(2024, 3, 2, "grib", area), str(grib_path))
    with grib_path.open("rb") as fh:
        assert fh.read(4) == b"GRIB"
    found = messages(grib_path)
    assert len(found) == len(VARIABLES) * 48  # one message per (variable, hour)
    seen = set()
    for m in found:
        assert (m["edition"], m["centre"], m["class"], m["stream"]) == (1, "ecmf", "ea", "oper")
        assert (m["packingType"], m["bitmapPresent"]) == ("grid_simple", 0)
        assert m["bitsPerValue"] in (16, 0), m  # 0: a constant field (no snow), ecCodes' way of writing it
        assert (m["Ni"], m["Nj"]) == (5, 9)
        assert (m["latitudeOfFirstGridPointInDegrees"], m["latitudeOfLastGridPointInDegrees"]) == (-26.0, -28.0)
        assert (m["longitudeOfFirstGridPointInDegrees"], m["longitudeOfLastGridPointInDegrees"]) == (-50.0, -49.0)
        assert m["expver"] == "0001"  # March 2024 is long final
        valid = at(m["validityDate"], m["validityTime"])
        base = at(m["dataDate"], m["dataTime"])
        if m["shortName"] in ACCUM:
            assert (m["dataType"], m["stepType"]) == ("fc", "accum")
            assert base.hour in (6, 18) and m["endStep"] == m["startStep"] + 1 and 1 <= m["endStep"] <= 12
            assert valid == base + timedelta(hours=m["endStep"])
            if valid.hour <= 6:  # 00-06 UTC from the previous day's 18 UTC run
                assert (base.date(), base.hour) == ((valid - timedelta(days=1)).date(), 18)
        else:
            assert (m["dataType"], m["stepType"], m["startStep"], m["endStep"]) == ("an", "instant", 0, 0)
            assert base == valid
        seen.add((m["shortName"], valid))
    hours = [datetime(2024, 3, 1, tzinfo=UTC) + timedelta(hours=h) for h in range(48)]
    assert seen == {(s, t) for s in SHORT for t in hours}

    # The same request in NetCDF: the same values, value for value (both on ERA5's 16-bit lattice).
    for variable, nc_name, grib_name, path in (("2m_temperature", "t2m", "2t", nc_path),
                                               ("total_precipitation", "tp", "tp", tmp_path / "tp.nc")):
        client(cds).retrieve(DATASET, {**month_request(2024, 3, 2, "netcdf", area), "variable": [variable]},
                             str(path))
        with netCDF4.Dataset(path) as ds:
            netcdf_values = np.asarray(ds[nc_name][:], dtype=np.float32)
        grib_values = np.stack([m["values"].reshape(9, 5) for m in found if m["shortName"] == grib_name])
        np.testing.assert_array_equal(grib_values.astype(np.float32), netcdf_values)


def test_era5t_switches_by_forecast_base_time_as_on_the_cds(cds: LocalCDS, tmp_path: Path) -> None:
    # On 2024-06-15 February is final and March still ERA5T: March's first hours hold ERA5T analyses
    # beside accumulations from February's last 18 UTC run, which are final.
    cds.clock = lambda: datetime(2024, 6, 15, tzinfo=UTC)
    try:
        path = tmp_path / "era5t.grib"
        client(cds).retrieve(DATASET, month_request(2024, 3, 1, "grib", [46.0, 7.0, 45.5, 7.5]), str(path))
    finally:
        cds.clock = lambda: datetime.now(UTC)
    by = {(m["shortName"], at(m["validityDate"], m["validityTime"]).hour): m for m in messages(path)}
    assert {m["expver"] for (s, _), m in by.items() if s not in ACCUM} == {"0005"}
    assert {by["tp", h]["expver"] for h in range(7)} == {"0001"}
    assert {by["tp", h]["expver"] for h in range(7, 24)} == {"0005"}


def test_grib_is_allowed_the_larger_request(cds: LocalCDS, tmp_path: Path) -> None:
    # 5 variables x 31 days x 24 hours = 3,720 fields: over a NetCDF limit of 3,000, under GRIB's 4,000.
    saved = cds.cost_limits
    cds.cost_limits = {"grib": 4000.0, "netcdf": 3000.0}
    try:
        with pytest.raises(Exception, match="cost limits exceeded"):
            client(cds).retrieve(DATASET, month_request(2024, 1, 31, "netcdf", [46.0, 7.0, 46.0, 7.0]),
                                 str(tmp_path / "refused.nc"))
        path = tmp_path / "allowed.grib"
        client(cds).retrieve(DATASET, month_request(2024, 1, 31, "grib", [46.0, 7.0, 46.0, 7.0]), str(path))
        assert len(messages(path)) == 5 * 31 * 24
    finally:
        cds.cost_limits = saved
