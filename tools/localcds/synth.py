"""Deterministic, ERA5-shaped data written the way the new (2024+) CDS delivers it.

The layout copies the real downloads in /work/shared/era5-samples byte for byte where it matters to
a reader: dimensions ``valid_time`` (int64 seconds since 1970), ``latitude`` (float64, north first)
and ``longitude`` (float64); a scalar ``number`` coordinate; a string ``expver`` coordinate along
``valid_time``; float32 data with a NaN ``_FillValue``, zlib level 1 with shuffle; the cfgrib
attributes. Instantaneous and accumulated variables go to separate files named as the CDS names
them, and a request holding both kinds is delivered as one ZIP of the two, again as the CDS does.

Values are a pure function of (seed, variable, grid point, hour), never of the rest of the request:
the same request always gives the same values, and two requests that overlap agree on the points
they share, so a reload of a differently shaped area never contradicts an earlier load. Changing
``seed`` gives a different but equally plausible "reanalysis" when a test needs to tell loads apart.

Generation runs in time slices sized to a value budget, each slice written straight into the
NetCDF variable, so a large area never needs a whole month in memory.
"""

from __future__ import annotations

import calendar
import hashlib
import math
import os
import re
import tempfile
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import netCDF4
import numpy as np
import numpy.typing as npt

from era5etl.core.grid import lattice
from era5etl.core.months import Month
from era5etl.core.variables import BY_CDS_NAME

DATASET = "reanalysis-era5-single-levels"

F64 = npt.NDArray[np.float64]

# Enough values per slice to write a small test area's month in one go (the real files hold one
# chunk per variable), small enough that a global area is written a few hours at a time.
DEFAULT_SLICE_VALUES = 1_000_000

# ERA5T reaches the CDS about five days behind real time; later hours simply are not there yet.
ERA5T_LATENCY = timedelta(days=5)
# ERA5T ("0005") is replaced by final ERA5 ("0001") some 2-3 months later; a month counts as final
# once it ended more than three months ago.
FINAL_AFTER_MONTHS = 3

INSTANT_FILE = "data_stream-oper_stepType-instant.nc"
ACCUM_FILE = "data_stream-oper_stepType-accum.nc"


class RequestError(ValueError):
    """A request the CDS would refuse outright (the server answers 400 "invalid request")."""


class NoDataError(RuntimeError):
    """A well-formed request whose dates hold no data (yet); the CDS fails such a job."""


@dataclass(frozen=True)
class VarMeta:
    """What cfgrib writes for a parameter; copied from the real files (old CDS for tcc, sf, msl)."""

    cds_name: str
    short_name: str  # name inside the NetCDF (cfgrib's cfVarName)
    grib_short_name: str  # ecCodes shortName, differs for 2t/10u/10v/2d
    param_id: int
    name: str
    units: str
    cf_name: str
    step_type: Literal["instant", "accum"]

    @property
    def data_type(self) -> str:
        # Accumulations come from the short forecasts, instantaneous fields from the analysis.
        return "fc" if self.step_type == "accum" else "an"

    @property
    def standard_name(self) -> str:
        return self.cf_name


_EXTRA_META = (
    VarMeta("2m_temperature", "t2m", "2t", 167, "2 metre temperature", "K", "unknown", "instant"),
    VarMeta("10m_u_component_of_wind", "u10", "10u", 165, "10 metre U wind component", "m s**-1", "unknown",
            "instant"),
    VarMeta("10m_v_component_of_wind", "v10", "10v", 166, "10 metre V wind component", "m s**-1", "unknown",
            "instant"),
    VarMeta("2m_dewpoint_temperature", "d2m", "2d", 168, "2 metre dewpoint temperature", "K", "unknown",
            "instant"),
    VarMeta("surface_pressure", "sp", "sp", 134, "Surface pressure", "Pa", "surface_air_pressure", "instant"),
    VarMeta("mean_sea_level_pressure", "msl", "msl", 151, "Mean sea level pressure", "Pa",
            "air_pressure_at_mean_sea_level", "instant"),
    VarMeta("total_cloud_cover", "tcc", "tcc", 164, "Total cloud cover", "(0 - 1)", "cloud_area_fraction",
            "instant"),
    VarMeta("total_precipitation", "tp", "tp", 228, "Total precipitation", "m", "unknown", "accum"),
    VarMeta("snowfall", "sf", "sf", 144, "Snowfall", "m of water equivalent",
            "lwe_thickness_of_snowfall_amount", "accum"),
)
META: dict[str, VarMeta] = {m.cds_name: m for m in _EXTRA_META}

