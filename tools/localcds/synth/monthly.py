"""The monthly means (``reanalysis-era5-single-levels-monthly-means``, ``reanalysis-era5-land-monthly-means``)
as the new CDS delivers them, with the synthetic values of the hourly collections averaged.

What the real files in tests/data/era5-samples (``era5mm_*``, ``era5land-monthly_*``) hold, and so what
is written here:

* the request: ``product_type`` ``monthly_averaged_reanalysis`` (``time`` 00:00 only) or, single levels
  only, ``monthly_averaged_reanalysis_by_hour_of_day`` (any of the 24 hours); ``year``, ``month``,
  ``time``, no ``day``;
* NetCDF (the new CDS): one file per GRIB step type, named ``data_stream-moda_stepType-avgua.nc`` /
  ``-avgad.nc`` (by hour of day: ``data_stream-mnth_stepType-avgua.nc`` / ``-avgas.nc``), a ZIP of them
  when both are asked for, with cfgrib's attributes (``GRIB_stepType`` avgua, avgad, avgas) and its
  ``history`` naming the stream; ERA5-Land: one file of every variable (as its hourly NetCDF);
* the valid times: a monthly mean at 00 UTC on the 1st, its accumulations (avgad) at 06 UTC; by hour
  of day the instantaneous fields at hour h of the 1st, the accumulations (avgas, from the runs of 06
  and 18 UTC on the 1st, steps 0-1 .. 11-12) at the end of their hour: 07 UTC on the 1st to 06 UTC on
  the 2nd;
* GRIB1: stream ``moda`` (by hour of day ``mnth``), class ``ea`` (ERA5-Land ``l5``, sea missing in a
  bitmap), analyses ``an`` avgua, accumulations ``fc`` avgad / avgas;
* the values: the mean of the hourly collection's synthetic values over the month's hours (by hour of
  day: over its days at that hour), in closed form for the fields linear in time (:func:`monthly_means`);
  an accumulation's monthly mean is the **mean daily total** (24 x the mean hourly amount, the unit
  still "m"), by hour of day the mean of that hour's amounts. A month is published
  :data:`~localcds.synth.publication.ERA5T_LATENCY` after it ends.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import eccodes
import netCDF4
import numpy as np

from era5etl.core.months import Month
from localcds.synth import packing
from localcds.synth.fields import F64, LINEAR_FIELDS, FieldSlice, MeanSlice
from localcds.synth.netcdf import HDF5_WRITER, coordinate_variables, global_attributes, history_of, surface_attrs
from localcds.synth.publication import ERA5T_LATENCY, expver_for
from localcds.synth.request import RequestError, SynthRequest
from localcds.synth.variables import DATASET, VarMeta

MONTHLY_DATASET = "reanalysis-era5-single-levels-monthly-means"
LAND_MONTHLY_DATASET = "reanalysis-era5-land-monthly-means"
MONTHLY_DATASETS = (MONTHLY_DATASET, LAND_MONTHLY_DATASET)
MEANS = "monthly_averaged_reanalysis"
BY_HOUR = "monthly_averaged_reanalysis_by_hour_of_day"
_LAND_MISSING = 9999.0


def hourly_collection(dataset: str) -> str:
    from localcds.synth.land import LAND_DATASET

    return LAND_DATASET if dataset == LAND_MONTHLY_DATASET else DATASET


def parse_monthly(request: Mapping[str, Any], dataset: str) -> SynthRequest:
    """A monthly-means request validated as the CDS would: its hourly collection's variables, grid and
    area; the times are the months' 1st at the hours asked (00 UTC only for the monthly means)."""
    from localcds.synth.request import parse_request

    products = [str(p) for p in _listed(request.get("product_type"))]
    allowed = (MEANS,) if dataset == LAND_MONTHLY_DATASET else (MEANS, BY_HOUR)
    if len(products) != 1 or products[0] not in allowed:
        raise RequestError(f"product_type: one of {list(allowed)} is served here, got {products!r}")
    if "day" in request:
        raise RequestError(f"day: not a keyword of {dataset}")
    hourly = {k: v for k, v in request.items() if k != "product_type"}
    if dataset == MONTHLY_DATASET:
        hourly["product_type"] = ["reanalysis"]
    req = parse_request({**hourly, "day": ["01"]}, hourly_collection(dataset))
    hours = sorted({t.hour for t in req.times})
    if products[0] == MEANS and hours != [0]:
        raise RequestError(f"time: {MEANS} is served at 00:00 only, got {request.get('time')!r}")
    return replace(req, dataset=dataset, product=products[0])


def _listed(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str):
        return [p for p in value.split("/") if p.strip()]
    return list(value) if isinstance(value, (list, tuple)) else [value]


def by_hour(req: SynthRequest) -> bool:
    return req.product == BY_HOUR


def available_months(req: SynthRequest, now: datetime) -> list[datetime]:
    """The requested times whose month is published: about five days after it ends."""
    return [t for t in req.times if Month(t.year, t.month).end + ERA5T_LATENCY <= now]


