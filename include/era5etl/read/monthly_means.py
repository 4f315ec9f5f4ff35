"""Reads of a table of monthly means (``monthly-means``, ``monthly-means-by-hour``, ``land-monthly-means``):
its rows are months (or a month's hours of the day), not hours.

* a place's ``series`` reads the table's rows: they are the monthly series (``--monthly`` says the same;
  ``--daily`` is refused: the table holds no days);
* an area's or a region's series (``--area``, ``--region``) is its points' months, weighted as an
  area's hourly rows are (:func:`area_columns`: each variable's weighted mean, least and greatest
  point value; an accumulation's mean is the area's mean daily total), ``hours`` the hours its rows
  stand for (:func:`hours_of`);
* the units are the dataset's: an accumulation's monthly mean is a mean daily total (``mm/day``);
* ``wind_speed_10m`` is not derived: the speed of the mean wind is not the mean speed;
* ``climate``: each month's value spread over its days (every day complete, the month's mean, or for
  an accumulation its mean daily total), so the yearly value is the days-weighted mean or the yearly
  total (a month's total: its mean daily total x its days), and anomalies and trends follow as for a
  daily table. By hour of day a month's value is first made from its 24 hours (their mean, or for an
  accumulation the sum of the hours' mean amounts: the mean daily total). The ETCCDI indices count days
  and are refused.
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from era5etl.core.datasets import Dataset
from era5etl.core.months import HOURS_A_DAY
from era5etl.core.rollups import WIND_SPEED
from era5etl.read.columns import UNITS
from era5etl.read.errors import ReadError


def units_of(dataset: Dataset, columns: list[str]) -> dict[str, str]:
    """The unit of each column as the dataset stores it (``mm/day`` for a mean daily total)."""
    out = {}
    for c in columns:
        v = dataset.variable(c)
        out[c] = v.table_unit if v is not None else UNITS[c]
    return out


def refuse_days(table: str, dataset: Dataset, what: str) -> ReadError:
    return ReadError(f"{table} holds {dataset.title} ({dataset.name}): a row a month, no days, so {what} "
                     "cannot be read from it; its series (or --monthly) and climate's yearly values can")


def check_columns(table: str, dataset: Dataset, variables: list[str] | None) -> None:
    if variables and WIND_SPEED in variables:
        raise ReadError(f"{WIND_SPEED} is not read from {table} ({dataset.name}): the speed of a monthly mean "
                        "wind is not the mean speed; read zonal_wind_10m and meridional_wind_10m")


# What an area's or a region's series gives of each variable of a table of monthly means: a row is a
# month's mean already (an accumulation's mean daily total), so the points' weighted mean and their
# least and greatest values; no "sum" (a month's mean daily totals do not add up over the points).
AREA_AGGREGATES = ("min", "max", "mean")


def area_columns(table: str, dataset: Dataset, variables: list[str] | None, data: list[str]) -> list[str]:
    """The columns of an area's series of a table of monthly means, in the order asked (a variable
    stands for its three, :data:`AREA_AGGREGATES`; None: every data column's); ReadError for another
    name, naming the known ones."""
    check_columns(table, dataset, variables)
    accepted = {f"{v}_{a}": v for v in data for a in AREA_AGGREGATES}
    names = list(data) if variables is None else [v.strip() for v in variables if v.strip()]
    unknown = [n for n in names if n not in data and n not in accepted]
    if unknown or not names:
        what = f"unknown variable(s) {', '.join(map(repr, unknown))}" if unknown else "no variable named"
        raise ReadError(f"{what} for an area's series of {table} ({dataset.name}, a row a month); the known ones "
                        f"are {', '.join([*data, *accepted])}")
    out: list[str] = []
    for n in names:
        for c in ([f"{n}_{a}" for a in AREA_AGGREGATES] if n in data else [n]):
            if c not in out:
                out.append(c)
    return out


def area_units(dataset: Dataset, columns: list[str]) -> dict[str, str]:
    """Each ``<variable>_<aggregate>`` column's unit: its variable's, as the dataset stores it."""
    variables = {c: c.rsplit("_", 1)[0] for c in columns}
    units = units_of(dataset, list(variables.values()))
    return {c: units[v] for c, v in variables.items()}


def hours_of(times: np.ndarray, points: np.ndarray, dataset: Dataset) -> np.ndarray:
    """The hours the rows of each step stand for: its points x the month's hours (by hour of day: x the
    month's days, the one hour of each day the row is the mean of)."""
    months = np.asarray(times).astype("datetime64[M]")
    days = ((months + 1).astype("datetime64[D]") - months.astype("datetime64[D]")).astype(np.int64)
    per_point = days if dataset.period == "month_by_hour" else days * HOURS_A_DAY
    hours: np.ndarray = (np.asarray(points, dtype=np.int64) * per_point).astype(np.int64)
    return hours


def row_time(at: datetime, dataset: Dataset) -> datetime:
    """The row of a table of monthly means holding the moment ``at``: its month's start, by hour of day
    plus ``at``'s hour."""
    start = at.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return start.replace(hour=at.astimezone(UTC).hour) if dataset.period == "month_by_hour" else start


__all__ = ["AREA_AGGREGATES", "area_columns", "area_units", "check_columns", "hours_of", "refuse_days",
           "row_time", "units_of"]
