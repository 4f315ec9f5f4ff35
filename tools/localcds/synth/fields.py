"""The fields: deterministic, plausible ERA5 values as a pure function of (seed, variable, point, hour)."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from era5etl.core.variables import CATALOGUE_BY_SHORT_NAME, Variable

F64 = npt.NDArray[np.float64]


def stable_seed(*parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "little")


@dataclass(frozen=True)
class Waves:
    """A sum of travelling plane waves on the sphere: smooth in space and time, unit variance."""

    lon_k: npt.NDArray[np.int64]  # integer zonal wavenumbers keep the field continuous across 0/360
    lat_k: F64
    omega: F64  # radians per hour
    phase: F64

    @classmethod
    def make(cls, seed: int, key: str, count: int = 6, static: bool = False) -> Waves:
        rng = np.random.default_rng(stable_seed(seed, key))
        lon_k = rng.integers(2, 24, size=count) * rng.choice([-1, 1], size=count)
        lat_k = rng.uniform(2.0, 24.0, size=count)
        # Synoptic systems: periods of one to six days, some moving east, some west.
        period_h = rng.uniform(24.0, 144.0, size=count)
        omega = 0.0 * period_h if static else 2 * math.pi / period_h * rng.choice([-1, 1], size=count)
        phase = rng.uniform(0.0, 2 * math.pi, size=count)
        return cls(lon_k.astype(np.int64), lat_k, omega, phase)

    def __call__(self, hours: F64, lat_r: F64, lon_r: F64) -> F64:
        """Field on the (hours x lat x lon) product grid."""
        out = np.zeros((hours.size, lat_r.size, lon_r.size))
        amp = math.sqrt(2.0 / self.lon_k.size)
        for k in range(self.lon_k.size):
            # sin(a + b + c) split into a (time x lat) complex factor and a lon factor: two real
            # products over the full grid instead of a sine per value.
            angle = self.omega[k] * hours[:, None] + self.lat_k[k] * lat_r[None, :] + self.phase[k]
            tl = np.exp(1j * angle)
            ln = np.exp(1j * self.lon_k[k] * lon_r)
            out += tl.real[:, :, None] * (amp * ln.imag)[None, None, :]
            out += tl.imag[:, :, None] * (amp * ln.real)[None, None, :]
        return out


_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _white(seed: int, key: str, hours: npt.NDArray[np.int64], lat_milli: npt.NDArray[np.int64],
           lon_milli: npt.NDArray[np.int64]) -> F64:
    """Uniform [-1, 1) per (point, hour), from a splitmix64 hash: the grid-scale speckle of real data."""
    with np.errstate(over="ignore"):
        x = (hours.astype(np.uint64)[:, None, None] * np.uint64(0x9E3779B97F4A7C15)
             + lat_milli.astype(np.uint64)[None, :, None] * np.uint64(0xC2B2AE3D27D4EB4F)
             + lon_milli.astype(np.uint64)[None, None, :] * np.uint64(0x165667B19E3779F9)
             + np.uint64(stable_seed(seed, key, "white") & 0xFFFFFFFFFFFFFFFF))
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    unit: F64 = (x >> np.uint64(11)).astype(np.float64) * (2.0 / 2**53) - 1.0
    return unit


class FieldSlice:
    """All physical fields over one time slice, each computed once and only if asked for."""

    def __init__(self, seed: int, seconds: npt.NDArray[np.int64], lats: F64, lons: F64) -> None:
        self.seed = seed
        self.hours_i = seconds // 3600
        self.hours = self.hours_i.astype(np.float64)
        self.lat_r = np.radians(lats)
        self.lon_r = np.radians(np.mod(lons, 360.0))
        self.lons = lons
        self.lat_milli = np.rint(lats * 1000).astype(np.int64)
        self.lon_milli = np.rint(np.mod(lons, 360.0) * 1000).astype(np.int64)

    def smooth(self, key: str) -> F64:
        return Waves.make(self.seed, key)(self.hours, self.lat_r, self.lon_r)

    def static(self, key: str) -> F64:
        return Waves.make(self.seed, key, static=True)(np.zeros(1), self.lat_r, self.lon_r)

    def white(self, key: str) -> F64:
        return _white(self.seed, key, self.hours_i, self.lat_milli, self.lon_milli)

    @cached_property
    def elevation_km(self) -> F64:
        """Pseudo-orography: mostly flat, with ranges up to ~2 km."""
        return 0.8 * np.clip(self.static("orography") - 0.3, 0.0, None) ** 1.5

    @cached_property
    def diurnal(self) -> F64:
        # Local solar time, not UTC: the afternoon maximum moves with longitude.
        solar_h = np.mod(self.hours[:, None, None] + (self.lons / 15.0)[None, None, :], 24.0)
        amplitude = 1.5 + 4.5 * np.cos(self.lat_r)[None, :, None]
        return np.asarray(amplitude * np.cos(2 * math.pi * (solar_h - 15.0) / 24.0), dtype=np.float64)

    @cached_property
    def t2m(self) -> F64:
        lat = self.lat_r[None, :, None]
        day_of_year = np.mod(self.hours / 24.0 - 0.5, 365.2425)[:, None, None]  # ~days since 1 Jan
        # Warm tropics, cold poles; the hemisphere in summer warmest mid-July / mid-January.
        base = 301.0 - 48.0 * np.sin(lat) ** 2
        season = 17.0 * np.sin(lat) * np.cos(2 * math.pi * (day_of_year - 196.0) / 365.2425)
        lapse = -6.5 * self.elevation_km
        return np.asarray(base + season + self.diurnal + lapse + 3.0 * self.smooth("t2m")
                          + 0.25 * self.white("t2m"), dtype=np.float64)

    @cached_property
    def d2m(self) -> F64:
        dryness = 2.0 + 3.5 * (1.0 + np.tanh(self.smooth("dryness"))) + 0.6 * np.clip(self.diurnal, 0, None)
        return self.t2m - dryness - 0.2 * (1.0 + self.white("d2m"))

    @cached_property
    def msl(self) -> F64:
        # Subtropical highs and subpolar lows, with travelling systems on top.
        zonal = 101325.0 - 450.0 * np.cos(6.0 * self.lat_r)[None, :, None]
        return np.asarray(zonal + 700.0 * self.smooth("msl") + 15.0 * self.white("msl"), dtype=np.float64)

    @cached_property
    def sp(self) -> F64:
        return np.asarray(self.msl * np.exp(-self.elevation_km * 1000.0 / 8400.0), dtype=np.float64)

    @cached_property
    def u10(self) -> F64:
        # Trade easterlies, mid-latitude westerlies, polar easterlies.
        zonal = -5.0 * np.cos(6.0 * self.lat_r)[None, :, None]
        return np.asarray(zonal + 4.0 * self.smooth("u10") + 0.4 * self.white("u10"), dtype=np.float64)

    @cached_property
    def v10(self) -> F64:
        return 3.5 * self.smooth("v10") + 0.4 * self.white("v10")

    @cached_property
    def cloud(self) -> F64:
        return self.smooth("cloud")

    @cached_property
    def tcc(self) -> F64:
        return np.clip(0.55 + 0.55 * self.cloud + 0.05 * self.white("tcc"), 0.0, 1.0)

    @cached_property
    def tp(self) -> F64:
        # Metres over the hour ending at valid_time; rain only under the thicker cloud.
        wet = np.clip(self.cloud - 0.35 + 0.05 * self.white("tp"), 0.0, None)
        return np.asarray(0.003 * wet**1.5, dtype=np.float64)

    @cached_property
    def sf(self) -> F64:
        frozen = np.clip((273.65 - self.t2m) / 1.5, 0.0, 1.0)
        return self.tp * frozen

    # A few of the catalogue's other variables, tied to the fields above where physics ties them.

    @cached_property
    def speed10(self) -> F64:
        return np.asarray(np.hypot(self.u10, self.v10), dtype=np.float64)

    @cached_property
    def u100(self) -> F64:
        return 1.3 * self.u10 + 0.3 * self.white("u100")

    @cached_property
    def v100(self) -> F64:
        return 1.3 * self.v10 + 0.3 * self.white("v100")

    @cached_property
    def fg10(self) -> F64:
        # The hour's strongest gust: well above the mean wind, stronger by day.
        return np.asarray(1.6 * self.speed10 + 1.0 + 0.3 * np.clip(self.diurnal, 0, None)
                          + 0.5 * (1.0 + self.white("fg10")), dtype=np.float64)

    @cached_property
    def i10fg(self) -> F64:
        return np.asarray(0.8 * self.fg10 + 0.3 * (1.0 + self.white("i10fg")), dtype=np.float64)

    @cached_property
    def mx2t(self) -> F64:
        return self.t2m + 0.4 + 0.3 * (1.0 + self.white("mx2t"))

    @cached_property
    def mn2t(self) -> F64:
        return self.t2m - 0.4 - 0.3 * (1.0 + self.white("mn2t"))

    @cached_property
    def skt(self) -> F64:
        return np.asarray(self.t2m + 0.8 * self.diurnal + 0.5 * self.white("skt"), dtype=np.float64)

    @cached_property
    def sst(self) -> F64:
        # The sea: never below freezing sea water, slow and smooth.
        return np.asarray(np.clip(self.t2m - 0.8 * self.diurnal, 271.46, 305.0), dtype=np.float64)

    @cached_property
    def z(self) -> F64:
        # Surface geopotential: the pseudo-orography the pressures use, the same every hour.
        return np.broadcast_to(self.elevation_km * 1000.0 * 9.80665, self.t2m.shape).astype(np.float64)

    @cached_property
    def lsm(self) -> F64:
        land = np.clip(0.5 + 2.0 * self.static("land"), 0.0, 1.0)
        return np.broadcast_to(land, self.t2m.shape).astype(np.float64)

    def generic(self, short_name: str) -> F64:
        """Any catalogued variable without its own field: smooth, within its bounds (file units)."""
        var = CATALOGUE_BY_SHORT_NAME[short_name]
        low, high = synth_range(var)
        span = high - low
        if var.units == "K":  # temperatures follow the 2 m temperature
            value = self.t2m + 1.5 * self.smooth(short_name)
            return np.asarray(np.clip(value, low + 0.05 * span, high - 0.05 * span), dtype=np.float64)
        if var.step_type != "instant" and var.low >= 0:
            # Non-negative accumulations and rates: nothing in most places, showers under the cloud.
            wet = np.clip(self.cloud + 0.5 * self.smooth(short_name) - 0.3, 0.0, None)
            return np.asarray(low + span * 0.9 * np.tanh(0.5 * wet**1.5), dtype=np.float64)
        # Anything else: around the middle of its range, strictly inside it.
        value = np.tanh(0.6 * self.smooth(short_name) + 0.05 * self.white(short_name))
        return np.asarray(low + span * (0.5 + 0.4 * value), dtype=np.float64)

    def field(self, short_name: str) -> F64:
        if short_name not in OWN_FIELDS:
            return self.generic(short_name)
        value: F64 = getattr(self, short_name)
        return value


# The variables with a field of their own above; any other catalogued one gets FieldSlice.generic.
OWN_FIELDS = frozenset({"t2m", "d2m", "msl", "sp", "u10", "v10", "tcc", "tp", "sf", "u100", "v100", "fg10",
                        "i10fg", "mx2t", "mn2t", "skt", "sst", "z", "lsm"})
# An upper bound for the variables without one (all water in mm): per hour, in the table's unit.
OPEN_HIGH_SPAN = 10.0


def synth_range(var: Variable) -> tuple[float, float]:
    """The range, in the file's units, the synthetic values of ``var`` keep inside: its bounds, an open
    upper bound closed at :data:`OPEN_HIGH_SPAN` above the lower."""
    high = var.high if var.high is not None else var.low + OPEN_HIGH_SPAN
    a, b = var.to_file(var.low), var.to_file(high)
    return min(a, b), max(a, b)