def step_type(meta: VarMeta, hourly_of_day: bool) -> str:
    if meta.step_type == "instant":
        return "avgua"
    return "avgas" if hourly_of_day else "avgad"


def valid_time(row: datetime, meta: VarMeta, hourly_of_day: bool) -> datetime:
    """Where the CDS stamps the field meaning ``row`` (the month's 1st at its hour of the day)."""
    if meta.step_type == "instant":
        return row
    if not hourly_of_day:
        return row + timedelta(hours=6)
    return row if row.hour >= 7 else row + timedelta(days=1)  # the end of the hour: 07 UTC .. 06 UTC next day


def file_names(req: SynthRequest) -> list[tuple[str, str]]:
    """(file name, step type) of each file of a NetCDF download: one per step type; ERA5-Land one."""
    stream = "mnth" if by_hour(req) else "moda"
    if req.dataset == LAND_MONTHLY_DATASET:
        return [("data_0.nc", "all")]
    kinds = sorted({step_type(m, by_hour(req)) for m in req.variables}, key=lambda s: s != "avgua")
    return [(f"data_stream-{stream}_stepType-{kind}.nc", kind) for kind in kinds]


def _hourly(meta: VarMeta, fields: FieldSlice, land: bool) -> F64:
    if land:
        from localcds.synth.land import land_field

        return land_field(meta, fields)
    return fields.field(meta.short_name)


def monthly_means(meta: VarMeta, seed: int, month: Month, hours: Sequence[int], lats: F64, lons: F64, *,
                  land: bool, hourly_of_day: bool) -> F64:
    """(len(hours), lat, lon): the month's mean (``hours`` == [0]) or its means by hour of the day, in the
    file's unit (an accumulation's monthly mean a mean daily total), packed, NaN at sea for ERA5-Land.

    A field linear in its time-varying terms (:data:`~localcds.synth.fields.LINEAR_FIELDS`: t2m, msl,
    the winds, ...) is averaged in closed form (:class:`~localcds.synth.fields.MeanSlice`: a global 0.25
    degree month of t2m in 0.7 s instead of 107 s), the per-hour speckle's own mean left out (within
    0.03 K of the hours' average for t2m, 0.13 K by hour of day); any other is the average of its hours,
    a day of hours at a time: memory holds 24 fields of the area, whatever the month."""
    start = int(month.start.timestamp())
    if meta.short_name in LINEAR_FIELDS:  # ERA5-Land's are the same fields (land.land_field)
        rows = list(hours) if hourly_of_day else [0]
        first = start + 3600 * np.array(rows, dtype=np.int64)
        step, count = (24, month.days) if hourly_of_day else (1, 24 * month.days)
        values = MeanSlice(seed, first, step, count, lats, lons).field(meta.short_name)
    else:
        total = np.zeros((24, lats.size, lons.size))
        for day in range(month.days):
            seconds = start + day * 86400 + 3600 * np.arange(24, dtype=np.int64)
            total += _hourly(meta, FieldSlice(seed, seconds, lats, lons), land)
        if hourly_of_day:
            values = total[list(hours)] / month.days
        else:
            values = total.sum(axis=0, keepdims=True) / (month.days * 24)
            if meta.step_type != "instant":
                values = values * 24  # a mean daily total
    out = packing.grib_packed(packing_key(meta, land, hourly_of_day), values).astype(np.float64)
    if land:
        from localcds.synth.land import land_mask

        out[:, ~land_mask(seed, lats, lons)] = np.nan
    return out


def packing_key(meta: VarMeta, land: bool, hourly_of_day: bool) -> str:
    """The packing lattice: the hourly one, or for a mean daily total one spanning a day's amounts."""
    if land:
        return f"land:{meta.short_name}"  # ERA5-Land's lattice spans a day's running total already
    if meta.step_type == "instant" or hourly_of_day:
        return meta.short_name
    key = f"moda:{meta.short_name}"
    if key not in packing.PACKING_RANGES:
        low, high = packing.PACKING_RANGES[meta.short_name]
        packing.PACKING_RANGES[key] = (min(0.0, low * 24), high * 24)
    return key


def _rows(req: SynthRequest, times: Sequence[datetime]) -> Iterator[tuple[Month, list[datetime]]]:
    months = sorted({Month(t.year, t.month) for t in times})
    for month in months:
        yield month, [t for t in times if (t.year, t.month) == (month.year, month.month)]


