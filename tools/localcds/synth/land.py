"""ERA5-Land (``reanalysis-era5-land``) as the CDS delivers it, with synthetic values.

The conventions are the real files' (tests/data/era5-samples, the ``era5land_*`` ones):

* no ``product_type`` in the request (one is refused, as ERA5-Land has none); the native grid is 0.1
  degree, and a request without ``grid`` gets it;
* land points only: a point is land by a fixed pseudo-continent mask (a pure function of the point,
  so overlapping requests agree); sea points are NaN in NetCDF and missing (bitmap) in GRIB, in every
  variable at every hour;
* accumulations are running totals from 00 UTC: the value valid at h is the sum of the hourly amounts
  from 01 UTC to h, and the value at 00 UTC the previous day's 24-hour total. In GRIB they are
  forecasts from that day's 00 UTC run labelled stepRange ``n-1``-``n`` (the label the real files
  carry), whatever their content;
* NetCDF: one file holding instant and accumulated variables alike (not split by step type), expver
  a scalar coordinate;
* GRIB: edition 1, class ``l5``, except snow cover (paramId 260038, GRIB2 only), written as GRIB2
  messages in the same file with 0..360 longitudes, as the real download has them.

The hourly amounts are the single-level synthesizer's fields (:mod:`.fields`), packed on the
variable's lattice per running total, so a month asked for in NetCDF and in GRIB decodes to the same
numbers.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Literal

import eccodes
import netCDF4
import numpy as np
import numpy.typing as npt

from era5etl.core.catalogue_land import LAND_CATALOGUE
from localcds.synth import packing
from localcds.synth.fields import F64, FieldSlice, Waves, synth_range
from localcds.synth.netcdf import HDF5_WRITER
from localcds.synth.variables import META, VarMeta, cf_name_of

LAND_DATASET = "reanalysis-era5-land"
LAND_FIRST_YEAR = 1950
GRIB2_ONLY = frozenset({260038})


def _meta(cds_name: str) -> VarMeta:
    v = next(v for v in LAND_CATALOGUE if v.cds_name == cds_name)
    # cfgrib's cfName: ecCodes' GRIB1 lookup, which cannot encode a GRIB2-only parameter.
    cf = "unknown" if v.param_id in GRIB2_ONLY else (META[cds_name].cf_name if cds_name in META
                                                       else cf_name_of(v.param_id))
    step: Literal["instant", "accum"] = "accum" if v.step_type == "accum" else "instant"
    return VarMeta(v.cds_name, v.short_name, v.grib_name, v.param_id, v.name, v.units, cf, step)


LAND_META: dict[str, VarMeta] = {v.cds_name: _meta(v.cds_name) for v in LAND_CATALOGUE}
LAND_ORDER: tuple[str, ...] = tuple(v.short_name for v in LAND_CATALOGUE)
# Accumulations are packed as running totals of up to a day: the lattice spans a day's range.
# Whole numbers at the ends: GRIB1 keeps a field's reference value as an IBM float, exact for them.
for _v in LAND_CATALOGUE:
    low, high = packing.PACKING_RANGES.get(_v.short_name, synth_range(_v))
    if _v.step_type == "accum":
        low, high = min(0.0, low * 24), high * 24
    packing.PACKING_RANGES.setdefault(f"land:{_v.short_name}", (float(np.floor(low)), float(np.ceil(high))))


def land_mask(seed: int, lats: F64, lons: F64) -> npt.NDArray[np.bool_]:
    """(lat, lon) True on land: a static pseudo-continent field, the same for a point in any request."""
    field = Waves.make(seed, "land-mask", count=4, static=True)(np.zeros(1), np.radians(lats),
                                                                     np.radians(np.mod(lons, 360.0)))[0]
    return np.asarray(field > 0.25)


def land_values(meta: VarMeta, seed: int, seconds: npt.NDArray[np.int64], lats: F64, lons: F64) -> F64:
    """(T, lat, lon) values of ``meta`` at ``seconds`` as the files hold them: instant fields as they
    are, accumulations as running totals from 00 UTC; packed; NaN at sea."""
    return np.stack(list(land_hours(meta, seed, seconds, lats, lons)))


def land_hours(meta: VarMeta, seed: int, seconds: npt.NDArray[np.int64], lats: F64, lons: F64) -> Iterator[F64]:
    """:func:`land_values` an hour at a time (``seconds`` sorted), so a global hour is all memory holds.
    A running total is carried from hour to hour, restarted after 00 UTC, and built from 01 UTC of its
    day when the first hour asked for (or one after a gap) is later in the day."""
    sea = ~land_mask(seed, lats, lons)
    key = f"land:{meta.short_name}"
    total: F64 | None = None
    at = -1  # the hour ``total`` is the running total at
    for t in seconds.tolist():
        if meta.step_type != "accum":
            values = land_field(meta, FieldSlice(seed, np.array([t], dtype=np.int64), lats, lons))[0]
        else:
            day0 = ((t - 3600) // 86400) * 86400  # the 00 UTC its total runs from
            if total is None or at < day0 + 3600 or at >= t:
                total, at = np.zeros((lats.size, lons.size)), day0
            for h in range(at + 3600, t + 1, 3600):
                total += land_field(meta, FieldSlice(seed, np.array([h], dtype=np.int64), lats, lons))[0]
            at = t
            values = total.copy()
            if (t % 86400) == 0:  # 00 UTC closes the day: the next hour starts a new total
                total, at = None, -1
        out = packing.grib_packed(key, values[None])[0].astype(np.float64)
        out[sea] = np.nan
        yield out


def land_field(meta: VarMeta, fields: FieldSlice) -> F64:
    from localcds.synth.fields import OWN_FIELDS

    if meta.short_name in OWN_FIELDS:
        return fields.field(meta.short_name)
    var = next(v for v in LAND_CATALOGUE if v.short_name == meta.short_name)
    low, high = synth_range(var)
    value = np.tanh(0.6 * fields.smooth(meta.short_name) + 0.05 * fields.white(meta.short_name))
    if meta.step_type == "accum" and var.low >= 0:
        wet = np.clip(fields.cloud + 0.5 * fields.smooth(meta.short_name) - 0.3, 0.0, None)
        return np.asarray(low + (high - low) * 0.05 * np.tanh(0.5 * wet**1.5), dtype=np.float64)
    return np.asarray(low + (high - low) * (0.5 + 0.4 * value), dtype=np.float64)


def write_land_netcdf(variables: Sequence[VarMeta], lats: F64, lons: F64, times: Sequence[datetime], dest: Path,
                      *, seed: int, expver: str) -> Path:
    """One new-CDS ERA5-Land NetCDF: every variable in one file, NaN at sea, expver a scalar."""
    seconds = np.array([int(t.timestamp()) for t in times], dtype=np.int64)
    with HDF5_WRITER, netCDF4.Dataset(dest, "w", format="NETCDF4") as ds:  # one HDF5 writer at a time (synth.netcdf)
        ds.setncattr("GRIB_centre", "ecmf")
        ds.setncattr("Conventions", "CF-1.7")
        ds.setncattr("institution", "European Centre for Medium-Range Weather Forecasts")
        ds.createDimension("valid_time", len(seconds))
        ds.createDimension("latitude", lats.size)
        ds.createDimension("longitude", lons.size)
        number = ds.createVariable("number", "i8", ())
        number.assignValue(0)
        vt = ds.createVariable("valid_time", "i8", ("valid_time",))
        vt.setncatts({"long_name": "time", "standard_name": "time", "units": "seconds since 1970-01-01",
                      "calendar": "proleptic_gregorian"})
        vt[:] = seconds
        lat_v = ds.createVariable("latitude", "f8", ("latitude",))
        lat_v.setncatts({"units": "degrees_north", "standard_name": "latitude"})
        lat_v[:] = lats
        lon_v = ds.createVariable("longitude", "f8", ("longitude",))
        lon_v.setncatts({"units": "degrees_east", "standard_name": "longitude"})
        lon_v[:] = lons
        ev = ds.createVariable("expver", str, ())
        ev[...] = np.array(expver, dtype=object)
        for meta in sorted(variables, key=lambda m: LAND_ORDER.index(m.short_name)):
            var = ds.createVariable(meta.short_name, "f4", ("valid_time", "latitude", "longitude"),
                                    fill_value=np.float32(np.nan), zlib=True, complevel=1, shuffle=True)
            var.setncatts({"GRIB_paramId": np.int64(meta.param_id), "GRIB_shortName": meta.grib_short_name,
                           "GRIB_stepType": meta.step_type, "GRIB_units": meta.units, "long_name": meta.name,
                           "units": meta.units, "standard_name": meta.cf_name,
                           "coordinates": "number valid_time latitude longitude expver"})
            # An hour at a time: a global 0.1 degree hour (6.5 M points) is all memory holds.
            for i, values in enumerate(land_hours(meta, seed, seconds, lats, lons)):
                var[i] = values.astype(np.float32)
    return dest


def write_land_grib(variables: Sequence[VarMeta], lats: F64, lons: F64, grid: float, times: Sequence[datetime],
                    dest: Path, *, seed: int, expver: str) -> Path:
    """One ERA5-Land GRIB download: GRIB1 (class l5) with sea points missing in a bitmap; snow cover
    as GRIB2 with 0..360 longitudes; accumulations from the 00 UTC run, stepRange n-1 - n."""
    seconds = np.array([int(t.timestamp()) for t in times], dtype=np.int64)
    order = sorted(variables, key=lambda m: m.grib_short_name)
    protos = {m.short_name: _prototype(m, lats, lons, grid, expver) for m in order}
    try:
        with dest.open("wb") as out:
            hours = [land_hours(m, seed, seconds, lats, lons) for m in order]
            for valid in seconds.tolist():
                for m, values in zip(order, hours, strict=True):
                    out.write(_message(protos[m.short_name], m, int(valid), next(values).ravel()))
    finally:
        for h in protos.values():
            eccodes.codes_release(h)
    return dest


_MISSING = 9999.0


def _prototype(meta: VarMeta, lats: F64, lons: F64, grid: float, expver: str) -> object:
    grib2 = meta.param_id in GRIB2_ONLY
    h = eccodes.codes_grib_new_from_samples("regular_ll_sfc_grib2" if grib2 else "regular_ll_sfc_grib1")
    west, east = (float(np.mod(lons[0], 360.0)), float(np.mod(lons[-1], 360.0))) if grib2 else (lons[0], lons[-1])
    # GRIB2's sample has no ECMWF local section; the real snow cover messages have one (class l5, expver).
    keys: list[tuple[str, object]] = [("setLocalDefinition", 1), ("localDefinitionNumber", 1)] if grib2 else []
    keys += [("marsClass", "l5"), ("marsStream", "oper")]
    keys += [("paramId", meta.param_id), ("Ni", lons.size), ("Nj", lats.size), ("iScansNegatively", 0),
             ("jScansPositively", 0), ("jPointsAreConsecutive", 0),
             ("latitudeOfFirstGridPointInDegrees", float(lats[0])),
             ("latitudeOfLastGridPointInDegrees", float(lats[-1])),
             ("longitudeOfFirstGridPointInDegrees", float(west)), ("longitudeOfLastGridPointInDegrees", float(east)),
             ("iDirectionIncrementInDegrees", grid), ("jDirectionIncrementInDegrees", grid),
             ("bitsPerValue", 16), ("bitmapPresent", 1), ("missingValue", _MISSING)]
    keys.append(("expver", expver))
    for key, value in keys:
        eccodes.codes_set(h, key, value)
    if meta.step_type == "accum":
        eccodes.codes_set(h, "marsType", "fc")
        eccodes.codes_set(h, "stepType", "accum")
    return h


def _message(proto: object, meta: VarMeta, valid: int, values: F64) -> bytes:
    h = eccodes.codes_clone(proto)
    try:
        if meta.step_type == "accum":
            base = ((valid - 3600) // 86400) * 86400  # the accumulation day's 00 UTC run
            end = (valid - base) // 3600
        else:
            base, end = valid, 0
        day = np.datetime64(int(base), "s").astype(datetime)
        eccodes.codes_set(h, "dataDate", int(f"{day:%Y%m%d}"))
        eccodes.codes_set(h, "dataTime", day.hour * 100)
        if meta.step_type == "accum":
            eccodes.codes_set(h, "stepRange", f"{end - 1}-{end}")
        out = np.where(np.isnan(values), _MISSING, values)
        eccodes.codes_set_values(h, out)
        message: bytes = eccodes.codes_get_message(h)
        return message
    finally:
        eccodes.codes_release(h)
