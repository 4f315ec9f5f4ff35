"""NetCDF writing: one CDS NetCDF file (layout, attributes, chunking), written in time slices."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import netCDF4
import numpy as np

from era5etl.core.months import Month
from localcds.synth.fields import FieldSlice, stable_seed
from localcds.synth.levels import packing_key, pl_field
from localcds.synth.packing import grib_packed
from localcds.synth.publication import expver_for
from localcds.synth.request import SynthRequest
from localcds.synth.variables import VarMeta

# Enough values per slice to write a small test area's month in one go (the real files hold one
# chunk per variable), small enough that a global area is written a few hours at a time.
DEFAULT_SLICE_VALUES = 1_000_000
# The HDF5 library under netCDF4 is not thread-safe, and the server writes each job's file in a thread
# of its own: two months finishing together failed a job with "NetCDF: HDF error" (seen in the Celery
# and deferral tests). One file is written at a time.
HDF5_WRITER = threading.Lock()


def _slices(n_times: int, n_points: int, budget: int) -> Iterator[tuple[int, int]]:
    if n_times * n_points <= budget:
        yield 0, n_times
        return
    per_slice = max(1, budget // n_points)
    if per_slice >= 24:
        per_slice -= per_slice % 24  # whole days when they fit
    for start in range(0, n_times, per_slice):
        yield start, min(n_times, start + per_slice)


def _history(step_type: str, now: datetime, seed: int) -> str:
    return history_of("oper", step_type, now, seed)


def history_of(stream: str, step_type: str, now: datetime, seed: int) -> str:
    """cfgrib's ``history`` of a NetCDF it made from the GRIB ``stream``'s ``step_type`` messages."""
    token = f"tmp{stable_seed(seed, now.isoformat()) & 0xFFFFFFFF:08x}"
    return (
        f"{now:%Y-%m-%dT%H:%M} GRIB to CDM+CF via cfgrib-0.9.15.1/ecCodes-2.42.0 with "
        f'{{"source": "{token}/data.grib", '
        f'"filter_by_keys": {{"stream": ["{stream}"], "stepType": ["{step_type}"]}}, '
        f'"encode_cf": ["parameter", "time", "geography", "vertical"]}}'
        " [synthetic: era5etl local CDS, not Copernicus data]"
    )


def _grib_attrs(meta: VarMeta, req: SynthRequest) -> dict[str, Any]:
    if req.levels:  # as cfgrib writes a variable on pressure levels
        return {**surface_attrs(meta, req), "GRIB_typeOfLevel": "isobaricInhPa",
                "coordinates": "number valid_time pressure_level latitude longitude expver"}
    return surface_attrs(meta, req)


def surface_attrs(meta: VarMeta, req: SynthRequest) -> dict[str, Any]:
    lats, lons = req.latitudes, req.longitudes
    return {
        "GRIB_paramId": np.int64(meta.param_id),
        "GRIB_dataType": meta.data_type,
        "GRIB_numberOfPoints": np.int64(len(lats) * len(lons)),
        "GRIB_typeOfLevel": "surface",
        "GRIB_stepUnits": np.int64(1),
        "GRIB_stepType": meta.step_type,
        "GRIB_gridType": "regular_ll",
        "GRIB_uvRelativeToGrid": np.int64(0),
        "GRIB_NV": np.int64(0),
        "GRIB_Nx": np.int64(len(lons)),
        "GRIB_Ny": np.int64(len(lats)),
        "GRIB_cfName": meta.cf_name,
        "GRIB_cfVarName": meta.short_name,
        "GRIB_gridDefinitionDescription": "Latitude/Longitude Grid",
        "GRIB_iDirectionIncrementInDegrees": np.float64(req.grid[0]),
        "GRIB_iScansNegatively": np.int64(0),
        "GRIB_jDirectionIncrementInDegrees": np.float64(req.grid[1]),
        "GRIB_jPointsAreConsecutive": np.int64(0),
        "GRIB_jScansPositively": np.int64(0),
        "GRIB_latitudeOfFirstGridPointInDegrees": np.float64(lats[0]),
        "GRIB_latitudeOfLastGridPointInDegrees": np.float64(lats[-1]),
        "GRIB_longitudeOfFirstGridPointInDegrees": np.float64(lons[0]),
        "GRIB_longitudeOfLastGridPointInDegrees": np.float64(lons[-1]),
        "GRIB_missingValue": np.float64(3.4028234663852886e38),
        "GRIB_name": meta.name,
        "GRIB_shortName": meta.grib_short_name,
        "GRIB_totalNumber": np.int64(0),
        "GRIB_units": meta.units,
        "long_name": meta.name,
        "units": meta.units,
        "standard_name": meta.standard_name,
        "GRIB_surface": np.float64(0.0),
        "coordinates": "number valid_time latitude longitude expver",
    }


def global_attributes(ds: Any, history: str) -> None:
    """The new CDS's global attributes of a NetCDF file, with its ``history``."""
    ds.setncattr("GRIB_centre", "ecmf")
    ds.setncattr("GRIB_centreDescription", "European Centre for Medium-Range Weather Forecasts")
    ds.setncattr("GRIB_subCentre", np.int64(0))
    ds.setncattr("Conventions", "CF-1.7")
    ds.setncattr("institution", "European Centre for Medium-Range Weather Forecasts")
    ds.setncattr("history", history)