def write_monthly_netcdf(req: SynthRequest, kind: str, dest: Path, *, times: Sequence[datetime], today: date,
                         seed: int, now: datetime) -> Path:
    """One NetCDF of the download: the variables of step type ``kind`` ("all": every one, ERA5-Land)."""
    hod = by_hour(req)
    variables = [m for m in req.variables if kind == "all" or step_type(m, hod) == kind]
    land = req.dataset == LAND_MONTHLY_DATASET
    lats = np.array(req.latitudes, dtype=np.float64)
    lons = np.array(req.longitudes, dtype=np.float64)
    if kind != "all":  # cfgrib orders a file by valid time: by hour of day an accumulation's 01-06 UTC come last
        times = sorted(times, key=lambda t: valid_time(t, variables[0], hod))
    stamps = [valid_time(t, variables[0], hod) for t in times] if kind != "all" else list(times)
    with HDF5_WRITER, netCDF4.Dataset(dest, "w", format="NETCDF4") as ds:
        global_attributes(ds, history_of("mnth" if hod else "moda", kind if kind != "all" else "avgua", now, seed))
        ds.createDimension("valid_time", len(times))
        ds.createDimension("latitude", lats.size)
        ds.createDimension("longitude", lons.size)
        number, vt, lat_v, lon_v = coordinate_variables(ds)
        expver = ds.createVariable("expver", str, ("valid_time",))
        out = []
        for meta in variables:
            var = ds.createVariable(meta.short_name, "f4", ("valid_time", "latitude", "longitude"),
                                    fill_value=np.float32(np.nan), zlib=True, complevel=1, shuffle=True,
                                    chunksizes=(len(times), lats.size, lons.size))
            var.setncatts({**surface_attrs(meta, req), "GRIB_stepType": step_type(meta, hod)})
            out.append((meta, var))
        number.assignValue(0)
        vt[:] = np.array([int(t.timestamp()) for t in stamps], dtype=np.int64)
        lat_v[:] = lats
        lon_v[:] = lons
        expver[:] = np.array([expver_for(Month(t.year, t.month), today) for t in times], dtype=object)
        i = 0
        for month, rows in _rows(req, times):
            for meta, var in out:
                var[i:i + len(rows)] = monthly_means(meta, seed, month, [t.hour for t in rows], lats, lons,
                                                     land=land, hourly_of_day=hod).astype(np.float32)
            i += len(rows)
    return dest


def write_monthly_grib(req: SynthRequest, dest: Path, *, times: Sequence[datetime], today: date, seed: int) -> Path:
    """One GRIB1 file of every variable: a message per (row time, variable), in time order."""
    hod = by_hour(req)
    land = req.dataset == LAND_MONTHLY_DATASET
    lats = np.array(req.latitudes, dtype=np.float64)
    lons = np.array(req.longitudes, dtype=np.float64)
    order = sorted(req.variables, key=lambda m: m.grib_short_name)
    with dest.open("wb") as out:
        for month, rows in _rows(req, times):
            values = {m.short_name: monthly_means(m, seed, month, [t.hour for t in rows], lats, lons, land=land,
                                                  hourly_of_day=hod) for m in order}
            expver = expver_for(month, today)
            for i, row in enumerate(rows):
                for meta in order:
                    out.write(_message(req, meta, row, values[meta.short_name][i].ravel(), expver, land))
    return dest


def _message(req: SynthRequest, meta: VarMeta, row: datetime, values: F64, expver: str, land: bool) -> bytes:
    hod = by_hour(req)
    h = eccodes.codes_grib_new_from_samples("regular_ll_sfc_grib1")
    try:
        keys: list[tuple[str, Any]] = [
            ("marsClass", "l5" if land else "ea"), ("marsStream", "mnth" if hod else "moda"),
            ("paramId", meta.param_id), ("Ni", len(req.longitudes)), ("Nj", len(req.latitudes)),
            ("iScansNegatively", 0), ("jScansPositively", 0), ("jPointsAreConsecutive", 0),
            ("latitudeOfFirstGridPointInDegrees", req.latitudes[0]),
            ("latitudeOfLastGridPointInDegrees", req.latitudes[-1]),
            ("longitudeOfFirstGridPointInDegrees", req.longitudes[0]),
            ("longitudeOfLastGridPointInDegrees", req.longitudes[-1]),
            ("iDirectionIncrementInDegrees", float(req.grid[0])), ("jDirectionIncrementInDegrees", float(req.grid[1])),
            ("bitsPerValue", 16), ("marsType", "an" if meta.step_type == "instant" else "fc"),
            ("stepType", step_type(meta, hod)), ("expver", expver)]
        valid = valid_time(row, meta, hod)
        if meta.step_type == "instant" or not hod:
            base, step = valid, "0"
        else:  # the run of 06 or 18 UTC on the 1st whose step ends at the valid time
            base = row.replace(hour=6 if 7 <= row.hour <= 18 else 18)
            end = int((valid - base).total_seconds() // 3600)
            step = f"{end - 1}-{end}"
        keys += [("dataDate", int(f"{base:%Y%m%d}")), ("dataTime", base.hour * 100), ("stepRange", step)]
        if land:
            keys += [("bitmapPresent", 1), ("missingValue", _LAND_MISSING)]
        for key, value in keys:
            eccodes.codes_set(h, key, value)
        eccodes.codes_set_values(h, np.where(np.isnan(values), _LAND_MISSING, values) if land else values)
        message: bytes = eccodes.codes_get_message(h)
        return message
    finally:
        eccodes.codes_release(h)


__all__ = ["LAND_MONTHLY_DATASET", "MONTHLY_DATASET", "MONTHLY_DATASETS", "available_months", "file_names",
           "monthly_means", "parse_monthly", "write_monthly_grib", "write_monthly_netcdf"]