# The table's registry is the authority on names and step types; a disagreement is a bug to hear of.
for _v in BY_CDS_NAME.values():
    _m = META.get(_v.cds_name)
    if _m is None or _m.short_name != _v.short_name or _m.step_type != _v.step_type:
        raise RuntimeError(f"synth metadata for {_v.cds_name} disagrees with era5etl.core.variables")

# Order of variables inside a file, as cfgrib happened to write them in the real downloads.
_FILE_ORDER = ("u10", "v10", "d2m", "t2m", "msl", "sp", "tcc", "tp", "sf")


# --------------------------------------------------------------------------------------------------
# Request parsing


@dataclass(frozen=True)
class SynthRequest:
    """A validated ``reanalysis-era5-single-levels`` request, reduced to what shapes the data."""

    variables: tuple[VarMeta, ...]
    times: tuple[datetime, ...]  # every valid (date, time) combination, sorted, UTC
    latitudes: tuple[float, ...]  # north first
    longitudes: tuple[float, ...]
    grid: tuple[Decimal, Decimal]  # (longitude step, latitude step), as the CDS ``grid`` keyword
    zip_always: bool  # download_format "zip"

    @property
    def step_types(self) -> tuple[str, ...]:
        return tuple(s for s in ("instant", "accum") if any(v.step_type == s for v in self.variables))

    @property
    def archived(self) -> bool:
        """Whether the download is a ZIP: asked for, or two step types that need two files."""
        return self.zip_always or len(self.step_types) > 1

    @property
    def extension(self) -> str:
        return "zip" if self.archived else "nc"

    @property
    def content_type(self) -> str:
        return "application/zip" if self.archived else "application/netcdf"

    @property
    def months(self) -> tuple[Month, ...]:
        return tuple(sorted({Month(t.year, t.month) for t in self.times}))


def _as_list(value: Any, key: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str):
        # The legacy API took "a/b/c"; the CDS still splits such strings for list keys.
        return [p for p in value.split("/") if p.strip()]
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, (int, float)):
        return [value]
    raise RequestError(f"{key}: expected a list of values, got {type(value).__name__}")


def _ints(values: Sequence[Any], key: str, low: int, high: int) -> list[int]:
    out = []
    for raw in values:
        try:
            number = int(str(raw).strip())
        except ValueError:
            raise RequestError(f"{key}: {raw!r} is not a number") from None
        if not low <= number <= high:
            raise RequestError(f"{key}: {raw!r} is outside {low}..{high}")
        out.append(number)
    return sorted(set(out))


_TIME_RE = re.compile(r"^(\d{1,2})(?::(\d{2}))?$")


def _hours(values: Sequence[Any]) -> list[int]:
    out = []
    for raw in values:
        m = _TIME_RE.match(str(raw).strip())
        if not m or int(m.group(1)) > 23 or (m.group(2) not in (None, "00")):
            raise RequestError(f"time: {raw!r} is not an hour of ERA5 (00:00 .. 23:00)")
        out.append(int(m.group(1)))
    return sorted(set(out))


def _decimal(raw: Any, key: str) -> Decimal:
    try:
        value = Decimal(str(raw).strip())
    except InvalidOperation:
        raise RequestError(f"{key}: {raw!r} is not a number") from None
    if not value.is_finite():
        raise RequestError(f"{key}: {raw!r} is not a finite number")
    return value


