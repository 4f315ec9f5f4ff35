"""The fields: deterministic, plausible ERA5 values as a pure function of (seed, variable, point, hour)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from era5etl.core.variables import CATALOGUE_BY_SHORT_NAME, Variable
from localcds.synth import climate
from localcds.synth.noise import F64 as F64, stable_seed as stable_seed, white as _white

C128 = npt.NDArray[np.complex128]
# Bumped whenever the values change: a cache of synthetic downloads keys its files by it.
# 2: the planted climate (localcds.synth.climate).
FIELDS_VERSION = 2


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
        return self.over(np.exp(1j * self.omega[None, :] * hours[:, None]), lat_r, lon_r)

    def mean(self, first: F64, step: int, count: int, lat_r: F64, lon_r: F64) -> F64:
        """(first x lat x lon) the field's mean over the hours ``first + step * j``, ``j < count``, in
        closed form: each wave's time factor replaced by its mean, a geometric sum."""
        return self.over(mean_cis(self.omega, first, step, count), lat_r, lon_r)

    def over(self, cis: C128, lat_r: F64, lon_r: F64) -> F64:
        """The field with the time factors ``cis`` (time x wave), exp(i * omega * hour) or a mean of them."""
        out = np.zeros((cis.shape[0], lat_r.size, lon_r.size))
        amp = math.sqrt(2.0 / self.lon_k.size)
        for k in range(self.lon_k.size):
            # sin(a + b + c) split into a (time x lat) complex factor and a lon factor: two real
            # products over the full grid instead of a sine per value.
            tl = cis[:, k, None] * np.exp(1j * (self.lat_k[k] * lat_r + self.phase[k]))[None, :]
            ln = np.exp(1j * self.lon_k[k] * lon_r)
            out += tl.real[:, :, None] * (amp * ln.imag)[None, None, :]
            out += tl.imag[:, :, None] * (amp * ln.real)[None, None, :]
        return out


def mean_cis(omega: F64, first: F64, step: int, count: int) -> C128:
    """(first x omega) the mean of exp(i * omega * h) over h = first + step * j, j < count: exp(i * omega *
    first) times the geometric sum (1 - z**count) / (count * (1 - z)), z = exp(i * omega * step) (1 when
    z is 1: a whole number of periods per step)."""
    z = np.exp(1j * np.asarray(omega, dtype=np.float64) * step)
    flat = np.abs(1.0 - z) < 1e-9
    ratio = (1.0 - z**count) / np.where(flat, 1.0, count * (1.0 - z))
    geometric = np.where(flat, 1.0 + 0j, ratio)
    return np.asarray(np.exp(1j * np.multiply.outer(first, omega)) * geometric, dtype=np.complex128)


# The seasonal and the diurnal cycle's angular frequencies, radians per hour.
YEAR_OMEGA = 2 * math.pi / (24.0 * 365.2425)
DAY_OMEGA = 2 * math.pi / 24.0


class FieldSlice:
    """All physical fields over one time slice, each computed once and only if asked for."""

    def __init__(self, seed: int, seconds: npt.NDArray[np.int64], lats: F64, lons: F64) -> None:
        self.seed = seed
        self.hours_i = seconds // 3600
        self.hours = self.hours_i.astype(np.float64)
        self.lats = lats
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

    def cycle(self, omega: float) -> C128:
        """(time,) exp(i * omega * hour): a periodic term's time factor (:class:`MeanSlice`: its mean)."""
        return np.asarray(np.exp(1j * omega * self.hours), dtype=np.complex128)

    @cached_property
    def anomaly(self) -> F64:
        """The planted climate's warming and year-to-year noise (:mod:`.climate`)."""
        return climate.anomaly(self.seed, self.hours, self.lats, self.lons)

    @cached_property
    def elevation_km(self) -> F64:
        """Pseudo-orography: mostly flat, with ranges up to ~2 km."""
        return 0.8 * np.clip(self.static("orography") - 0.3, 0.0, None) ** 1.5

    @cached_property
    def diurnal(self) -> F64:
        # Local solar time, not UTC: the afternoon maximum (15 h) moves with longitude.
        solar = self.cycle(DAY_OMEGA)[:, None, None] * np.exp(1j * DAY_OMEGA * (self.lons / 15.0 - 15.0))[None, None, :]
        amplitude = 1.5 + 4.5 * np.cos(self.lat_r)[None, :, None]
        return np.asarray(amplitude * solar.real, dtype=np.float64)

    @cached_property
    def season(self) -> F64:
        """The hemisphere in summer warmest mid-July (day 196 of the year) / mid-January."""
        cos_day = (self.cycle(YEAR_OMEGA) * np.exp(-1j * YEAR_OMEGA * 24.0 * 196.5)).real[:, None, None]
        return np.asarray(17.0 * np.sin(self.lat_r)[None, :, None] * cos_day, dtype=np.float64)

    @cached_property
    def t2m(self) -> F64:
        # Warm tropics, cold poles; the seasons, the day; travelling weather, speckle; the planted climate.
        base = 301.0 - 48.0 * np.sin(self.lat_r)[None, :, None] ** 2
        lapse = -6.5 * self.elevation_km
        return np.asarray(base + self.season + self.diurnal + lapse + 3.0 * self.smooth("t2m")
                          + 0.25 * self.white("t2m") + self.anomaly, dtype=np.float64)

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


# The fields linear in the time-varying terms (waves, cycles, speckle, anomaly): a mean of hours of any of
# them is the same formula over the terms' means, which MeanSlice gives in closed form.
LINEAR_FIELDS = frozenset({"t2m", "msl", "sp", "u10", "v10", "u100", "v100", "mx2t", "mn2t", "skt", "z", "lsm"})


class MeanSlice(FieldSlice):
    """The means of :data:`LINEAR_FIELDS` over the hours ``first + step * j``, ``j < count``, one row per
    first hour (a month: step 1, count its hours; by hour of day: step 24, count its days), in closed
    form: the waves' and cycles' time factors by their geometric means, the anomaly at the mean hour (it
    is linear within a year), the per-hour speckle by its expectation, 0. The speckle's own mean over the
    hours is what is left out. For t2m its std is 0.25 / sqrt(3 * hours): 0.0053 K over a month of 744
    hours; measured on the 65,160 points of the 1 degree global lattice, the largest difference from the
    hours' average is 0.023 K (January 2020), 0.028 K (February 1990, 672 hours); by hour of day (28-31
    hours) std 0.027 K, largest 0.13 K. tests/unit/tools/test_localcds_climate.py checks the closed form
    against the hours' average with and without the speckle."""

    def __init__(self, seed: int, first: npt.NDArray[np.int64], step_h: int, count: int, lats: F64,
                 lons: F64) -> None:
        super().__init__(seed, first, lats, lons)
        self.step_h, self.count = step_h, count

    def smooth(self, key: str) -> F64:
        return Waves.make(self.seed, key).mean(self.hours, self.step_h, self.count, self.lat_r, self.lon_r)

    def white(self, key: str) -> F64:
        return np.zeros((self.hours.size, self.lat_r.size, self.lon_r.size))

    def cycle(self, omega: float) -> C128:
        return mean_cis(np.array(omega), self.hours, self.step_h, self.count)

    @cached_property
    def anomaly(self) -> F64:
        middle = self.hours + self.step_h * (self.count - 1) / 2.0
        return climate.anomaly(self.seed, middle, self.lats, self.lons)

    def field(self, short_name: str) -> F64:
        if short_name not in LINEAR_FIELDS:
            raise ValueError(f"{short_name}: no closed-form mean (not linear in its time-varying terms)")
        return super().field(short_name)


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
