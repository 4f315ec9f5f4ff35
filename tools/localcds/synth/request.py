"""Request parsing: a CDS request validated as the CDS would, reduced to the grid and times it selects."""

from __future__ import annotations

import calendar
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from era5etl.core.grid import lattice
from era5etl.core.months import Month
from localcds.synth.variables import DATASET, FILE_ORDER, META, VarMeta

# The formats served, by the names a request may use for them.
DATA_FORMATS = {"netcdf": "netcdf", "netcdf4": "netcdf", "grib": "grib"}


class RequestError(ValueError):
    """A request the CDS would refuse outright (the server answers 400 "invalid request")."""


@dataclass(frozen=True)
class SynthRequest:
    """A validated ``reanalysis-era5-single-levels`` request, reduced to what shapes the data."""

    variables: tuple[VarMeta, ...]
    times: tuple[datetime, ...]  # every valid (date, time) combination, sorted, UTC
    latitudes: tuple[float, ...]  # north first
    longitudes: tuple[float, ...]
    grid: tuple[Decimal, Decimal]  # (longitude step, latitude step), as the CDS ``grid`` keyword
    zip_always: bool  # download_format "zip"
    data_format: str = "netcdf"  # "netcdf" or "grib" (GRIB edition 1, as the CDS serves ERA5 single levels)
    dataset: str = DATASET  # the collection asked (single levels, pressure levels or "reanalysis-era5-land")
    levels: tuple[int, ...] = ()  # hPa, descending as the new CDS writes them; () without levels
    product: str = "reanalysis"  # the product type (the monthly means: synth.monthly's two)

    @property
    def step_types(self) -> tuple[str, ...]:
        return tuple(s for s in ("instant", "accum") if any(v.step_type == s for v in self.variables))

    @property
    def grib(self) -> bool:
        return self.data_format == "grib"

    @property
    def archived(self) -> bool:
        """Whether the download is a ZIP: asked for, or (NetCDF only) two step types that need two files.
        One GRIB file holds analyses and forecasts alike, and one ERA5-Land NetCDF every step type."""
        if self.dataset.startswith("reanalysis-era5-land"):  # one NetCDF holds every step type
            return self.zip_always
        return self.zip_always or (not self.grib and len(self.step_types) > 1)

    @property
    def extension(self) -> str:
        return "zip" if self.archived else "grib" if self.grib else "nc"

    @property
    def content_type(self) -> str:
        return "application/zip" if self.archived else "application/x-grib" if self.grib else "application/netcdf"

    @property
    def months(self) -> tuple[Month, ...]:
        return tuple(sorted({Month(t.year, t.month) for t in self.times}))


def hourly_request(area: Sequence[float], years: tuple[int, int], months: Sequence[int] = range(1, 13),
                   variables: Sequence[str] = ("2m_temperature", "total_precipitation")) -> dict[str, Any]:
    """A NetCDF request of every hour of ``months`` of the ``years`` (first, last) in ``area`` (N/W/S/E):
    what the tests and the benchmark ask the synthetic CDS for a place or a box over years."""
    return {
        "product_type": ["reanalysis"], "variable": list(variables),
        "year": [str(y) for y in range(years[0], years[1] + 1)], "month": [f"{m:02d}" for m in months],
        "day": [f"{d:02d}" for d in range(1, 32)], "time": [f"{h:02d}:00" for h in range(24)],
        "data_format": "netcdf", "download_format": "unarchived", "area": [f"{a:g}" for a in area],
    }


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


def parse_request(request: Mapping[str, Any], dataset: str = DATASET) -> SynthRequest:
    """Validate a request to ``dataset`` (single levels by default, pressure levels or ERA5-Land) as the
    CDS would and work out the grid, levels and times it selects.

    ERA5-Land (``reanalysis-era5-land``) has no product type (a request naming one is refused), its
    own variables (:data:`localcds.synth.land.LAND_META`), data from 1950 and a 0.1 degree native grid.
    """
    from localcds.synth.land import LAND_DATASET, LAND_FIRST_YEAR, LAND_META, LAND_ORDER
    from localcds.synth.levels import LEVELS, PL_DATASET, PL_FILE_ORDER, PL_META
    from localcds.synth.monthly import MONTHLY_DATASETS, parse_monthly

    if dataset in MONTHLY_DATASETS:
        return parse_monthly(request, dataset)
    if dataset not in (DATASET, PL_DATASET, LAND_DATASET):
        raise RequestError(f"dataset {dataset!r} is not served here")
    on_levels = dataset == PL_DATASET
    raw_levels = _as_list(request.get("pressure_level"), "pressure_level")
    if on_levels and not raw_levels:
        raise RequestError("pressure_level: at least one pressure level is required")
    if raw_levels and not on_levels:
        raise RequestError(f"pressure_level: not a keyword of {dataset}")
    levels = _ints(raw_levels, "pressure_level", 1, 1000)
    odd = [lev for lev in levels if lev not in LEVELS]
    if odd:
        raise RequestError(f"pressure_level: {odd!r} are not levels of {dataset}")
    if dataset == LAND_DATASET:
        if "product_type" in request:
            raise RequestError(f"product_type: {dataset} has no product type, got {request['product_type']!r}")
        known, order, first_year, native = LAND_META, LAND_ORDER, LAND_FIRST_YEAR, "0.1"
    else:
        product = _as_list(request.get("product_type", ["reanalysis"]), "product_type")
        if [str(p) for p in product] != ["reanalysis"]:
            raise RequestError(f"product_type: only ['reanalysis'] is served here, got {product!r}")
        known, order, first_year, native = ((PL_META, PL_FILE_ORDER, 1940, "0.25") if on_levels
                                            else (META, FILE_ORDER, 1940, "0.25"))

    names = [str(n).strip() for n in _as_list(request.get("variable"), "variable")]
    if not names:
        raise RequestError("variable: at least one variable is required")
    unknown = [n for n in names if n not in known]
    if unknown:
        raise RequestError(f"variable: unknown or unsupported {unknown!r}; known: {sorted(known)}")
    wanted = set(names)
    variables = tuple(sorted((known[n] for n in wanted), key=lambda m: order.index(m.short_name)))

    # As on the CDS, no data_format means GRIB; the legacy key "format" still works.
    data_format = str(request.get("data_format", request.get("format", "grib"))).strip().lower()
    if data_format not in DATA_FORMATS:
        raise RequestError(f"data_format: expected one of {sorted(set(DATA_FORMATS.values()))}, got {data_format!r}")
    download_format = str(request.get("download_format", "unarchived")).strip().lower()
    if download_format not in ("unarchived", "zip"):
        raise RequestError(f"download_format: expected 'unarchived' or 'zip', got {download_format!r}")

    years = _ints(_as_list(request.get("year"), "year"), "year", first_year, 2100)
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

    grid_raw = _as_list(request.get("grid", [native, native]), "grid")
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
        data_format=DATA_FORMATS[data_format],
        dataset=dataset,
        levels=tuple(sorted(levels, reverse=True)),
    )
