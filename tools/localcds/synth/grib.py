"""GRIB writing: one CDS GRIB download, as the CDS delivers ERA5 single levels, encoded by ecCodes.

What the real files in tests/data/era5-samples hold, and so what is written here:

* GRIB edition 1, centre ecmf, class ``ea``, stream ``oper``, local definition 1, simple packing at
  16 bits without a bitmap; one message per (variable, valid time), in valid-time order;
* instantaneous variables as analyses: type ``an``, step 0, dataDate/dataTime the valid time;
* accumulations (tp, sf, ...) and extremes (max/min) as forecasts: type ``fc`` from the runs at 06
  and 18 UTC, stepRange ``0-1`` .. ``11-12`` (the hour ending at the valid time), so valid 07-18 UTC
  comes from the 06 UTC run of the same day, 19-23 UTC from its 18 UTC run and 00-06 UTC from the
  previous day's 18 UTC run;
* ``expver`` by the publication rule of the NetCDF path (:func:`~localcds.synth.publication.expver_for`),
  applied to the month of the message's base time: ERA5T switches in by forecast base time on the
  CDS, so the first hours of a month can hold ERA5T analyses beside final accumulations;
* the request's grid and area, longitudes in the request's own convention (0-360 or -180-180),
  rows north first, points west to east.

The values are those of the NetCDF path: the same fields (:mod:`.fields`) on the same 16-bit lattice
(:mod:`.packing`), which ecCodes' per-field packing reproduces exactly, so a month requested in both
formats decodes to the same numbers. A field with one value throughout (snowfall in summer) is
written as ecCodes writes constant fields (0 bits, the value in the reference); a decoder reads the
same values. Every message is encoded by ecCodes from its ``regular_ll_sfc_grib1`` sample: nothing
here writes GRIB bytes by hand.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import eccodes
import numpy as np

from era5etl.core.months import Month
from localcds.synth.fields import FieldSlice
from localcds.synth.levels import packing_key, pl_field
from localcds.synth.netcdf import DEFAULT_SLICE_VALUES
from localcds.synth.packing import grib_packed
from localcds.synth.publication import expver_for
from localcds.synth.request import SynthRequest
from localcds.synth.variables import VarMeta

TEMPLATE = "regular_ll_sfc_grib1"
BITS_PER_VALUE = 16
FORECAST_BASE_HOURS = (6, 18)
FORECAST_LENGTH_H = 12


def forecast_base(valid: datetime) -> datetime:
    """The ERA5 forecast run whose step ending at ``valid`` holds the hour before it (06 or 18 UTC)."""
    for back in range(1, FORECAST_LENGTH_H + 1):
        base = valid - timedelta(hours=back)
        if base.hour in FORECAST_BASE_HOURS:
            return base
    raise AssertionError("two runs a day always cover the 12 hours before a valid time")


def is_analysis(meta: VarMeta) -> bool:
    return meta.step_type == "instant"


def _date_time(moment: datetime) -> tuple[int, int]:
    return int(f"{moment:%Y%m%d}"), moment.hour * 100


def _release(handles: Sequence[Any]) -> None:
    for handle in handles:
        eccodes.codes_release(handle)


@contextmanager
def _prototypes(req: SynthRequest) -> Iterator[dict[tuple[str, int], Any]]:
    """One handle per variable (and level) with everything but its time, expver and values set: each
    message is a clone of it (cheaper than setting the grid's keys thousands of times)."""
    made: dict[tuple[str, int], Any] = {}
    lats, lons = req.latitudes, req.longitudes
    try:
        for meta, level in ((m, lev) for m in req.variables for lev in (req.levels or (0,))):
            handle = eccodes.codes_grib_new_from_samples(TEMPLATE)
            made[meta.short_name, level] = handle
            for key, value in (
                ("marsClass", "ea"), ("marsStream", "oper"), ("generatingProcessIdentifier", 145),
                ("paramId", meta.param_id), ("typeOfLevel", "isobaricInhPa" if req.levels else "surface"),
                ("level", level),
                ("Ni", len(lons)), ("Nj", len(lats)),
                ("iScansNegatively", 0), ("jScansPositively", 0), ("jPointsAreConsecutive", 0),
                ("latitudeOfFirstGridPointInDegrees", lats[0]), ("latitudeOfLastGridPointInDegrees", lats[-1]),
                ("longitudeOfFirstGridPointInDegrees", lons[0]), ("longitudeOfLastGridPointInDegrees", lons[-1]),
                ("iDirectionIncrementInDegrees", float(req.grid[0])),
                ("jDirectionIncrementInDegrees", float(req.grid[1])),
                ("bitsPerValue", BITS_PER_VALUE),
            ):
                eccodes.codes_set(handle, key, value)
            if is_analysis(meta):
                eccodes.codes_set(handle, "marsType", "an")
            else:
                eccodes.codes_set(handle, "marsType", "fc")
                eccodes.codes_set(handle, "stepType", meta.step_type)
        yield made
    finally:
        _release(list(made.values()))


def _message(prototype: Any, meta: VarMeta, valid: datetime, values: np.ndarray[Any, Any], today: date,
             expvers: dict[tuple[int, int], str]) -> bytes:
    handle = eccodes.codes_clone(prototype)
    try:
        base = valid if is_analysis(meta) else forecast_base(valid)
        day, hhmm = _date_time(base)
        eccodes.codes_set(handle, "dataDate", day)
        eccodes.codes_set(handle, "dataTime", hhmm)
        if not is_analysis(meta):
            end = int((valid - base).total_seconds() // 3600)
            eccodes.codes_set(handle, "stepRange", f"{end - 1}-{end}")
        key = (base.year, base.month)
        if key not in expvers:
            expvers[key] = expver_for(Month(*key), today)
        eccodes.codes_set(handle, "expver", expvers[key])
        eccodes.codes_set_values(handle, values)
        message: bytes = eccodes.codes_get_message(handle)
        return message
    finally:
        eccodes.codes_release(handle)


def write_grib(
    req: SynthRequest,
    dest: Path,
    *,
    times: Sequence[datetime],
    today: date,
    seed: int = 0,
    slice_values: int = DEFAULT_SLICE_VALUES,
) -> Path:
    """Write every variable of ``req`` at ``times`` to ``dest`` as one GRIB1 file (the CDS's download).

    Fields are computed a slice of hours at a time, all variables of a slice within ``slice_values``
    values, and written message by message, so memory stays bounded whatever the area.
    """
    if not times:
        raise ValueError("no time to write")
    seconds = np.array([int(t.timestamp()) for t in times], dtype=np.int64)
    lats = np.array(req.latitudes, dtype=np.float64)
    lons = np.array(req.longitudes, dtype=np.float64)
    points = lats.size * lons.size
    per_slice = max(1, slice_values // (points * len(req.variables) * max(1, len(req.levels))))
    # One file holds them all; the real files list a valid time's parameters by shortName.
    order = sorted(req.variables, key=lambda m: m.grib_short_name)
    expvers: dict[tuple[int, int], str] = {}
    with _prototypes(req) as prototypes, dest.open("wb") as out:
        for start in range(0, len(times), per_slice):
            stop = min(len(times), start + per_slice)
            fields = FieldSlice(seed, seconds[start:stop], lats, lons)
            if req.levels:  # on pressure levels: a message per (variable, level), levels as the request lists them
                packed = {(m.short_name, lev): grib_packed(packing_key(m.short_name),
                                                            pl_field(fields, m.short_name, lev))
                          for m in order for lev in req.levels}
            else:
                packed = {(m.short_name, 0): grib_packed(m.short_name, fields.field(m.short_name)) for m in order}
            for i in range(stop - start):
                for meta in order:
                    for lev in req.levels or (0,):
                        values = packed[meta.short_name, lev][i].astype(np.float64).ravel()
                        out.write(_message(prototypes[meta.short_name, lev], meta, times[start + i], values, today,
                                           expvers))
    return dest
