"""The local CDS against the real cdsapi client, and its files against real CDS downloads."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import cdsapi
import netCDF4
import numpy as np
import pytest
import requests
import xarray as xr

from localcds.server import ERA5_LICENCE, LocalCDS
from tests.conftest import SAMPLES

pytestmark = pytest.mark.integration

SAMPLE_INSTANT = SAMPLES / "newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc"
SAMPLE_ACCUM = SAMPLES / "newcds_accum_tp_2025-05_hourly_expver0005.nc"
SAMPLE_ZIP = SAMPLES / "newcds_zip_instant_accum_2023-09_hourly.nc"
SAMPLE_OLD = SAMPLES / "oldcds_all_single_level_vars_incl_tcc_sf_tp_single_time.nc"
DATASET = "reanalysis-era5-single-levels"
INSTANT = "data_stream-oper_stepType-instant.nc"
ACCUM = "data_stream-oper_stepType-accum.nc"
TABLE_VARIABLES = [
    "2m_temperature", "10m_u_component_of_wind", "10m_v_component_of_wind",
    "total_cloud_cover", "total_precipitation", "snowfall",
]


def month_request(year: int, month: int, variables: list[str], days: int = 31,
                  area: list[float] | None = None) -> dict[str, Any]:
    """A request as era5etl.fetch builds it."""
    return {
        "product_type": ["reanalysis"],
        "variable": variables,
        "year": [f"{year:04d}"],
        "month": [f"{month:02d}"],
        "day": [f"{d:02d}" for d in range(1, days + 1)],
        "time": [f"{h:02d}:00" for h in range(24)],
        "area": area if area is not None else [50.0, 5.0, 45.0, 10.0],
        "grid": ["0.25", "0.25"],
        "data_format": "netcdf",
        "download_format": "unarchived",
    }


@pytest.fixture(scope="module")
def cds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCDS]:
    with LocalCDS(workdir=tmp_path_factory.mktemp("localcds")) as server:
        yield server


@pytest.fixture(autouse=True)
def _reset_switches(cds: LocalCDS) -> Iterator[None]:
    yield
    cds.fail_months.clear()
    cds.queue_seconds = 0.0
    cds.truncate_downloads = 0
    cds.accepted_licences = {ERA5_LICENCE}
    cds.clock = lambda: datetime.now(UTC)


def client(cds: LocalCDS, key: str | None = None) -> Any:
    # sleep_max doubles as the client's retry pause; keep it short so a resume takes no time.
    return cdsapi.Client(url=cds.url, key=key or cds.key, quiet=True, progress=False,
                         sleep_max=0.2, retry_max=5, timeout=30)


def unzip(path: Path, into: Path) -> list[Path]:
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        zf.extractall(into)
    return [into / n for n in names]


def assert_same_layout(ours: Path, real: Path) -> None:
    """Everything a reader relies on, compared with a real CDS file (values aside)."""
    with xr.open_dataset(ours) as a, xr.open_dataset(real) as b:
        assert tuple(a.dims) == tuple(b.dims) == ("valid_time", "latitude", "longitude")
        assert set(a.coords) == set(b.coords) == {"valid_time", "latitude", "longitude", "number", "expver"}
        for name in a.coords:
            assert a[name].dtype == b[name].dtype, name
            assert a[name].dims == b[name].dims, name
            assert a[name].attrs == b[name].attrs, name
        assert a["expver"].dims == ("valid_time",)
        assert a["number"].ndim == 0 and int(a["number"]) == 0
        assert np.all(np.diff(a["latitude"].values) < 0), "latitude must be stored north first"
        for key in ("units", "calendar", "dtype"):
            assert a["valid_time"].encoding[key] == b["valid_time"].encoding[key], key
        real_var = next(iter(b.data_vars))
        for name in a.data_vars:
            assert a[name].dims == b[real_var].dims
            assert a[name].dtype == np.float32
            enc_a, enc_b = a[name].encoding, b[real_var].encoding
            for key in ("zlib", "shuffle", "complevel", "coordinates"):
                assert enc_a[key] == enc_b[key], (name, key)
            assert np.isnan(enc_a["_FillValue"])
            assert set(a[name].attrs) == set(b[real_var].attrs), name
            if name in b.data_vars:
                for key in ("units", "long_name", "standard_name", "GRIB_paramId", "GRIB_stepType"):
                    assert a[name].attrs[key] == b[name].attrs[key], (name, key)
        assert set(a.attrs) == set(b.attrs)
    with netCDF4.Dataset(ours) as a, netCDF4.Dataset(real) as b:
        assert a.data_model == b.data_model == "NETCDF4"
        assert [v for v in a.variables if a[v].ndim < 3] == [v for v in b.variables if b[v].ndim < 3]


def test_instant_and_accum_come_as_one_zip_shaped_like_the_real_one(cds: LocalCDS, tmp_path: Path) -> None:
    before = len(cds.requests)
    request = month_request(2024, 1, TABLE_VARIABLES)
    # Named .nc on purpose: the CDS sends a ZIP whatever the target is called (as in the sample).
    target = tmp_path / "download.nc"
    started = time.perf_counter()
    client(cds).retrieve(DATASET, request, str(target))
    assert time.perf_counter() - started < 10

    assert target.read_bytes()[:2] == b"PK"
    ours = unzip(target, tmp_path / "ours")
    real = unzip(SAMPLE_ZIP, tmp_path / "real")
    assert [p.name for p in ours] == [p.name for p in real] == [INSTANT, ACCUM]
    for mine, theirs in zip(ours, real, strict=True):
        assert_same_layout(mine, theirs)

    with xr.open_dataset(ours[0]) as inst, xr.open_dataset(ours[1]) as acc:
        assert set(inst.data_vars) == {"t2m", "u10", "v10", "tcc"}
        assert set(acc.data_vars) == {"tp", "sf"}
        assert inst.sizes == {"valid_time": 744, "latitude": 21, "longitude": 21}
        assert inst["latitude"].values[[0, -1]].tolist() == [50.0, 45.0]
        assert inst["longitude"].values[[0, -1]].tolist() == [5.0, 10.0]
        assert str(inst["valid_time"].values[0]) == "2024-01-01T00:00:00.000000000"
        assert str(inst["valid_time"].values[-1]) == "2024-01-31T23:00:00.000000000"
        assert set(inst["expver"].values) == {"0001"}  # long final: ERA5, not ERA5T
        # units the table loader converts from, as the CDS writes them (tcc/sf: old-CDS sample)
        with xr.open_dataset(SAMPLE_OLD) as old:
            for name, ds in (("tcc", inst), ("sf", acc), ("t2m", inst), ("tp", acc)):
                assert ds[name].attrs["units"] == old[name].attrs["units"], name
        assert float(inst["t2m"].min()) > 200 and float(inst["t2m"].max()) < 330
        assert float(inst["tcc"].min()) >= 0 and float(inst["tcc"].max()) <= 1
        assert float(acc["tp"].min()) >= 0 and float(acc["sf"].min()) >= 0
        assert bool((acc["sf"] <= acc["tp"]).all())
        assert not any(bool(np.isnan(ds[v]).any()) for ds in (inst, acc) for v in ds.data_vars)

    assert len(cds.requests) == before + 1
    assert cds.requests[-1] == request


def test_accum_only_comes_as_a_single_netcdf(cds: LocalCDS, tmp_path: Path) -> None:
    target = tmp_path / "download.nc"
    request = month_request(2024, 2, ["total_precipitation", "snowfall"], days=29)
    client(cds).retrieve(DATASET, request, str(target))

    assert target.read_bytes()[:4] == b"\x89HDF"
    assert_same_layout(target, SAMPLE_ACCUM)
    with xr.open_dataset(target) as ds:
        assert set(ds.data_vars) == {"tp", "sf"}
        assert ds.sizes["valid_time"] == 29 * 24


@pytest.mark.parametrize(
    ("request_", "now", "real_files"),
    [
        (
            {"variable": ["2m_temperature", "10m_u_component_of_wind", "10m_v_component_of_wind",
                          "2m_dewpoint_temperature", "surface_pressure", "total_precipitation"],
             "year": ["2025"], "month": ["05"], "day": [f"{d:02d}" for d in range(1, 13)],
             "area": [40.5, -8.5, 39.5, -7.5]},
            datetime(2025, 5, 18, 6, 16, tzinfo=UTC),
            [SAMPLE_INSTANT, SAMPLE_ACCUM],
        ),
        (
            {"variable": ["2m_dewpoint_temperature", "10m_u_component_of_wind", "10m_v_component_of_wind",
                          "surface_pressure", "total_precipitation"],
             "year": ["2023"], "month": ["09"], "day": [f"{d:02d}" for d in range(1, 8)],
             "area": [20, 77, 15, 82]},
            datetime(2026, 2, 26, 0, 45, tzinfo=UTC),
            [SAMPLE_ZIP],
        ),
    ],
    ids=["2025-05-negative-west-era5t", "2023-09-final"],
)
def test_same_request_as_a_real_download_gives_the_same_coordinates(
    cds: LocalCDS, tmp_path: Path, request_: dict[str, Any], now: datetime, real_files: list[Path]
) -> None:
    """Replays the requests behind the samples: grid, times, expver and variables must match exactly.

    The first sample asked for west = -8.5 and got longitudes -8.5 .. -7.5, so the CDS answers in the
    request's own longitude convention; the server must too.
    """
    cds.clock = lambda: now  # the day the sample was downloaded decides ERA5T ("0005") or ERA5 ("0001")
    request = {**month_request(2000, 1, []), **request_}
    target = tmp_path / "download"
    client(cds).retrieve(DATASET, request, str(target))

    ours = unzip(target, tmp_path / "ours")
    real: list[Path] = []
    for path in real_files:
        real += unzip(path, tmp_path / "real") if zipfile.is_zipfile(path) else [path]
    assert len(ours) == len(real) == 2
    for mine, theirs in zip(ours, real, strict=True):
        assert_same_layout(mine, theirs)
        with xr.open_dataset(mine) as a, xr.open_dataset(theirs) as b:
            for coord in ("valid_time", "latitude", "longitude", "expver", "number"):
                np.testing.assert_array_equal(a[coord].values, b[coord].values, err_msg=coord)
            assert set(a.data_vars) == set(b.data_vars)
            for name in a.data_vars:
                for key, value in b[name].attrs.items():
                    assert a[name].attrs[key] == value, (name, key)


def test_wrong_key_is_refused_with_401(cds: LocalCDS, tmp_path: Path) -> None:
    before = len(cds.requests)
    with pytest.raises(requests.HTTPError) as err:
        client(cds, key="not-the-key").retrieve(DATASET, month_request(2024, 1, ["2m_temperature"], days=1),
                                                str(tmp_path / "x.nc"))
    message = str(err.value)
    assert message.startswith("401 Client Error: Unauthorized for url: ")
    assert "Authentication failed" in message and "operation not allowed" in message
    assert err.value.response is not None and err.value.response.json()["type"] == "permission denied"
    assert len(cds.requests) == before


def test_unknown_dataset_is_a_404(cds: LocalCDS, tmp_path: Path) -> None:
    with pytest.raises(requests.HTTPError, match=r"(?s)^404 Client Error.*process not found.*no-such-data"):
        client(cds).retrieve("no-such-dataset", month_request(2024, 1, ["2m_temperature"], days=1),
                             str(tmp_path / "x.nc"))


def test_invalid_request_and_missing_licence_are_refused(cds: LocalCDS, tmp_path: Path) -> None:
    bad = month_request(2024, 1, ["2m_temperature", "not_a_variable"], days=1)
    with pytest.raises(requests.HTTPError, match=r"(?s)^400 Client Error.*invalid request.*not_a_variable"):
        client(cds).retrieve(DATASET, bad, str(tmp_path / "x.nc"))
    cds.accepted_licences = set()
    with pytest.raises(requests.HTTPError, match=r"(?s)^403 Client Error.*required licences not accepted"):
        client(cds).retrieve(DATASET, month_request(2024, 1, ["2m_temperature"], days=1),
                             str(tmp_path / "x.nc"))


def test_failed_month_ends_the_job_failed_with_the_error_message(cds: LocalCDS, tmp_path: Path) -> None:
    cds.fail_months = {"2024-03"}
    before = len(cds.requests)
    # The client learns of the failure from /results, which answers 400 with title + traceback:
    # a requests.HTTPError, as users of the real CDS see it (not ProcessingFailedError).
    with pytest.raises(requests.HTTPError) as err:
        client(cds).retrieve(DATASET, month_request(2024, 3, ["2m_temperature"]), str(tmp_path / "x.nc"))
    message = str(err.value)
    assert message.startswith("400 Client Error: Bad Request for url: ")
    assert "/results\nThe job has failed\nMARS returned no data" in message
    assert "2024-03" in message
    assert len(cds.requests) == before + 1
    job = list(cds.jobs.values())[-1]
    assert job.statuses == ["accepted", "running", "failed"]
    # Other months are untouched by the switch.
    client(cds).retrieve(DATASET, month_request(2024, 4, ["2m_temperature"], days=1), str(tmp_path / "y.nc"))


def _http(method: str, url: str, token: str | None = None, body: Any = None,
          headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("PRIVATE-TOKEN", token)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_wire_protocol_by_hand_and_range_downloads(cds: LocalCDS) -> None:
    base = f"{cds.url}/retrieve/v1"
    request = month_request(2024, 5, ["2m_temperature"], days=2)

    status, _, body = _http("POST", f"{base}/processes/{DATASET}/execution", body={"inputs": request})
    assert status == 401
    assert json.loads(body) | {"instance": None, "trace_id": None} == {
        "type": "permission denied", "title": "permission denied", "status": 401,
        "detail": "authentication required", "instance": None, "trace_id": None,
    }

    cds.queue_seconds = 0.3
    execution = f"{base}/processes/{DATASET}/execution"
    status, headers, body = _http("POST", execution, cds.key, {"inputs": request})
    assert status == 201
    job = json.loads(body)
    assert job["status"] == "accepted" and job["type"] == "process" and job["processID"] == DATASET
    monitor = [link["href"] for link in job["links"] if link["rel"] == "monitor"]
    assert monitor == [f"{base}/jobs/{job['jobID']}"] == [headers["Location"]]

    status, _, body = _http("GET", f"{monitor[0]}?log=True&request=True", cds.key)
    assert status == 200 and json.loads(body)["status"] == "accepted"
    assert json.loads(body)["metadata"]["request"]["ids"] == request
    status, _, body = _http("GET", f"{monitor[0]}/results", cds.key)
    assert status == 404 and json.loads(body)["title"] == "job results not ready"

    deadline = time.monotonic() + 10
    while (info := json.loads(_http("GET", monitor[0], cds.key)[2]))["status"] != "successful":
        assert time.monotonic() < deadline, info
        time.sleep(0.05)
    assert cds.jobs[job["jobID"]].statuses == ["accepted", "running", "successful"]
    started = datetime.fromisoformat(info["started"])
    assert (started - datetime.fromisoformat(info["created"])).total_seconds() >= 0.3
    results_url = [link["href"] for link in info["links"] if link["rel"] == "results"]
    assert results_url == [f"{monitor[0]}/results"]

    status, _, body = _http("GET", results_url[0], cds.key)
    asset = json.loads(body)["asset"]["value"]
    assert status == 200 and asset["type"] == "application/netcdf"
    href, size = asset["href"], asset["file:size"]
    whole = cds.asset_file(urllib.parse.urlsplit(href).path)
    assert whole is not None
    content = whole[0].read_bytes()
    assert len(content) == size

    # The asset needs no key, like the CDS object store.
    status, headers, body = _http("HEAD", href)
    assert (status, headers["Accept-Ranges"], body) == (200, "bytes", b"")
    assert int(headers["Content-Length"]) == size
    status, headers, body = _http("GET", href, headers={"Range": "bytes=100-1099"})
    assert (status, headers["Content-Range"], body) == (206, f"bytes 100-1099/{size}", content[100:1100])
    assert int(headers["Content-Length"]) == 1000
    status, headers, body = _http("GET", href, headers={"Range": f"bytes={size - 10}-"})
    assert (status, body) == (206, content[-10:])
    assert headers["Content-Range"] == f"bytes {size - 10}-{size - 1}/{size}"
    status, headers, body = _http("GET", href, headers={"Range": "bytes=-5"})
    assert (status, body) == (206, content[-5:])
    status, headers, body = _http("GET", href, headers={"Range": f"bytes={size}-"})
    assert (status, headers["Content-Range"]) == (416, f"bytes */{size}")
    status, _, body = _http("GET", href)
    assert (status, body) == (200, content)

    status, _, body = _http("DELETE", monitor[0], cds.key)
    assert status == 200 and json.loads(body)["status"] == "dismissed"
    status, _, body = _http("GET", monitor[0], cds.key)
    assert status == 404 and json.loads(body)["title"] == "job not found"


def test_cut_download_is_resumed_with_range(cds: LocalCDS, tmp_path: Path) -> None:
    # The client writes 1 MiB blocks and resumes from what reached the disk: the file must be big
    # enough that half of it holds at least one whole block (a 10 x 10 degree box: ~6 MB).
    cds.truncate_downloads = 1
    first = len(cds.downloads)
    target = tmp_path / "download.zip"
    client(cds).retrieve(DATASET, month_request(2024, 6, TABLE_VARIABLES, days=30, area=[55.0, 0.0, 45.0, 10.0]),
                         str(target))

    gets = [d for d in cds.downloads[first:] if d.method == "GET"]
    assert [(d.status, d.truncated) for d in gets] == [(200, True), (206, False)]
    assert gets[1].range is not None and gets[1].range.startswith("bytes=")
    resumed_at = int(gets[1].range.removeprefix("bytes=").rstrip("-"))
    assert resumed_at > 0 and resumed_at + gets[1].bytes_sent == target.stat().st_size
    found = cds.asset_file(gets[0].path)
    assert found is not None and target.read_bytes() == found[0].read_bytes()


def test_same_request_twice_gives_the_same_values(cds: LocalCDS, tmp_path: Path) -> None:
    request = month_request(2024, 7, ["2m_temperature", "total_cloud_cover", "total_precipitation"], days=3)
    paths = []
    for run in ("a", "b"):
        target = tmp_path / run / "download.zip"
        target.parent.mkdir()
        client(cds).retrieve(DATASET, request, str(target))
        paths.append(unzip(target, tmp_path / run))
    assert len({job.job_id for job in cds.jobs.values()}) >= 2
    for first, second in zip(*paths, strict=True):
        with xr.open_dataset(first) as a, xr.open_dataset(second) as b:
            assert set(a.data_vars) == set(b.data_vars)
            for name in [*a.data_vars, *a.coords]:
                np.testing.assert_array_equal(a[name].values, b[name].values, err_msg=name)
