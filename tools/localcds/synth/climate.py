"""The planted climate: a known warming trend, and year-to-year noise around it, in the synthetic 2 m
temperature (:attr:`.fields.FieldSlice.t2m`, so every temperature derived from it warms alike).

The atlas (docs/atlas.md) ranks every grid point by its trend and takes area-weighted zonal means; a
planted signal with known figures is what its tests recover. The trend, in K per decade, is

    trend(lat, lon) = a + b * g(lat) + sum over HOT_SPOTS of peak * exp(-d**2 / (2 * radius**2))

with ``g`` a smooth step from 0 to 1 centred at :data:`AMPLIFIED_FROM` (polar amplification: the Arctic
warms fastest), ``d`` the great-circle distance to a hot spot's centre, in degrees. ``a`` and ``b`` are
solved, once, so that the area-weighted (cos latitude) means on the 0.25 degree global lattice are
:data:`GLOBAL_TREND` over the globe and :data:`ARCTIC_TREND` over the Arctic (latitude >=
:data:`ARCTIC_SOUTH`): Rantanen et al. 2022 (Commun. Earth Environ. 3, 168), ERA5 1979-2021, an Arctic
amplification of 3.70. ``g`` is flat over the Arctic, so coarser lattices (1, 2.5, 5 degrees) give the
same means to within 0.002 (tests/unit/tools/test_localcds_climate.py).

The anomaly is linear in time over the whole record, zero on 2000-01-01, plus a per-(point, calendar
year) noise (std :data:`INTERANNUAL_STD`, zero mean, constant within a year): an ordinary least-squares
fit over any span of whole years recovers the trend up to that noise (+-0.04 K/decade a point over
1979-2021).
"""

from __future__ import annotations

import math
from functools import cache, lru_cache

import numpy as np
import numpy.typing as npt

from localcds.synth.noise import F64, white

GLOBAL_TREND = 0.191  # K per decade, area-weighted over the globe
ARCTIC_TREND = 0.705  # K per decade, area-weighted north of ARCTIC_SOUTH
ARCTIC_SOUTH = 66.5  # degrees north: the Arctic Circle
# (name, latitude, longitude, radius in degrees (the Gaussian's sigma), peak trend added in K per decade).
# The centres sit on the 5 degree lattice, so every coarse lattice has a cell at the peak.
HOT_SPOTS: tuple[tuple[str, float, float, float, float], ...] = (
    ("Aral Sea, Central Asia", 45.0, 60.0, 5.0, 1.1),
    ("Tassili n'Ajjer, Sahara", 25.0, 10.0, 5.0, 1.1),
    ("Gran Chaco, South America", -25.0, -60.0, 5.0, 1.1),
)
AMPLIFIED_FROM, AMPLIFIED_WIDTH = 55.0, 4.0  # degrees: g's step, 0.5 at 55 N, 0.99 by 64.2 N
INTERANNUAL_STD = 0.3  # K
EPOCH_HOURS = 262968.0  # 2000-01-01T00 in hours since 1970-01-01: the anomaly's zero
HOURS_PER_DECADE = 10 * 365.2425 * 24
CALIBRATION_STEP = 0.25  # degrees: the lattice the means are exact on


def amplification(lats_deg: F64) -> F64:
    """g(lat): 0 in the tropics and the south, 1 over the Arctic, a smooth step in between."""
    return np.asarray(0.5 * (1.0 + np.tanh((lats_deg - AMPLIFIED_FROM) / AMPLIFIED_WIDTH)), dtype=np.float64)


def hot_spots(lats_deg: F64, lons_deg: F64) -> F64:
    """(lat x lon) the hot spots' added trend, K per decade."""
    lat = np.radians(lats_deg)[:, None]
    out = np.zeros((lats_deg.size, lons_deg.size))
    for _, lat0, lon0, radius, peak in HOT_SPOTS:
        dlon = np.radians(lons_deg - lon0)[None, :]
        # Haversine: exact at small distances, where the peak is.
        h = (np.sin((lat - math.radians(lat0)) / 2) ** 2
             + np.cos(lat) * math.cos(math.radians(lat0)) * np.sin(dlon / 2) ** 2)
        d = np.degrees(2 * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0))))
        out += peak * np.exp(-(d**2) / (2 * radius**2))
    return out