def parse_request(request: Mapping[str, Any]) -> SynthRequest:
    """Validate a request as the CDS would and work out the grid and times it selects."""
    product = _as_list(request.get("product_type", ["reanalysis"]), "product_type")
    if [str(p) for p in product] != ["reanalysis"]:
        raise RequestError(f"product_type: only ['reanalysis'] is served here, got {product!r}")

    names = [str(n).strip() for n in _as_list(request.get("variable"), "variable")]
    if not names:
        raise RequestError("variable: at least one variable is required")
    unknown = [n for n in names if n not in META]
    if unknown:
        raise RequestError(f"variable: unknown or unsupported {unknown!r}; known: {sorted(META)}")
    wanted = set(names)
    variables = tuple(sorted((META[n] for n in wanted), key=lambda m: _FILE_ORDER.index(m.short_name)))

    data_format = str(request.get("data_format", request.get("format", "grib"))).strip().lower()
    if data_format not in ("netcdf", "netcdf4"):
        raise RequestError(f"data_format: only 'netcdf' is served here, got {data_format!r}")
    download_format = str(request.get("download_format", "unarchived")).strip().lower()
    if download_format not in ("unarchived", "zip"):
        raise RequestError(f"download_format: expected 'unarchived' or 'zip', got {download_format!r}")

    years = _ints(_as_list(request.get("year"), "year"), "year", 1940, 2100)
    months = _ints(_as_list(request.get("month"), "month"), "month", 1, 12)
    days = _ints(_as_list(request.get("day"), "day"), "day", 1, 31)
    hours = _hours(_as_list(request.get("time"), "time"))
    for key, got in (("year", years), ("month", months), ("day", days), ("time", hours)):
        if not got:
            raise RequestError(f"{key}: at least one value is required")
    times: list[datetime] = []
    for y in years:
        for mo in months:
            month_days = calendar.monthrange(y, mo)[1]
            # Like the CDS, day 31 of a 30-day month is not an error, it is just not there.
            for d in (d for d in days if d <= month_days):
                times.extend(datetime(y, mo, d, h, tzinfo=UTC) for h in hours)
    if not times:
        raise RequestError("year/month/day: no valid date in the request")

    grid_raw = _as_list(request.get("grid", ["0.25", "0.25"]), "grid")
    if len(grid_raw) == 1:
        grid_raw = grid_raw * 2
    if len(grid_raw) != 2:
        raise RequestError(f"grid: expected [lon_step, lat_step], got {grid_raw!r}")
    dlon, dlat = (_decimal(g, "grid") for g in grid_raw)
    if dlon <= 0 or dlat <= 0:
        raise RequestError(f"grid: steps must be positive, got {grid_raw!r}")

    area_raw = _as_list(request.get("area"), "area")
    if area_raw:
        if len(area_raw) != 4:
            raise RequestError(f"area: expected [north, west, south, east], got {area_raw!r}")
        north, west, south, east = (_decimal(a, "area") for a in area_raw)
    else:
        # No area: the whole globe, longitudes 0..360 as MARS numbers its global grid.
        north, west, south, east = Decimal(90), Decimal(0), Decimal(-90), Decimal(360) - dlon
    if not (-90 <= south <= north <= 90):
        raise RequestError(f"area: need -90 <= south <= north <= 90, got {area_raw!r}")
    # The CDS answers in the longitude convention of the request: the sample asked for west -8.5 and
    # got -8.5 .. -7.5, not 351.5 .. 352.5. A box across the antimeridian (west > east) comes back
    # continuous, east of 180 (e.g. 170 .. 190), which is what MARS does with such an area.
    if east < west:
        east += 360
    if east - west >= 360:
        east = west + 360 - dlon
    lats = lattice(south, north, dlat)[::-1]
    lons = lattice(west, east, dlon)
    if not lats or not lons:
        raise RequestError(f"area: {area_raw!r} holds no point of the {grid_raw!r} grid")

    return SynthRequest(
        variables=variables,
        times=tuple(sorted(times)),
        latitudes=tuple(float(v) for v in lats),
        longitudes=tuple(float(v) for v in lons),
        grid=(dlon, dlat),
        zip_always=download_format == "zip",
    )


# --------------------------------------------------------------------------------------------------
# The fields


def expver_for(month: Month, today: date) -> str:
    """"0001" once the month is final ERA5, "0005" while it is still ERA5T."""
    end = month.end.date()  # first day of the next month
    index = end.year * 12 + end.month - 1 + FINAL_AFTER_MONTHS
    cutoff = date(index // 12, index % 12 + 1, 1)
    return "0001" if cutoff <= today else "0005"


def _stable_seed(*parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "little")


@dataclass(frozen=True)
class _Waves:
    """A sum of travelling plane waves on the sphere: smooth in space and time, unit variance."""

    lon_k: npt.NDArray[np.int64]  # integer zonal wavenumbers keep the field continuous across 0/360
    lat_k: F64
    omega: F64  # radians per hour
    phase: F64

    @classmethod
    def make(cls, seed: int, key: str, count: int = 6, static: bool = False) -> _Waves:
        rng = np.random.default_rng(_stable_seed(seed, key))
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
             + np.uint64(_stable_seed(seed, key, "white") & 0xFFFFFFFFFFFFFFFF))
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    unit: F64 = (x >> np.uint64(11)).astype(np.float64) * (2.0 / 2**53) - 1.0
    return unit


