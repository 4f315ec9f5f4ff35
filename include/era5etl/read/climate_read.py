"""A place's climate signal read from the table: its daily values (``read.daily``), the summary
(``read.climate``) and the indices (``read.indices``) as one JSON-ready object, the CLI's ``climate``,
the HTTP ``/era5/climate`` and ``era5etl.api.climate`` alike."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np
import psycopg

from era5etl.core.datasets import Dataset
from era5etl.core.grid import Area
from era5etl.db.registry import table_dataset
from era5etl.db.rollups import data_columns
from era5etl.read.climate import summarize, value_column
from era5etl.read.columns import UNITS
from era5etl.read.daily import area_daily_values, area_monthly_daily, daily_values, monthly_daily
from era5etl.read.errors import ReadError
from era5etl.read.indices import LEAD_DAYS, check_indices, columns_of, compute_indices
from era5etl.read.localday import offset_text, parse_offset
from era5etl.read.monthly_means import refuse_days
from era5etl.read.points import Point, require_table
from era5etl.read.region_series import check_region
from era5etl.read.regions import Region
from era5etl.read.where import Where, describe_point, offset_minutes

DEFAULT_BASELINE = (1991, 2020)  # WMO's current climatological standard normal


def parse_years(text: str, option: str = "--baseline") -> tuple[int, int]:
    """``1991-2020`` -> (1991, 2020)."""
    parts = text.strip().split("-")
    try:
        first, last = (int(parts[0]), int(parts[1])) if len(parts) == 2 else (int(text), int(text))
    except ValueError:
        raise ReadError(f"{option} {text!r} is not a span of years such as 1991-2020") from None
    if not 1900 <= first <= last <= 2200:
        raise ReadError(f"{option} {text!r}: the first year must not be after the last (years 1900-2200)")
    return first, last


def _loaded_years(daily: Any, first: int | None = None) -> tuple[int, int]:
    """The first and last year (from ``first`` on: the days read before it are the windows' lead)
    holding a complete day (a local day's first or last hours alone, cut by the loaded range, do not
    make a year)."""
    years = daily.years()
    inside = years >= first if first is not None else np.ones(years.size, dtype=bool)
    whole = daily.complete & inside
    years = years[whole] if whole.any() else years[inside] if inside.any() else years
    return int(years.min()), int(years.max())


def point_climate(conn: psycopg.Connection[Any], table: str, point: Point, variable: str, *, baseline: tuple[int,
                  int] = DEFAULT_BASELINE,
                  first_year: int | None = None, last_year: int | None = None, indices: list[str] | None = None,
                  offset_minutes: int | None = None, dataset: Dataset | None = None) -> dict[str, Any]:
    """The climate of ``variable`` at ``point`` (of ``table``, loaded as ``dataset``: asked if None):
    ``variable``, ``unit``, ``statistic``,
    ``utc_offset_hours``, ``baseline``, ``years``, ``months`` (the baseline's climatology per calendar
    month), ``monthly``, ``highest``/``lowest``, ``trend_per_decade``, ``indices``, ``notes``, and the
    ``grid_point`` read. Days of UTC+``offset_minutes`` from the hourly rows, or UTC days from the daily
    rollup when None."""
    require_table(conn, table)
    if variable not in data_columns(conn, table) and variable != "wind_speed_10m":
        raise ReadError(f"unknown variable {variable!r}; {table} has {', '.join(data_columns(conn, table))}")
    column, statistic = value_column(variable)
    dataset = dataset or table_dataset(conn, table)
    if dataset.monthly and indices:
        raise refuse_days(table, dataset, f"the daily indices ({', '.join(indices)})")
    names = [] if dataset.monthly else check_indices(indices, variable)
    wanted = list(dict.fromkeys([column, *columns_of(names)]))
    lo = min(x for x in (first_year, baseline[0]) if x is not None)
    hi = max(x for x in (last_year, baseline[1]) if x is not None)
    lo_year, hi_year = lo if first_year is not None else None, hi if last_year is not None else None
    if dataset.monthly:  # its months spread over their days (read.monthly_means)
        daily = monthly_daily(conn, table, point, dataset, column, statistic, lo_year, hi_year)
    else:
        # A window's days reach back before the first year read (rx5day's 5 days), whatever that year is.
        daily = daily_values(conn, table, point, wanted, offset_minutes, lo_year, hi_year,
                             LEAD_DAYS if names else 0)
    loaded = _loaded_years(daily, lo_year)
    span = (first_year if first_year is not None else loaded[0], last_year if last_year is not None else loaded[1])
    summary = summarize(daily, variable, baseline, span)
    return {"grid_point": asdict(point), "table": table, "variable": variable, "unit": UNITS[variable],
            "statistic": summary.pop("statistic"), "utc_offset_hours": (offset_minutes or 0) / 60,
            "loaded_years": list(loaded), **summary, "indices": compute_indices(daily, names, baseline, span)}


def _where_json(at: Where, grid_point: dict[str, Any], named: str) -> dict[str, Any]:
    """The ``place`` (by name) or ``point`` (by coordinates) key: what was asked, the grid point read and
    the sentence naming both."""
    if at.place is not None:
        return {"place": {**asdict(at.place), "grid_point": grid_point, "described": named}}
    return {"point": {"latitude": at.latitude, "longitude": at.longitude, "grid_point": grid_point,
                      "described": named}}


def climate_request(conn: psycopg.Connection[Any], table: str, at: Where, variable: str = "temperature_2m",
                    baseline: str | tuple[int, int] = DEFAULT_BASELINE, first: int | None = None,
                    last: int | None = None, indices: list[str] | None = None,
                    tz: str | None = None) -> dict[str, Any]:
    """The climate JSON of a place (``climate --json``, ``GET /era5/climate``, ``era5etl.api.climate``):
    ``place`` (or ``point``) first, then :func:`point_climate`'s keys. The days are the place's standard
    offset's unless ``tz`` says otherwise; bare coordinates' are UTC days."""
    span = parse_years(baseline) if isinstance(baseline, str) else baseline
    if first is not None and last is not None and last < first:
        raise ReadError(f"the last year {last} is before the first {first}")
    dataset = table_dataset(conn, table)
    point, named = describe_point(conn, table, at, dataset)
    if dataset.monthly:  # months, not days: no day boundary to shift
        if tz is not None:
            raise refuse_days(table, dataset, f"days of {tz}")
        shift = None
        named += f", months of {dataset.name}"
    else:
        shift = offset_minutes(tz, at, default_local=True)
        standard = tz is None and shift is not None
        named += f", days of {offset_text(shift or 0)}" + (" (the place's standard offset)" if standard else "")
    summary = point_climate(conn, table, point, variable, baseline=span, first_year=first, last_year=last,
                            indices=indices, offset_minutes=shift, dataset=dataset)
    grid_point = summary.pop("grid_point")
    return {**_where_json(at, grid_point, named), **summary}


def area_climate(conn: psycopg.Connection[Any], table: str, box: Any, variable: str = "temperature_2m",
                 baseline: str | tuple[int, int] = DEFAULT_BASELINE, first: int | None = None,
                 last: int | None = None, indices: list[str] | None = None,
                 tz: str | None = None) -> dict[str, Any]:
    """The climate of an area (N/W/S/E): the yearly and monthly values of its cos(latitude)-weighted
    daily mean (or mean total), over UTC days from the daily rollup, or with ``tz`` (a fixed offset) that
    offset's days from the hourly rows. ``box`` may be a ``read.regions.Region`` instead: its points
    weighted by their cells' overlap with the outline (the JSON's ``region`` in place of ``area``).
    The indices are a place's: ETCCDI counts days at a point (a
    frost day somewhere in a box is not a frost day of the box), so an area has none yet, and asking
    for one is refused."""
    if indices:
        raise ReadError("the indices are computed for a place (--place or LAT LON); an area's or a region's "
                        "climate has its yearly and monthly means only")
    shift = None if tz is None else parse_offset(tz)
    span = parse_years(baseline) if isinstance(baseline, str) else baseline
    if first is not None and last is not None and last < first:
        raise ReadError(f"the last year {last} is before the first {first}")

    area = box if isinstance(box, Region) else Area.parse(box)
    require_table(conn, table)
    dataset = table_dataset(conn, table)
    if dataset.monthly and shift is not None:  # months, not days: no day boundary to shift
        raise refuse_days(table, dataset, f"days of {tz}")
    if isinstance(area, Region):
        area = check_region(conn, table, area)
    column, statistic = value_column(variable)
    # The years read: the baseline's and those asked for, open where none was asked.
    lo = min(x for x in (first, span[0]) if x is not None) if first is not None else None
    hi = max(x for x in (last, span[1]) if x is not None) if last is not None else None
    if dataset.monthly:
        daily, points = area_monthly_daily(conn, table, area, dataset, column, statistic, lo, hi)
    else:
        daily, points = area_daily_values(conn, table, area, column, lo, hi, shift)
    loaded = _loaded_years(daily)
    years = (first if first is not None else loaded[0], last if last is not None else loaded[1])
    summary = summarize(daily, variable, span, years)
    days = (f"months of {dataset.name}" if dataset.monthly else
            "UTC days" if shift is None else f"days of {offset_text(shift)} from the hourly rows")
    if isinstance(area, Region):
        outside = (f", {area.left_out:,} outside the table's loaded box left out ({area.loaded_share:.1%} of its "
                   "area read)" if area.left_out else "")
        described = (f"region {area} ({area.source}): {area.points:,} grid points weighted by their cells' overlap"
                     f"{outside}, {days}")
        where: dict[str, Any] = {"region": {**area.describe(), "points_read": points, "described": described}}
    else:
        described = f"area {area}: {points:,} grid points, cos(latitude)-weighted, {days}"
        where = {"area": {"box": str(area), "points": points, "described": described}}
    return {**where, "table": table,
            "variable": variable, "unit": UNITS[variable], "statistic": summary.pop("statistic"),
            "utc_offset_hours": (shift or 0) / 60, "loaded_years": list(loaded), **summary, "indices": {}}


__all__ = ["DEFAULT_BASELINE", "area_climate", "climate_request", "parse_years", "point_climate"]