def coordinate_variables(ds: Any) -> tuple[Any, Any, Any, Any]:
    """The new CDS's coordinate variables (number, valid_time, latitude, longitude) defined in ``ds``,
    with their attributes, for the caller to fill."""
    number = ds.createVariable("number", "i8", ())
    number.setncatts({"long_name": "ensemble member numerical id", "units": "1", "standard_name": "realization"})
    vt = ds.createVariable("valid_time", "i8", ("valid_time",))
    vt.setncatts({"long_name": "time", "standard_name": "time", "units": "seconds since 1970-01-01",
                  "calendar": "proleptic_gregorian"})
    lat_v = ds.createVariable("latitude", "f8", ("latitude",), fill_value=np.nan)
    lat_v.setncatts({"units": "degrees_north", "standard_name": "latitude", "long_name": "latitude",
                     "stored_direction": "decreasing"})
    lon_v = ds.createVariable("longitude", "f8", ("longitude",), fill_value=np.nan)
    lon_v.setncatts({"units": "degrees_east", "standard_name": "longitude", "long_name": "longitude"})
    return number, vt, lat_v, lon_v


def write_netcdf(
    req: SynthRequest,
    step_type: str,
    dest: Path,
    *,
    times: Sequence[datetime],
    today: date,
    seed: int = 0,
    now: datetime | None = None,
    slice_values: int = DEFAULT_SLICE_VALUES,
) -> Path:
    """Write the ``step_type`` variables of ``req`` at ``times`` to ``dest`` (one CDS NetCDF file)."""
    variables = [v for v in req.variables if v.step_type == step_type]
    if not variables:
        raise ValueError(f"no {step_type} variable in the request")
    now = now or datetime.now(UTC)
    seconds = np.array([int(t.timestamp()) for t in times], dtype=np.int64)
    lats = np.array(req.latitudes, dtype=np.float64)
    lons = np.array(req.longitudes, dtype=np.float64)
    nt, ny, nx = len(seconds), len(lats), len(lons)
    nl = max(1, len(req.levels))
    slices = list(_slices(nt, ny * nx * nl, slice_values))
    # One chunk per variable when it all fits (as in the real files); else one chunk per slice.
    chunk_t = slices[0][1] - slices[0][0]

    with HDF5_WRITER, netCDF4.Dataset(dest, "w", format="NETCDF4") as ds:
        global_attributes(ds, _history(step_type, now, seed))
        ds.createDimension("valid_time", nt)
        if req.levels:
            ds.createDimension("pressure_level", nl)
        ds.createDimension("latitude", ny)
        ds.createDimension("longitude", nx)

        # Define everything first, then write: netCDF-C applies a variable's chunk-cache setting
        # only once define mode has ended.
        number, vt, lat_v, lon_v = coordinate_variables(ds)
        if req.levels:
            # The new CDS: float64 hPa, top of the list the lowest pressure's opposite (1000 first).
            lev_v = ds.createVariable("pressure_level", "f8", ("pressure_level",), fill_value=np.nan)
            lev_v.setncatts({"long_name": "pressure", "units": "hPa", "positive": "down",
                             "stored_direction": "decreasing", "standard_name": "air_pressure"})
        expver = ds.createVariable("expver", str, ("valid_time",))
        out_vars = []
        dims = ("valid_time", "pressure_level", "latitude", "longitude") if req.levels else (
            "valid_time", "latitude", "longitude")
        chunks = (chunk_t, 1, ny, nx) if req.levels else (chunk_t, ny, nx)
        for meta in variables:
            var = ds.createVariable(
                meta.short_name, "f4", dims, fill_value=np.float32(np.nan),
                zlib=True, complevel=1, shuffle=True, chunksizes=chunks,
            )
            var.setncatts(_grib_attrs(meta, req))
            out_vars.append((meta, var))

        number.assignValue(0)
        vt[:] = seconds
        lat_v[:] = lats
        lon_v[:] = lons
        if req.levels:
            lev_v[:] = np.array(req.levels, dtype=np.float64)
        by_month: dict[tuple[int, int], str] = {}
        codes = []
        for t in times:
            key = (t.year, t.month)
            if key not in by_month:
                by_month[key] = expver_for(Month(*key), today)
            codes.append(by_month[key])
        expver[:] = np.array(codes, dtype=object)
        for _, var in out_vars:
            # Each chunk is written once, whole; HDF5's cache (64 MB a variable by default) would
            # only hold finished chunks until close, and memory would grow with the area.
            var.set_var_chunk_cache(size=0, nelems=1, preemption=1.0)

        for start, stop in slices:
            fields = FieldSlice(seed, seconds[start:stop], lats, lons)
            for meta, var in out_vars:
                if not req.levels:
                    var[start:stop, :, :] = grib_packed(meta.short_name, fields.field(meta.short_name))
                    continue
                for k, level in enumerate(req.levels):
                    var[start:stop, k, :, :] = grib_packed(packing_key(meta.short_name),
                                                           pl_field(fields, meta.short_name, level))
    return dest
