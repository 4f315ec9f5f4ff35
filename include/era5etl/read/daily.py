"""A place's daily values as numpy arrays on calendar dates, for the climate signal: the UTC days of the
daily rollup, or days of a fixed UTC offset from the hourly rows (``read.localday``).

A day is complete when it holds its 24 hourly rows; an incomplete day (the loaded range cuts it, or
the shifted day runs past the first or last loaded hour) is kept with its hours so that what it is
part of (a month, a year) can be marked partial rather than averaged silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import psycopg

from era5etl.core.datasets import Dataset
from era5etl.core.months import HOURS_A_DAY
from era5etl.core.rollups import WIND_SPEED
from era5etl.read.area import area_series
from era5etl.read.area_localday import area_local_daily
from era5etl.read.localday import local_daily
from era5etl.read.monthly_means import check_columns
from era5etl.read.points import Point
from era5etl.read.region_series import region_local_daily, region_series
from era5etl.read.regions import Region
from era5etl.read.series import series


@dataclass
class Daily:
    """``dates`` (datetime64[D], the local calendar day), ``hours`` (rows in each) and one float64
    array per rollup column (``temperature_2m_max``, ``total_precipitation_sum`` ...)."""

    dates: np.ndarray
    hours: np.ndarray
    values: dict[str, np.ndarray]
    utc_offset_minutes: int

    @property
    def complete(self) -> np.ndarray:
        return np.asarray(self.hours >= HOURS_A_DAY)

    def years(self) -> np.ndarray:
        return self.dates.astype("datetime64[Y]").astype(np.int64) + 1970

    def months(self) -> np.ndarray:
        return self.dates.astype("datetime64[M]").astype(np.int64) % 12 + 1


def daily_values(conn: psycopg.Connection[Any], table: str, point: Point, columns: list[str],
                 offset_minutes: int | None, first_year: int | None = None, last_year: int | None = None,
                 lead_days: int = 0) -> Daily:
    """The point's days of [first_year, last_year] (None: all loaded) with ``columns`` (rollup column
    names): from the daily rollup when ``offset_minutes`` is None (UTC days), else from the hourly rows;
    ``lead_days`` more before the first year (the days a window ending early in it reaches back to)."""
    shift = offset_minutes or 0
    lag = timedelta(minutes=shift)
    start = datetime(first_year, 1, 1, tzinfo=UTC) - lag - timedelta(days=lead_days) if first_year is not None else None
    end = datetime(last_year + 1, 1, 1, tzinfo=UTC) - lag if last_year is not None else None
    wanted = [*columns, "hours"]
    if offset_minutes is None:
        s = series(conn, table, point, start, end, wanted, "day")
    else:
        s = local_daily(conn, table, point, start, end, wanted, offset_minutes)
    dates = (s.time + np.timedelta64(shift, "m")).astype("datetime64[D]")
    values = {c: s.values[c].astype(np.float64) for c in columns}
    return Daily(dates, s.values["hours"].astype(np.int64), values, shift)


def area_daily_values(conn: psycopg.Connection[Any], table: str, area: Any, column: str, first_year: int | None = None,
                      last_year: int | None = None, offset_minutes: int | None = None) -> tuple[Daily, int]:
    """An area's (or a ``read.regions.Region``'s, by its cells' overlap) days (the cos(latitude)-weighted
    mean of the points' daily ``column``: UTC days from
    the daily rollup, ``read.area``, or with ``offset_minutes`` that offset's days from the hourly rows,
    ``read.area_localday``) and its number of grid points: a day is complete when every point of the
    area holds its 24 hours (the most points any day has)."""
    lag = timedelta(minutes=offset_minutes or 0)
    start = datetime(first_year, 1, 1, tzinfo=UTC) - lag if first_year is not None else None
    end = datetime(last_year + 1, 1, 1, tzinfo=UTC) - lag if last_year is not None else None
    if isinstance(area, Region):
        s = (region_series(conn, table, area, start, end, [column], "day") if offset_minutes is None
             else region_local_daily(conn, table, area, start, end, [column], offset_minutes))
    elif offset_minutes is None:
        s = area_series(conn, table, area, start, end, [column], "day")
    else:
        s = area_local_daily(conn, table, area, start, end, [column], offset_minutes)
    shift = np.timedelta64(offset_minutes or 0, "m")
    points = int(s.points.max())
    whole = (s.points == points) & (s.hours == points * HOURS_A_DAY)
    hours = np.where(whole, HOURS_A_DAY, np.minimum(s.hours // max(points, 1), HOURS_A_DAY - 1)).astype(np.int64)
    dates = (s.time + shift).astype("datetime64[D]")
    return Daily(dates, hours, {column: s.values[column].astype(np.float64)}, offset_minutes or 0), points



def _years(first_year: int | None, last_year: int | None) -> tuple[datetime | None, datetime | None]:
    """[start, end) of the years first_year..last_year (None: open)."""
    start = datetime(first_year, 1, 1, tzinfo=UTC) if first_year is not None else None
    end = datetime(last_year + 1, 1, 1, tzinfo=UTC) if last_year is not None else None
    return start, end


def monthly_daily(conn: psycopg.Connection[Any], table: str, point: Point, dataset: Dataset, column: str,
                  statistic: str,
                  first_year: int | None, last_year: int | None) -> Daily:
    """The point's months as complete days carrying the month's value: ``column`` (``<variable>_mean``
    or ``<variable>_sum``) of the months of [first_year, last_year] (None: all loaded)."""
    variable = column.rsplit("_", 1)[0]
    if variable == WIND_SPEED:
        check_columns(table, dataset, [variable])
    start, end = _years(first_year, last_year)
    s = series(conn, table, point, start, end, [variable], "hour")
    return spread_months(s.time, s.values[variable], dataset, column, statistic)


def area_monthly_daily(conn: psycopg.Connection[Any], table: str, area: Any, dataset: Dataset, column: str,
                       statistic: str,
                       first_year: int | None, last_year: int | None) -> tuple[Daily, int]:
    """:func:`monthly_daily` of an area (a ``core.grid.Area``) or a region (``read.regions.Region``): the
    months of its weighted mean (``read.area``, ``read.region_series``), and its number of grid points."""
    start, end = _years(first_year, last_year)
    wanted = [f"{column.rsplit('_', 1)[0]}_mean"]
    if isinstance(area, Region):
        s = region_series(conn, table, area, start, end, wanted, "month")
    else:
        s = area_series(conn, table, area, start, end, wanted, "month")
    return spread_months(s.time, s.values[wanted[0]], dataset, column, statistic), int(s.points.max())


def spread_months(times: np.ndarray, values: np.ndarray, dataset: Dataset, column: str, statistic: str) -> Daily:
    """The rows of a table of monthly means (``times`` in order, ``values``) as complete days carrying
    their month's value in ``column`` (by hour of day: the month's 24 hours made one value first)."""
    months = np.asarray(times).astype("datetime64[M]")
    values = np.asarray(values, dtype=np.float64)
    per_month, first = np.unique(months, return_index=True)
    if dataset.period == "month_by_hour":
        counts = np.bincount(np.searchsorted(per_month, months), minlength=per_month.size)
        sums = np.bincount(np.searchsorted(per_month, months), weights=values, minlength=per_month.size)
        # A month lacking some of its 24 hours of the day has no value (NaN), not a mean of the rest.
        whole = np.where(counts == HOURS_A_DAY, sums, np.nan)
        month_values = whole if statistic == "total" else whole / HOURS_A_DAY
    else:
        month_values = values[first]
    days = ((per_month + 1).astype("datetime64[D]") - per_month.astype("datetime64[D]")).astype(np.int64)
    dates = np.concatenate([np.arange(m.astype("datetime64[D]"), (m + 1).astype("datetime64[D]"))
                            for m in per_month]) if per_month.size else np.array([], dtype="datetime64[D]")
    return Daily(dates, np.full(dates.size, HOURS_A_DAY, dtype=np.int64),
                 {column: np.repeat(month_values, days)}, 0)


__all__ = ["HOURS_A_DAY", "Daily", "area_daily_values", "area_monthly_daily", "daily_values", "monthly_daily",
           "spread_months"]
