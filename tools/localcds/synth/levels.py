"""ERA5 on pressure levels (``reanalysis-era5-pressure-levels``): its variables' metadata and fields.

A level's field is a pure function of (seed, variable, level, point, hour), like the single levels':
a standard-atmosphere profile (the height of the level, its temperature with the tropopause at 11 km,
winds strongest near the jet, moisture falling off with height, ozone peaking near 30 km) with
travelling waves on top, so profiles are plausible and a month requested in NetCDF and in GRIB, or for
overlapping areas and levels, agrees on every value they share. Values are packed on a 16-bit lattice
fixed per variable (:mod:`.packing`, under the key ``pl:<short name>``, since ``z`` differs in range
from the single levels' surface geopotential).
"""

from __future__ import annotations

import math

import numpy as np

from era5etl.core.catalogue_pl import PL_CATALOGUE, PRESSURE_LEVELS_HPA
from localcds.synth import packing
from localcds.synth.fields import F64, FieldSlice, synth_range
from localcds.synth.variables import VarMeta, cf_name_of

PL_DATASET = "reanalysis-era5-pressure-levels"
LEVELS: tuple[int, ...] = PRESSURE_LEVELS_HPA
G = 9.80665

PL_META: dict[str, VarMeta] = {
    v.cds_name: VarMeta(v.cds_name, v.short_name, v.grib_name, v.param_id, v.name, v.units, cf_name_of(v.param_id),
                        "instant")
    for v in PL_CATALOGUE}
PL_FILE_ORDER: tuple[str, ...] = tuple(v.short_name for v in PL_CATALOGUE)
_BY_SHORT = {v.short_name: v for v in PL_CATALOGUE}


def packing_key(short_name: str) -> str:
    return f"pl:{short_name}"


def _lattice_range(low: float, high: float, bits: int = 16) -> tuple[float, float]:
    """``(low, high)`` with ``low`` moved down onto a multiple of the packing step: every packed value
    is then a short binary fraction, which GRIB1's reference value (an IBM float) holds exactly, so
    the GRIB and the NetCDF of a request decode to the same float32 (a bound like -1e-4 would not)."""
    step = 2.0 ** math.ceil(math.log2(1.01 * (high - low) / (2.0**bits - 1)))
    return float(math.floor(low / step) * step), float(high)


for _v in PL_CATALOGUE:
    packing.PACKING_RANGES.setdefault(packing_key(_v.short_name), _lattice_range(*synth_range(_v)))


def height_m(level: int) -> float:
    """The level's height in the standard atmosphere (troposphere to 11 km, isothermal above)."""
    p = float(level)
    if p >= 226.32:
        return float(44330.8 * (1.0 - (p / 1013.25) ** 0.190263))
    return 11000.0 + 6341.6 * math.log(226.32 / p)


def pl_field(fields: FieldSlice, short_name: str, level: int) -> F64:
    """(hours x lat x lon) values of one variable on one level, in the file's unit, inside its bounds."""
    h = height_m(level)
    lat = fields.lat_r[None, :, None]
    wave = fields.smooth(f"{short_name}@{level}")
    low, high = synth_range(_BY_SHORT[short_name])
    if short_name == "t":
        base = max(288.15 - 6.5e-3 * h, 216.65) - 25.0 * np.sin(lat) ** 2 * (1.0 if h < 11000 else 0.3)
        value = base + 3.0 * wave
    elif short_name == "z":
        value = G * (h + 150.0 * np.cos(2.0 * lat) + 120.0 * wave)
    elif short_name == "u":
        jet = 30.0 * math.exp(-(((h - 11000.0) / 6000.0) ** 2))
        value = jet * np.cos(2.0 * lat) ** 2 - 3.0 * np.cos(6.0 * lat) + 6.0 * wave
    elif short_name == "v":
        value = 5.0 * wave
    elif short_name == "r":
        value = 55.0 + 35.0 * np.tanh(wave)
    elif short_name == "q":
        value = 0.012 * math.exp(-h / 2500.0) * (0.55 + 0.4 * np.tanh(wave)) * np.cos(lat) ** 2
    elif short_name == "w":
        value = 0.15 * wave
    elif short_name in ("vo", "d"):
        value = 2e-5 * wave
    elif short_name == "cc":
        value = np.clip(0.25 + 0.35 * wave, 0.0, 1.0)
    elif short_name == "o3":
        value = (1e-7 + 8e-6 * math.exp(-(((h - 30000.0) / 9000.0) ** 2))) * (1.0 + 0.1 * np.tanh(wave))
    else:  # cloud liquid, ice, rain and snow: mostly none, some under the waves' crests
        value = 2e-4 * np.clip(wave - 0.5, 0.0, None) * math.exp(-h / 6000.0)
    out = np.broadcast_to(value, (fields.hours.size, fields.lat_r.size, fields.lon_r.size))
    return np.asarray(np.clip(out, low, high), dtype=np.float64)
