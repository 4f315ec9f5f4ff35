"""A place's daily values as numpy arrays on calendar dates, for the climate signal: the UTC days of the
daily rollup, or days of a fixed UTC offset from the hourly rows (``read.localday``).

A day is complete when it holds its 24 hourly rows; an incomplete day (the loaded range cuts it, or
the shifted day runs past the first or last loaded hour) is kept with its hours so that what it is
part of (a month, a year) can be marked partial rather than averaged silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from era5etl.read.points import Point
from era5etl.read.series import series

HOURS_A_DAY = 24


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


def daily_values(conn: Any, table: str, point: Point, columns: list[str], offset_minutes: int | None,
                 first_year: int | None = None, last_year: int | None = None) -> Daily:
    """The point's days of [first_year, last_year] (None: all loaded) with ``columns`` (rollup column
    names): from the daily rollup when ``offset_minutes`` is None (UTC days), else from the hourly rows."""
    from datetime import timedelta

    shift = offset_minutes or 0
    lag = timedelta(minutes=shift)
    start = datetime(first_year, 1, 1, tzinfo=UTC) - lag if first_year is not None else None
    end = datetime(last_year + 1, 1, 1, tzinfo=UTC) - lag if last_year is not None else None
    wanted = [*columns, "hours"]
    if offset_minutes is None:
        s = series(conn, table, point, start, end, wanted, "day")
    else:
        from era5etl.read.localday import local_daily

        s = local_daily(conn, table, point, start, end, wanted, offset_minutes)
    dates = (s.time + np.timedelta64(shift, "m")).astype("datetime64[D]")
    values = {c: s.values[c].astype(np.float64) for c in columns}
    return Daily(dates, s.values["hours"].astype(np.int64), values, shift)


def area_daily_values(conn: Any, table: str, area: Any, column: str, first_year: int | None = None,
                      last_year: int | None = None, offset_minutes: int | None = None) -> tuple[Daily, int]:
    """An area's (or a ``read.regions.Region``'s, by its cells' overlap) days (the cos(latitude)-weighted
    mean of the points' daily ``column``: UTC days from
    the daily rollup, ``read.area``, or with ``offset_minutes`` that offset's days from the hourly rows,
    ``read.area_localday``) and its number of grid points: a day is complete when every point of the
    area holds its 24 hours (the most points any day has)."""
    from datetime import timedelta

    from era5etl.read.area import area_series
    from era5etl.read.area_localday import area_local_daily

    lag = timedelta(minutes=offset_minutes or 0)
    start = datetime(first_year, 1, 1, tzinfo=UTC) - lag if first_year is not None else None
    end = datetime(last_year + 1, 1, 1, tzinfo=UTC) - lag if last_year is not None else None
    from era5etl.read.regions import Region

    if isinstance(area, Region):
        from era5etl.read.region_series import region_local_daily, region_series

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


__all__ = ["HOURS_A_DAY", "Daily", "area_daily_values", "daily_values"]
