"""The atlas: every grid point, city or country of a table ranked by its change, and the area-weighted
means of that change over the globe, the Arctic or any band of latitude.

From the yearly values of every point (``read.yearly``): per point the trend per decade (ordinary
least squares over its complete years, vectorised here over all points, with its 95% interval), the
anomaly of the last ten years against the baseline and the warmest (highest) year. The units ranked
first are then given in full by ``read.trend.trend_per_decade``, the function ``climate`` uses, so a
point's atlas trend is ``climate --json``'s.

**Countries** are Natural Earth's, weighed on the table's lattice as ``--region`` weighs them (PostGIS,
``read.region_weights``, through ``read.region_series.check_region``): a country's year is the weighted
mean of its points' years (:func:`regional_field`), so its trend is ``climate --region``'s.

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
from era5etl.read.climate import year_ranges
from era5etl.read.climate_read import DEFAULT_BASELINE, parse_years
from era5etl.read.errors import ReadError
from era5etl.read.places import Place, gazetteer
from era5etl.read.region_series import check_regions
from era5etl.read.regions import Region, country_names, regions_from_file, resolve_region
from era5etl.read.trend import MIN_YEARS, trend_per_decade
from era5etl.read.yearly import YearlyField, yearly_field

ARCTIC = (66.5, 90.0)  # the Arctic Circle northward, as Rantanen et al. 2022
GLOBE = (-90.0, 90.0)
LAST_YEARS = 10  # the recent years whose mean anomaly is shown
BY = ("point", "city", "country", "region-file")  # what the atlas ranks


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
    """What is ranked: a grid point, a city at its nearest grid point (the row), or a region (the row of
    :func:`regional_field`'s field, ``region`` its points the table holds)."""

    row: int
    place: Place | None = None
    region: Region | None = None


def regional_field(field: YearlyField, regions: list[Region]) -> tuple[YearlyField, list[Region]]:
    """One row per region holding a point of ``field``: each year's mean of its points' values weighted
    by the region's weights (cell overlap x cos latitude), NaN unless every one of its points the field
    holds has that year complete (a year is the region's, never a part's). The row's latitude and
    longitude are the weighted centre of those points (the longitude a circular mean: a country across
    the antimeridian); ``location_id`` that of its heaviest point. Also the regions, each cut to its
    points the field holds."""
    from scipy.sparse import csr_matrix

    size = field.location_id.size
    kept: list[Region] = []
    rows: list[np.ndarray] = []
    weights: list[np.ndarray] = []
    for region in regions:
        at = np.minimum(np.searchsorted(field.location_id, region.ids), max(size - 1, 0))
        held = field.location_id[at] == region.ids if size else np.zeros(region.ids.size, dtype=bool)
        if held.any():
            kept.append(region.inside(held) if not held.all() else region)
            rows.append(at[held])
            weights.append(region.weights[held])
    if not kept:
        return YearlyField(field.table, field.variable, field.statistic, field.unit, np.zeros(0, np.int32),
                           np.zeros(0), np.zeros(0), field.years, np.zeros((0, field.years.size))), []
    indptr = np.concatenate([[0], np.cumsum([r.size for r in rows])])
    matrix = csr_matrix((np.concatenate(weights), np.concatenate(rows), indptr), shape=(len(kept), size))
    finite = np.isfinite(field.values)
    total = np.asarray(matrix.sum(axis=1)).ravel()
    missing = (matrix != 0).astype(np.float64) @ (~finite).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(missing > 0, np.nan, (matrix @ np.where(finite, field.values, 0.0)) / total[:, None])
        lat = (matrix @ field.latitude) / total
        lon_r = np.radians(field.longitude)
        lon = np.degrees(np.arctan2(matrix @ np.sin(lon_r), matrix @ np.cos(lon_r)))
    heaviest = np.array([r[np.argmax(w)] for r, w in zip(rows, weights, strict=True)])
    return YearlyField(field.table, field.variable, field.statistic, field.unit, field.location_id[heaviest], lat,
                       lon, field.years, values), kept


def country_regions(conn: psycopg.Connection[Any], field: YearlyField) -> tuple[list[Region], list[str]]:
    """Every Natural Earth country whose outline meets the box of ``field``'s points, weighed on the
    table's lattice as ``--region`` weighs it (``check_region``: its points in the table's loaded box);
    and the names of those left out, less than half of whose area that box holds."""
    import shapely

    if field.location_id.size == 0:
        return [], []
    south, north = float(field.latitude.min()) - 0.5, float(field.latitude.max()) + 0.5
    west, east = float(field.longitude.min()) - 0.5, float(field.longitude.max()) + 0.5
    # The box as the outlines' longitudes may run (past 180 for a country across the antimeridian).
    box = shapely.union_all([shapely.box(west + k, south, east + k, north) for k in (-360, 0, 360)])
    near = [r for r in (resolve_region(name) for name in country_names()) if shapely.intersects(r.outline, box)]
    return outline_regions(conn, field, near)


def outline_regions(conn: psycopg.Connection[Any], field: YearlyField, regions: list[Region]
                    ) -> tuple[list[Region], list[str]]:
    """``regions`` weighed on ``field``'s table as ``--region`` weighs one (``check_region``), and the
    names of those it refuses (less than half of it in the table's loaded box, or no cell)."""
    checked = check_regions(conn, field.table, regions)
    return ([r for r in checked if isinstance(r, Region)],
            [n.name for n, r in zip(regions, checked, strict=True) if isinstance(r, ReadError)])


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


def _unit_json(field: YearlyField, unit: Unit, rank: int, anomaly: np.ndarray, base: np.ndarray,
               region_key: str = "country") -> dict[str, Any]:
    row = unit.row
    good = np.isfinite(field.values[row])
    out: dict[str, Any] = {"rank": rank}
    if unit.place is not None:
        p = unit.place
        out["city"] = {"name": p.name, "country": p.country, "latitude": p.latitude, "longitude": p.longitude,
                       "population": p.population, "described": str(p)}
    if unit.region is not None:
        r = unit.region
        out[region_key] = {"name": r.name, "iso": r.iso, "points": r.points, "latitude": float(field.latitude[row]),
                           "longitude": float(field.longitude[row])}
    else:
        out["grid_point"] = {"location_id": int(field.location_id[row]), "latitude": float(field.latitude[row]),
                             "longitude": float(field.longitude[row])}
    out.update({
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
          regions: list[Region] | None = None, left_out: list[str] | None = None,
          bands: dict[str, tuple[float, float]] | None = None) -> dict[str, Any]:
    """The atlas of one variable as one JSON object: ``zonal`` (area-weighted mean trends of the points),
    ``ranking`` (the top or bottom units in full), ``units`` (how many were ranked), the years used.
    ``by`` country ranks ``regions`` (:func:`country_regions`; ``left_out`` the names of those not read)."""
    if top is not None and bottom is not None:
        raise ReadError("--top and --bottom are one or the other")
    count = bottom if bottom is not None else top if top is not None else 20
    if count < 1:
        raise ReadError(f"--top/--bottom {count}: at least 1")
    trends = point_trends(field)
    ranked, unit_trends = field, trends
    notes = []
    if by == "point":
        units = [Unit(i) for i in range(field.location_id.size)]
    elif by == "city":
        units = city_units(field, cities or [], min_population)
        if not units:
            raise ReadError(f"no city of at least {min_population:,} people lies on {field.table}'s grid points")
    elif by in ("country", "region-file"):
        what = "country" if by == "country" else "region"
        ranked, kept = regional_field(field, regions or [])
        if not kept:
            raise ReadError(f"no {what} has a grid point in {field.table}"
                            + (f" (left out, less than half loaded: {', '.join(left_out)})" if left_out else ""))
        units = [Unit(i, region=r) for i, r in enumerate(kept)]
        unit_trends = point_trends(ranked)
        if left_out:
            notes.append(f"{'countries' if by == 'country' else 'regions'} left out, less than half of their area "
                         f"in the table's box: {', '.join(left_out)}")
    else:
        raise ReadError(f"--by {by!r}: {', '.join(BY[:-1])} or {BY[-1]}")
    anomaly, base = anomalies(ranked, baseline)
    complete = np.isfinite(field.values)
    everywhere = [int(y) for y, c in zip(field.years, complete.all(axis=0), strict=True) if c]
    somewhere = [int(y) for y, c, a in zip(field.years, complete.any(axis=0), complete.all(axis=0), strict=True)
                 if c and not a]
    chosen = rank(ranked, unit_trends, units, count, lowest=bottom is not None)
    if somewhere:
        notes.append(f"years complete at some points only (each unit's trend uses its own): {year_ranges(somewhere)}")
    missing = [int(y) for y in field.years[~complete.any(axis=0)]]
    if missing:
        notes.append(f"years complete nowhere (not ranked): {year_ranges(missing)}")
    if not ((field.years >= baseline[0]) & (field.years <= baseline[1]) & complete.any(axis=0)).any():
        notes.append(f"no complete year of the baseline {baseline[0]}-{baseline[1]}: no anomaly")
    return {"table": field.table, "variable": field.variable, "statistic": field.statistic, "unit": field.unit,
            "by": by, "order": "lowest" if bottom is not None else "highest",
            "years": [int(field.years[0]), int(field.years[-1])], "complete_years": everywhere,
            "baseline": list(baseline), "points": int(field.location_id.size), "units": len(units),
            "ranked": int(sum(np.isfinite(unit_trends.per_decade[u.row]) for u in units)),
            "zonal": zonal_means(field, trends, bands),
            "ranking": [_unit_json(ranked, u, i + 1, anomaly, base, "country" if by == "country" else "region")
                        for i, u in enumerate(chosen)], "notes": notes}




def atlas_answer(field: YearlyField, *, baseline: str | tuple[int, int] = DEFAULT_BASELINE, by: str = "point",
                 top: int | None = None, bottom: int | None = None, min_population: int = 0,
                 bands: list[tuple[float, float]] | None = None,
                 conn: psycopg.Connection[Any] | None = None, region_file: str | None = None) -> dict[str, Any]:
    """:func:`atlas` as the CLI, the HTTP API and the Python API ask it: the baseline as text or years,
    ``by`` city ranking the gazetteer's cities, ``by`` country Natural Earth's countries, ``by``
    region-file each Feature of the GeoJSON file ``region_file`` (both weighed through ``conn``), the
    bands named by their latitudes."""
    span = parse_years(baseline) if isinstance(baseline, str) else baseline
    if by not in BY:
        raise ReadError(f"by {by!r}: {', '.join(BY[:-1])} or {BY[-1]}")
    cities = [p for ps in gazetteer()[0].values() for p in ps] if by == "city" else None
    regions, left_out = None, None
    if (by == "region-file") != (region_file is not None):
        raise ReadError("--by region-file ranks the outlines of --region-file F: give both, or neither")
    if by in ("country", "region-file"):
        if conn is None:
            raise ReadError(f"by {by} needs the database: a region's weights are PostGIS's")
        if by == "country":
            regions, left_out = country_regions(conn, field)
        else:
            assert region_file is not None  # checked above
            regions, left_out = outline_regions(conn, field, regions_from_file(region_file))
    named = {f"{s:g} to {n:g}": (s, n) for s, n in bands or []}
    return atlas(field, by=by, top=top, bottom=bottom, baseline=span, cities=cities, min_population=min_population,
                 regions=regions, left_out=left_out, bands=named)


def atlas_request(conn: psycopg.Connection[Any], table: str, variable: str = "temperature_2m", *,
                  first: int | None = None, last: int | None = None, **options: Any) -> dict[str, Any]:
    """:func:`atlas_answer` of ``variable``'s yearly values in ``table`` over [first, last]."""
    return atlas_answer(yearly_field(conn, table, variable, first, last), conn=conn, **options)


def _lattice_step(field: YearlyField) -> float:
    """The lattice's step: the least gap between the table's latitudes or longitudes (a regular lattice
    shares one step on both axes), ERA5's 0.25 degrees for a single point."""
    gaps = [np.diff(np.unique(a)) for a in (field.latitude, field.longitude)]
    found = [float(g.min()) for g in gaps if g.size]
    return min(found) if found else GLOBAL_STEP


def _lattice_axis(values: np.ndarray, step: float) -> np.ndarray:
    """The lattice's coordinates from the least to the greatest of ``values``."""
    low, high = float(np.min(values)), float(np.max(values))
    return np.asarray(low + np.arange(round((high - low) / step) + 1) * step, dtype=np.float64)


def _nearest(axis: np.ndarray, values: np.ndarray, step: float) -> np.ndarray:
    return np.asarray(np.clip(np.rint((values - axis[0]) / step), 0, axis.size - 1), dtype=np.int64)


def trend_map(field: YearlyField) -> Any:
    """Every point's OLS trend per decade as an ``xarray.DataArray`` on (latitude, longitude), NaN where
    the table has no point or the point no trend."""
    import xarray as xr

    trends = point_trends(field)
    # Every lattice row and column between the table's first and last, so that a table of a few scattered
    # points is drawn as its cells, not stretched over the gaps between them.
    step = _lattice_step(field)
    lats, lons = _lattice_axis(field.latitude, step), _lattice_axis(field.longitude, step)
    grid = np.full((lats.size, lons.size), np.nan)
    grid[_nearest(lats, field.latitude, step), _nearest(lons, field.longitude, step)] = trends.per_decade
    return xr.DataArray(grid, coords={"latitude": lats, "longitude": lons}, dims=("latitude", "longitude"),
                        name=f"{field.variable}_trend", attrs={"units": f"{field.unit}/decade",
                                                               "years": [int(field.years[0]), int(field.years[-1])]})


__all__ = ["ARCTIC", "BY", "GLOBE", "LAST_YEARS", "Trends", "Unit", "anomalies", "area_mean", "atlas", "atlas_answer",
           "atlas_request", "cell_areas", "city_units", "country_regions", "outline_regions", "point_trends", "rank",
           "regional_field", "trend_map", "zonal_means"]