def area_means(lats_deg: F64, field: F64) -> tuple[float, float]:
    """(global, Arctic) cos(latitude)-weighted means of a (lat x lon) field."""
    w = np.broadcast_to(np.cos(np.radians(lats_deg))[:, None], field.shape)
    arctic = np.broadcast_to((lats_deg >= ARCTIC_SOUTH)[:, None], field.shape)
    return float((w * field).sum() / w.sum()), float((w * field)[arctic].sum() / w[arctic].sum())


def lattice(step: float) -> tuple[F64, F64]:
    """The global lattice of ``step`` degrees: latitudes -90..90, longitudes 0..360 - step."""
    return np.linspace(-90.0, 90.0, round(180 / step) + 1), np.arange(round(360 / step), dtype=np.float64) * step


@cache
def coefficients() -> tuple[float, float]:
    """(a, b) of the trend: the two linear conditions on the global and Arctic means, solved on the
    0.25 degree lattice with the hot spots in (~0.1 s, once a process)."""
    lats, lons = lattice(CALIBRATION_STEP)
    g_global, g_arctic = area_means(lats, np.broadcast_to(amplification(lats)[:, None], (lats.size, lons.size)))
    h_global, h_arctic = area_means(lats, hot_spots(lats, lons))
    b = ((ARCTIC_TREND - h_arctic) - (GLOBAL_TREND - h_global)) / (g_arctic - g_global)
    return GLOBAL_TREND - h_global - b * g_global, b


def trend_per_decade(lats_deg: F64, lons_deg: F64) -> F64:
    """(lat x lon) the planted trend of the 2 m temperature, K per decade, at the product grid of
    ``lats_deg`` and ``lons_deg`` (degrees; longitudes in any convention). Read only: the last few
    lattices' are kept, as every time slice of a download asks for its lattice's again (0.16 s global)."""
    lats, lons = np.asarray(lats_deg, dtype=np.float64), np.asarray(lons_deg, dtype=np.float64)
    return _trend(lats.tobytes(), lons.tobytes())


@lru_cache(maxsize=8)
def _trend(lats_bytes: bytes, lons_bytes: bytes) -> F64:
    lats, lons = np.frombuffer(lats_bytes), np.frombuffer(lons_bytes)
    a, b = coefficients()
    trend = np.asarray(a + b * amplification(lats)[:, None] + hot_spots(lats, lons), dtype=np.float64)
    trend.flags.writeable = False
    return trend


def interannual(seed: int, years: npt.NDArray[np.int64], lats_deg: F64, lons_deg: F64) -> F64:
    """(year x lat x lon) the year's noise, K: uniform, zero mean, std :data:`INTERANNUAL_STD`, drawn
    per (point, calendar year) and independent between points, so area means average it away."""
    lat_milli = np.rint(lats_deg * 1000).astype(np.int64)
    lon_milli = np.rint(np.mod(lons_deg, 360.0) * 1000).astype(np.int64)
    return INTERANNUAL_STD * math.sqrt(3.0) * white(seed, "interannual", years, lat_milli, lon_milli)


def calendar_years(hours: F64) -> npt.NDArray[np.int64]:
    """The UTC calendar year of each of ``hours`` (since 1970-01-01)."""
    seconds = np.floor(hours * 3600.0).astype(np.int64).astype("datetime64[s]")
    return seconds.astype("datetime64[Y]").astype(np.int64) + 1970


def anomaly(seed: int, hours: F64, lats_deg: F64, lons_deg: F64) -> F64:
    """(time x lat x lon) the planted anomaly of the 2 m temperature, K, at ``hours`` since 1970-01-01:
    the trend times the decades since 2000-01-01, plus the calendar year's noise."""
    decades = (np.asarray(hours, dtype=np.float64) - EPOCH_HOURS) / HOURS_PER_DECADE
    years, which = np.unique(calendar_years(hours), return_inverse=True)
    noise = interannual(seed, years, lats_deg, lons_deg)[which.ravel()]
    return np.asarray(trend_per_decade(lats_deg, lons_deg)[None] * decades[:, None, None] + noise, dtype=np.float64)