class _Slice:
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
        return _Waves.make(self.seed, key)(self.hours, self.lat_r, self.lon_r)

    def static(self, key: str) -> F64:
        return _Waves.make(self.seed, key, static=True)(np.zeros(1), self.lat_r, self.lon_r)

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

    def field(self, short_name: str) -> F64:
        value: F64 = getattr(self, short_name)
        return value


# --------------------------------------------------------------------------------------------------
# Writing


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
    token = f"tmp{_stable_seed(seed, now.isoformat()) & 0xFFFFFFFF:08x}"
    return (
        f"{now:%Y-%m-%dT%H:%M} GRIB to CDM+CF via cfgrib-0.9.15.1/ecCodes-2.42.0 with "
        f'{{"source": "{token}/data.grib", '
        f'"filter_by_keys": {{"stream": ["oper"], "stepType": ["{step_type}"]}}, '
        f'"encode_cf": ["parameter", "time", "geography", "vertical"]}}'
        " [synthetic: era5etl local CDS, not Copernicus data]"
    )


def _grib_attrs(meta: VarMeta, req: SynthRequest) -> dict[str, Any]:
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
    slices = list(_slices(nt, ny * nx, slice_values))
    # One chunk per variable when it all fits (as in the real files); else one chunk per slice.
    chunk_t = slices[0][1] - slices[0][0]

    with netCDF4.Dataset(dest, "w", format="NETCDF4") as ds:
        ds.setncattr("GRIB_centre", "ecmf")
        ds.setncattr("GRIB_centreDescription", "European Centre for Medium-Range Weather Forecasts")
        ds.setncattr("GRIB_subCentre", np.int64(0))
        ds.setncattr("Conventions", "CF-1.7")
        ds.setncattr("institution", "European Centre for Medium-Range Weather Forecasts")
        ds.setncattr("history", _history(step_type, now, seed))
        ds.createDimension("valid_time", nt)
        ds.createDimension("latitude", ny)
        ds.createDimension("longitude", nx)

        # Define everything first, then write: netCDF-C applies a variable's chunk-cache setting
        # only once define mode has ended.
        number = ds.createVariable("number", "i8", ())
        number.setncatts({"long_name": "ensemble member numerical id", "units": "1",
                          "standard_name": "realization"})
        vt = ds.createVariable("valid_time", "i8", ("valid_time",))
        vt.setncatts({"long_name": "time", "standard_name": "time", "units": "seconds since 1970-01-01",
                      "calendar": "proleptic_gregorian"})
        lat_v = ds.createVariable("latitude", "f8", ("latitude",), fill_value=np.nan)
        lat_v.setncatts({"units": "degrees_north", "standard_name": "latitude", "long_name": "latitude",
                         "stored_direction": "decreasing"})
        lon_v = ds.createVariable("longitude", "f8", ("longitude",), fill_value=np.nan)
        lon_v.setncatts({"units": "degrees_east", "standard_name": "longitude", "long_name": "longitude"})
        expver = ds.createVariable("expver", str, ("valid_time",))
        out_vars = []
        for meta in variables:
            var = ds.createVariable(
                meta.short_name, "f4", ("valid_time", "latitude", "longitude"), fill_value=np.float32(np.nan),
                zlib=True, complevel=1, shuffle=True, chunksizes=(chunk_t, ny, nx),
            )
            var.setncatts(_grib_attrs(meta, req))
            out_vars.append((meta, var))

        number.assignValue(0)
        vt[:] = seconds
        lat_v[:] = lats
        lon_v[:] = lons
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
            fields = _Slice(seed, seconds[start:stop], lats, lons)
            for meta, var in out_vars:
                var[start:stop, :, :] = grib_packed(meta.short_name, fields.field(meta.short_name))
    return dest


