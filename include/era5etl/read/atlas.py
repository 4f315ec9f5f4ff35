"""The atlas: every grid point (or city) of a table ranked by its change, and the area-weighted means
of that change over the globe, the Arctic or any band of latitude.

From the yearly values of every point (``read.yearly``): per point the trend per decade (ordinary
least squares over its complete years, vectorised here over all points, with its 95% interval), the
anomaly of the last ten years against the baseline and the warmest (highest) year. The units ranked
first are then given in full by ``read.trend.trend_per_decade``, the function ``climate`` uses, so a
point's atlas trend is ``climate --json``'s.

**Area-weighted means.** A lattice point stands for its cell, whose area is proportional to
``sin(north edge) - sin(south edge)`` (a polar point's cell is the cap of half a step), clipped to the
band asked for. An unweighted mean over a 0.25 degree lattice counts a polar cell as much as an
equatorial one, which is 229 times larger than one at 89.75 N: Rantanen et al. 2022 (Commun. Earth Environ. 3, 168)
and C3S's Global Climate Highlights publish area-weighted means, as this does. Points whose trend is
not defined (fewer than ``read.trend.MIN_YEARS`` complete years) are left out of the mean, and the
answer says how much of the band's area it covers.
"""

# Imports inside functions: scipy loads only when trends are computed, xarray only for the map.

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg

from era5etl.core.grid import GLOBAL_STEP, location_ids
from era5etl.read.climate_read import DEFAULT_BASELINE, parse_years
from era5etl.read.errors import ReadError
from era5etl.read.places import Place, gazetteer
from era5etl.read.trend import MIN_YEARS, trend_per_decade
from era5etl.read.yearly import YearlyField, yearly_field

ARCTIC = (66.5, 90.0)  # the Arctic Circle northward, as Rantanen et al. 2022
GLOBE = (-90.0, 90.0)
LAST_YEARS = 10  # the recent years whose mean anomaly is shown


@dataclass
class Trends:
    """Per point of a :class:`YearlyField`: the OLS slope per decade (NaN: fewer than MIN_YEARS complete
    years), the half width of its 95% interval, the complete years it used."""

    per_decade: np.ndarray
    half_ci95: np.ndarray
    years: np.ndarray


