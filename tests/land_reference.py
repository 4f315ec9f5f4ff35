"""What an ERA5-Land sample should load as, computed independently of the stager: the file decoded by
xarray (NetCDF) or by ecCodes with its own keys (GRIB: ``paramId``, ``validityDate``/``validityTime``,
every message decoded in full, missing bitmap points NaN), then ERA5-Land's conventions written out
plainly: a point is land when any variable has a value there at any hour; an accumulated variable's
hour is its running total at 01 UTC, else the running total minus the one an hour before (NaN when
the file lacks that hour); then ``* scale + offset`` in float64, then float32."""

from __future__ import annotations

from pathlib import Path

import eccodes
import numpy as np
import pandas as pd
import xarray as xr

from era5etl.core.datasets import LAND, LAND_GRID
from era5etl.core.grid import normalize_longitude

BY_PARAM = {v.param_id: v for v in LAND.catalogue}
BY_NAME = {v.short_name: v for v in LAND.catalogue}


def _grib(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    fields: dict[str, dict[np.datetime64, np.ndarray]] = {}
    lat = lon = None
    with path.open("rb") as f:
        while (h := eccodes.codes_grib_new_from_file(f)) is not None:
            try:
                var = BY_PARAM[eccodes.codes_get_long(h, "paramId")]
                d, t = eccodes.codes_get_long(h, "validityDate"), eccodes.codes_get_long(h, "validityTime")
                valid = np.datetime64(f"{d // 10000:04d}-{d // 100 % 100:02d}-{d % 100:02d}T{t // 100:02d}:"
                                      f"{t % 100:02d}", "s")
                values = eccodes.codes_get_values(h).astype(np.float64)
                if eccodes.codes_get_long(h, "bitmapPresent"):
                    values[values == eccodes.codes_get_double(h, "missingValue")] = np.nan
                la = eccodes.codes_get_array(h, "latitudes")
                lo = normalize_longitude(eccodes.codes_get_array(h, "longitudes"))
                if lat is None:
                    lat, lon = la, lo
                np.testing.assert_allclose(la, lat, atol=1e-6)
                np.testing.assert_allclose(lo, lon, atol=1e-6)
                assert valid not in fields.setdefault(var.column, {})
                fields[var.column][valid] = values
            finally:
                eccodes.codes_release(h)
    assert lat is not None and lon is not None
    times = np.unique(np.concatenate([np.array(list(v), dtype="datetime64[s]") for v in fields.values()]))
    cubes = {}
    for column, by_time in fields.items():
        cube = np.full((times.size, lat.size), np.nan)
        for i, t in enumerate(times):
            if t in by_time:
                cube[i] = by_time[t]
        cubes[column] = cube
    return times, lat, lon, cubes


def _netcdf(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    with xr.open_dataset(path, engine="netcdf4") as ds:
        tdim = "valid_time" if "valid_time" in ds.dims else "time"
        glat, glon = np.meshgrid(ds["latitude"].values, ds["longitude"].values, indexing="ij")
        times = ds[tdim].values.astype("datetime64[s]")
        cubes = {BY_NAME[n].column: ds[n].transpose(tdim, "latitude", "longitude").values.astype(np.float64)
                 .reshape(times.size, -1) for n in map(str, ds.data_vars) if n in BY_NAME}
    return times, glat.ravel(), normalize_longitude(glon.ravel()), cubes


def decoded(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """(valid times, latitude, longitude, column -> (T, P) file values) of the whole grid."""
    return _grib(path) if path.read_bytes()[:4] == b"GRIB" else _netcdf(path)


def hourly(totals: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Running totals from 00 UTC -> the hour ending at each time, written out hour by hour."""
    out = np.full_like(totals, np.nan)
    index = {t: i for i, t in enumerate(times.astype("datetime64[s]"))}
    for i, t in enumerate(times.astype("datetime64[s]")):
        if (t - t.astype("datetime64[D]")) == np.timedelta64(1, "h"):
            out[i] = totals[i]
        elif (j := index.get(t - np.timedelta64(1, "h"))) is not None:
            out[i] = totals[i] - totals[j]
    return out


def expected_land_frame(path: Path) -> pd.DataFrame:
    """The rows an ERA5-Land file should load as: its land (time, point) pairs, in table units."""
    times, lat, lon, cubes = decoded(path)
    land = np.zeros(lat.size, dtype=bool)
    for cube in cubes.values():
        land |= np.isfinite(cube).any(axis=0)
    lat, lon = lat[land], lon[land]
    ids = LAND_GRID.location_ids(lat, lon)
    frame = pd.DataFrame({
        "time": np.repeat(times.astype("datetime64[us]"), ids.size),
        "location_id": np.tile(ids, times.size),
        "latitude": np.tile(lat.astype(np.float32), times.size),
        "longitude": np.tile(lon.astype(np.float32), times.size),
    })
    by_column = {v.column: v for v in LAND.catalogue}
    for column, cube in cubes.items():
        var = by_column[column]
        x = cube[:, land]
        if var.step_type == "accum":
            x = hourly(x, times)
        frame[column] = (x * var.scale + var.offset).astype(np.float32).ravel()
    return frame