# Per variable, the range ERA5's global fields span (file units): the synthetic values are packed on
# a lattice fixed per variable, so the same point and hour get the same value whatever the area.
PACKING_RANGES: dict[str, tuple[float, float]] = {
    "t2m": (170.0, 350.0), "d2m": (150.0, 330.0), "u10": (-90.0, 90.0), "v10": (-90.0, 90.0),
    "msl": (85000.0, 110000.0), "sp": (45000.0, 110000.0), "tcc": (0.0, 1.0), "tp": (0.0, 0.5),
    "sf": (0.0, 0.5),
}


def grib_packed(short_name: str, field: F64, bits: int = 16) -> npt.NDArray[np.float32]:
    """``field`` as ERA5's GRIB1 simple packing leaves it, as float32.

    The CDS makes its NetCDF from GRIB, where a field is stored as ``reference + X * 2**E`` with X an
    unsigned integer of ``bits`` bits (16 for ERA5 single levels): the real files' values sit on
    such a lattice (shared/era5-samples: t2m in steps of 2**-9 K). Data off it would be far less
    compressible than real ERA5, in the NetCDF and in the database. The real service chooses the
    reference and E per field from its range; here they come from the variable's global range, so
    that two requests overlapping in space agree on the points they share.
    """
    low, high = PACKING_RANGES[short_name]
    scale = 2.0 ** math.ceil(math.log2((high - low) / (2.0**bits - 1)))
    levels = np.clip(np.rint((field - low) / scale), 0, 2.0**bits - 1)
    return (low + levels * scale).astype(np.float32)


def available_times(req: SynthRequest, now: datetime) -> list[datetime]:
    """The requested hours already published: ERA5T lags real time by about five days."""
    latest = (now - ERA5T_LATENCY).replace(minute=0, second=0, microsecond=0)
    return [t for t in req.times if t <= latest]


def write_download(
    request: Mapping[str, Any],
    dest: Path,
    *,
    seed: int = 0,
    now: datetime | None = None,
    today: date | None = None,
    slice_values: int = DEFAULT_SLICE_VALUES,
) -> Path:
    """Write what the CDS would deliver for ``request`` to the file ``dest`` and return ``dest``.

    The content is a single NetCDF when the request holds one step type, or a ZIP of
    ``data_stream-oper_stepType-instant.nc`` and ``-accum.nc`` when it holds both (or asks for
    ``download_format: zip``) -- whatever ``dest`` is called, as with the real CDS. ``now`` sets the
    publication cut-off (ERA5T latency) and the ``history`` stamp; ``today`` the expver rule.

    Raises RequestError for a request the CDS would refuse, NoDataError when none of its hours is
    published yet.
    """
    req = parse_request(request)
    now = now or datetime.now(UTC)
    today = today or now.date()
    times = available_times(req, now)
    if not times:
        raise NoDataError(
            f"none of the requested dates {req.times[0]:%Y-%m-%d} .. {req.times[-1]:%Y-%m-%d} is available "
            f"yet (data are published about {ERA5T_LATENCY.days} days behind real time)"
        )
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    kw: dict[str, Any] = {
        "times": times, "today": today, "seed": seed, "now": now, "slice_values": slice_values,
    }
    if not req.archived:
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
        try:
            write_netcdf(req, req.step_types[0], tmp, **kw)
            os.replace(tmp, dest)
        finally:
            tmp.unlink(missing_ok=True)
        return dest

    with tempfile.TemporaryDirectory(prefix=".synth-", dir=dest.parent) as tmpdir:
        members = []
        for step in req.step_types:
            name = INSTANT_FILE if step == "instant" else ACCUM_FILE
            members.append((name, write_netcdf(req, step, Path(tmpdir) / name, **kw)))
        tmp_zip = Path(tmpdir) / "download.zip"
        _write_zip(tmp_zip, members, now)
        os.replace(tmp_zip, dest)
    return dest


def _write_zip(dest: Path, members: Sequence[tuple[str, Path]], now: datetime) -> None:
    stamp = now.timestamp()
    # Deflate like the real ZIP, but at level 1: the members are compressed already, so a higher
    # level only costs time (the real ZIP gains nothing from it either).
    with zipfile.ZipFile(dest, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for name, path in members:
            # ZipFile.write takes the entry's time and mode from the file: a regular rw-r--r-- file
            # stamped with the job's time, as in the real ZIP.
            path.chmod(0o644)
            os.utime(path, (stamp, stamp))
            zf.write(path, arcname=name)