def point_trends(field: YearlyField) -> Trends:
    """Every point's OLS trend per decade over its complete years, as ``read.trend`` computes one."""
    from scipy.special import stdtrit

    y = field.values
    good = np.isfinite(y)
    n = good.sum(axis=1)
    x = np.where(good, field.years[None, :].astype(np.float64), 0.0)
    yz = np.where(good, y, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        xbar, ybar = x.sum(axis=1) / n, yz.sum(axis=1) / n
        dx = np.where(good, x - xbar[:, None], 0.0)
        dy = np.where(good, yz - ybar[:, None], 0.0)
        sxx = (dx * dx).sum(axis=1)
        slope = (dx * dy).sum(axis=1) / sxx
        resid = np.where(good, dy - slope[:, None] * dx, 0.0)
        dof = n - 2
        se = np.sqrt((resid * resid).sum(axis=1) / dof / sxx)
        half = np.where(dof > 0, stdtrit(np.maximum(dof, 1), 0.975), np.nan) * se
    enough = n >= MIN_YEARS
    return Trends(np.where(enough, slope * 10, np.nan), np.where(enough, half * 10, np.nan), n)


def cell_areas(latitude: np.ndarray, band: tuple[float, float] = GLOBE) -> np.ndarray:
    """Each lattice point's cell area within ``band`` (south, north), in units of the sphere's 4 pi r^2 /
    (2 pi) per radian of longitude (so only ratios matter). The step is the lattice's own."""
    lats = np.unique(latitude)
    step = float(np.min(np.diff(lats))) if lats.size > 1 else 0.25
    south, north = band
    lo = np.radians(np.clip(latitude - step / 2, max(south, -90.0), min(north, 90.0)))
    hi = np.radians(np.clip(latitude + step / 2, max(south, -90.0), min(north, 90.0)))
    return np.asarray(np.sin(hi) - np.sin(lo), dtype=np.float64)


def area_mean(latitude: np.ndarray, values: np.ndarray, band: tuple[float, float] = GLOBE) -> dict[str, Any]:
    """``{mean, covered, points}``: the area-weighted mean of ``values`` over the points' cells inside
    ``band``, the fraction of the band's lattice area with a value, and how many points had one."""
    weights = cell_areas(latitude, band)
    good = np.isfinite(values) & (weights > 0)
    inside = float(weights.sum())
    if inside == 0:
        raise ReadError(f"no grid point of the table lies in the band {band[0]:g} to {band[1]:g} N")
    if not good.any():
        return {"mean": None, "covered": 0.0, "points": 0}
    w = weights[good]
    return {"mean": float(w @ values[good] / w.sum()), "covered": float(w.sum() / inside), "points": int(good.sum())}


def zonal_means(field: YearlyField, trends: Trends, bands: dict[str, tuple[float, float]] | None = None
                ) -> dict[str, Any]:
    """The area-weighted mean trend per decade over the globe, the Arctic and each of ``bands``, and the
    Arctic amplification (the Arctic's mean over the globe's)."""
    out = {"global": area_mean(field.latitude, trends.per_decade, GLOBE)}
    if field.latitude.max() >= ARCTIC[0]:
        out["arctic"] = area_mean(field.latitude, trends.per_decade, ARCTIC)
    for name, band in (bands or {}).items():
        out[name] = {"band": list(band), **area_mean(field.latitude, trends.per_decade, band)}
    g, a = out["global"]["mean"], out.get("arctic", {}).get("mean")
    if g and a is not None and out["global"]["covered"] > 0.99:
        out["arctic_amplification"] = a / g
    return out


def anomalies(field: YearlyField, baseline: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Per point: the mean of its last :data:`LAST_YEARS` years' values (those complete) against the mean
    of its complete baseline years (NaN where either has none), and that baseline mean."""
    years = field.years
    base = (years >= baseline[0]) & (years <= baseline[1])
    recent = years > years.max() - LAST_YEARS
    nothing = np.full(field.values.shape[0], np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a point without a complete year: NaN, said so
        base_mean = np.nanmean(field.values[:, base], axis=1) if base.any() else nothing
        recent_mean = np.nanmean(field.values[:, recent], axis=1)
    return recent_mean - base_mean, base_mean


@dataclass(frozen=True)
class Unit:
    """What is ranked: a grid point (``place`` None) or a city at its nearest grid point (the row)."""

    row: int
    place: Place | None = None


def city_units(field: YearlyField, cities: list[Place], min_population: int) -> list[Unit]:
    """The cities of at least ``min_population`` whose nearest grid point of the field's lattice is one
    the table holds (the nearest on the lattice, as ``nearest_point`` picks a place's); vectorised over
    the gazetteer's 34,006 cities."""
    big = [c for c in cities if c.population >= min_population]
    if not big:
        return []
    lats, lons = np.unique(field.latitude), np.unique(field.longitude)
    lat_step = float(np.min(np.diff(lats))) if lats.size > 1 else GLOBAL_STEP
    lon_step = float(np.min(np.diff(lons))) if lons.size > 1 else GLOBAL_STEP
    lat = lats[0] + np.rint((np.array([c.latitude for c in big]) - lats[0]) / lat_step) * lat_step
    lon = lons[0] + np.rint((np.array([c.longitude for c in big]) - lons[0]) / lon_step) * lon_step
    inside = (lat >= -90) & (lat <= 90)
    ids = np.zeros(lat.size, dtype=np.int64)
    ids[inside] = location_ids(lat[inside], lon[inside])
    rows = np.searchsorted(field.location_id, ids)
    rows = np.minimum(rows, field.location_id.size - 1)
    held = inside & (field.location_id[rows] == ids)
    return [Unit(int(r), c) for r, c, h in zip(rows, big, held, strict=True) if h]


def _year_of(field: YearlyField, row: int, pick: Any) -> int | None:
    values = field.values[row]
    good = np.isfinite(values)
    return int(field.years[good][pick(values[good])]) if good.any() else None


def _unit_json(field: YearlyField, unit: Unit, rank: int, anomaly: np.ndarray, base: np.ndarray) -> dict[str, Any]:
    row = unit.row
    good = np.isfinite(field.values[row])
    out: dict[str, Any] = {"rank": rank}
    if unit.place is not None:
        p = unit.place
        out["city"] = {"name": p.name, "country": p.country, "latitude": p.latitude, "longitude": p.longitude,
                       "population": p.population, "described": str(p)}
    out.update({
        "grid_point": {"location_id": int(field.location_id[row]), "latitude": float(field.latitude[row]),
                       "longitude": float(field.longitude[row])},
        "trend_per_decade": trend_per_decade(field.years, field.values[row]),
        "anomaly_last_10": None if not np.isfinite(anomaly[row]) else float(anomaly[row]),
        "baseline_value": None if not np.isfinite(base[row]) else float(base[row]),
        "highest_year": _year_of(field, row, np.argmax), "lowest_year": _year_of(field, row, np.argmin),
        "complete_years": [int(y) for y in field.years[good]]})
    return out


def rank(field: YearlyField, trends: Trends, units: list[Unit], count: int, lowest: bool = False) -> list[Unit]:
    """The ``count`` units of greatest trend (``lowest``: of least), units without one left out; ties by
    location_id (south first, then west)."""
    slopes = np.array([trends.per_decade[u.row] for u in units])
    keep = np.flatnonzero(np.isfinite(slopes))
    key = slopes[keep] if lowest else -slopes[keep]
    order = keep[np.lexsort((np.array([units[i].row for i in keep]), key))] if keep.size else keep
    return [units[i] for i in order[:count]]


def atlas(field: YearlyField, *, by: str = "point", top: int | None = None, bottom: int | None = None,
          baseline: tuple[int, int] = (1991, 2020), cities: list[Place] | None = None, min_population: int = 0,
          bands: dict[str, tuple[float, float]] | None = None) -> dict[str, Any]:
    """The atlas of one variable as one JSON object: ``zonal`` (area-weighted mean trends), ``ranking``
    (the top or bottom units in full), ``units`` (how many were ranked), the years used."""
    if top is not None and bottom is not None:
        raise ReadError("--top and --bottom are one or the other")
    count = bottom if bottom is not None else top if top is not None else 20
    if count < 1:
        raise ReadError(f"--top/--bottom {count}: at least 1")
    trends = point_trends(field)
    if by == "point":
        units = [Unit(i) for i in range(field.location_id.size)]
    elif by == "city":
        units = city_units(field, cities or [], min_population)
        if not units:
            raise ReadError(f"no city of at least {min_population:,} people lies on {field.table}'s grid points")
    else:
        raise ReadError(f"--by {by!r}: point or city")
    anomaly, base = anomalies(field, baseline)
    complete = np.isfinite(field.values)
    everywhere = [int(y) for y, c in zip(field.years, complete.all(axis=0), strict=True) if c]
    somewhere = [int(y) for y, c, a in zip(field.years, complete.any(axis=0), complete.all(axis=0), strict=True)
                 if c and not a]
    chosen = rank(field, trends, units, count, lowest=bottom is not None)
    notes = []
    if somewhere:
        notes.append(f"years complete at some points only (each point's trend uses its own): {somewhere}")
    missing = [int(y) for y in field.years[~complete.any(axis=0)]]
    if missing:
        notes.append(f"years complete nowhere (not ranked): {missing}")
    if not ((field.years >= baseline[0]) & (field.years <= baseline[1]) & complete.any(axis=0)).any():
        notes.append(f"no complete year of the baseline {baseline[0]}-{baseline[1]}: no anomaly")
    return {"table": field.table, "variable": field.variable, "statistic": field.statistic, "unit": field.unit,
            "by": by, "order": "lowest" if bottom is not None else "highest",
            "years": [int(field.years[0]), int(field.years[-1])], "complete_years": everywhere,
            "baseline": list(baseline), "points": int(field.location_id.size), "units": len(units),
            "ranked": int(sum(np.isfinite(trends.per_decade[u.row]) for u in units)),
            "zonal": zonal_means(field, trends, bands),
            "ranking": [_unit_json(field, u, i + 1, anomaly, base) for i, u in enumerate(chosen)], "notes": notes}


def atlas_answer(field: YearlyField, *, baseline: str | tuple[int, int] = DEFAULT_BASELINE, by: str = "point",
                 top: int | None = None, bottom: int | None = None, min_population: int = 0,
                 bands: list[tuple[float, float]] | None = None) -> dict[str, Any]:
    """:func:`atlas` as the CLI, the HTTP API and the Python API ask it: the baseline as text or years,
    ``by`` city ranking the gazetteer's cities, the bands named by their latitudes."""
    span = parse_years(baseline) if isinstance(baseline, str) else baseline
    if by not in ("point", "city"):
        raise ReadError(f"by {by!r}: point or city")
    cities = [p for ps in gazetteer()[0].values() for p in ps] if by == "city" else None
    named = {f"{s:g} to {n:g}": (s, n) for s, n in bands or []}
    return atlas(field, by=by, top=top, bottom=bottom, baseline=span, cities=cities, min_population=min_population,
                 bands=named)


def atlas_request(conn: psycopg.Connection[Any], table: str, variable: str = "temperature_2m", *,
                  first: int | None = None, last: int | None = None, **options: Any) -> dict[str, Any]:
    """:func:`atlas_answer` of ``variable``'s yearly values in ``table`` over [first, last]."""
    return atlas_answer(yearly_field(conn, table, variable, first, last), **options)


def trend_map(field: YearlyField) -> Any:
    """Every point's OLS trend per decade as an ``xarray.DataArray`` on (latitude, longitude), NaN where
    the table has no point or the point no trend."""
    import xarray as xr

    trends = point_trends(field)
    lats, lons = np.unique(field.latitude), np.unique(field.longitude)
    grid = np.full((lats.size, lons.size), np.nan)
    grid[np.searchsorted(lats, field.latitude), np.searchsorted(lons, field.longitude)] = trends.per_decade
    return xr.DataArray(grid, coords={"latitude": lats, "longitude": lons}, dims=("latitude", "longitude"),
                        name=f"{field.variable}_trend", attrs={"units": f"{field.unit}/decade",
                                                               "years": [int(field.years[0]), int(field.years[-1])]})


__all__ = ["ARCTIC", "GLOBE", "LAST_YEARS", "Trends", "Unit", "anomalies", "area_mean", "atlas", "atlas_answer",
           "atlas_request", "cell_areas", "city_units", "point_trends", "rank", "trend_map", "zonal_means"]
