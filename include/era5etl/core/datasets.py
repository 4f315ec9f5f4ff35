"""The ERA5 family as data: what differs between the CDS collections this project loads.

A dataset is not a copy of the pipeline. It is a record of the facts that differ between ERA5 single
levels, ERA5-Land and ERA5 on pressure levels, and every step (fetch, stage, load, validate, read)
asks it rather than knowing the collection:

* ``collection`` and ``request_keys``: the CDS collection and the fixed keys of its request (ERA5
  single levels and pressure levels ask for ``product_type: reanalysis``; ERA5-Land has no product
  type);
* ``grid``: the global lattice its points lie on, which numbers them (``location_id``);
* ``catalogue``: the variables it offers, each with its CDS, NetCDF and GRIB names, units and bounds;
* ``levels``: the pressure levels (hPa) it offers, or none when its rows have no level;
* ``accumulation``: how its accumulated variables are delivered: ``hourly`` (ERA5: each value is
  the hour ending at the valid time) or ``since_00utc`` (ERA5-Land: a running total from 00 UTC, the
  00 UTC value being the previous day's whole total). Tables always store hourly amounts;
* ``land_only``: whether sea points are missing (NaN, or absent from a GRIB bitmap) and are not rows;
* ``period``: what one row's time stands for: an ``hour`` (the hourly collections), a ``month`` (the
  monthly means: one row a month and point, at 00 UTC on the 1st) or an hour of the day in a month
  (``month_by_hour``: 24 rows a month and point, at the month's first day and that hour).

The monthly means (``monthly-means``, ``monthly-means-by-hour``, ``land-monthly-means``) are datasets of
the monthly pipeline like the hourly ones (fetch, validation, DAGs, ``load-file``): a month of them is
one row time a point (24 by hour of day, :meth:`Dataset.times_in`), asked for without days.

Single levels are the default and unchanged: its grid numbers points as the project always has.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from era5etl.core.catalogue import CATALOGUE, Variable
from era5etl.core.catalogue_land import LAND_CATALOGUE, LAND_DEFAULT_VARIABLES
from era5etl.core.catalogue_monthly import BY_HOUR_CATALOGUE, LAND_MONTHLY_CATALOGUE, MONTHLY_CATALOGUE
from era5etl.core.catalogue_pl import PL_CATALOGUE, PRESSURE_LEVELS_HPA
from era5etl.core.errors import InputError
from era5etl.core.grid import normalize_longitude
from era5etl.core.months import Month

# hourly: the amount of the hour ending at the valid time; since_00utc: a running total from 00 UTC;
# daily_mean: a monthly mean of the daily totals (mean amount a day), stored as delivered.
Accumulation = Literal["hourly", "since_00utc", "daily_mean"]
Period = Literal["hour", "month", "month_by_hour"]


@dataclass(frozen=True)
class LatLonGrid:
    """A regular global latitude-longitude lattice and its point ids.

    ``location_id = lat_index * lon_count + lon_index + 1`` with lat_index counted from -90 and
    lon_index from ``lon_first`` (the westernmost point east of -180), longitudes in (-180, 180].
    """

    step: float
    lat_count: int
    lon_count: int
    lon_first: float

    @property
    def points(self) -> int:
        return self.lat_count * self.lon_count

    def location_ids(self, lat: npt.ArrayLike, lon: npt.ArrayLike) -> npt.NDArray[np.int32]:
        """Ids of points (broadcast); a point off this lattice is an error."""
        lat_a = np.asarray(lat, dtype=np.float64)
        lon_a = normalize_longitude(lon)
        lat_f = (lat_a + 90.0) / self.step
        lon_f = (lon_a - self.lon_first) / self.step
        lat_i, lon_i = np.rint(lat_f), np.rint(lon_f)
        if np.any(np.abs(lat_f - lat_i) > 1e-3) or np.any(np.abs(lon_f - lon_i) > 1e-3):
            raise InputError(f"grid points are not on the global {self.step:g} degree grid; location_id needs a "
                             f"grid whose step is a multiple of {self.step:g} and whose points are on that lattice")
        if np.any((lat_i < 0) | (lat_i >= self.lat_count)):
            raise InputError("latitude outside -90..90")
        return (lat_i * self.lon_count + lon_i + 1).astype(np.int32)

    def coordinates(self, ids: npt.ArrayLike) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """(latitude, longitude) of point ids: the inverse of :meth:`location_ids`."""
        index = np.asarray(ids, dtype=np.int64) - 1
        lat = (index // self.lon_count) * self.step - 90.0
        lon = (index % self.lon_count) * self.step + self.lon_first
        return np.asarray(lat, dtype=np.float64), np.asarray(lon, dtype=np.float64)

    def column_range(self, west: float, east: float) -> tuple[int, int]:
        """The first and last longitude index (``(location_id - 1) % lon_count``) of the lattice points
        with west <= longitude <= east (west <= east, both in (-180, 180]): what a rollup, which keeps
        no longitude, is filtered by. Empty (first > last) when no lattice column lies between."""
        first = int(np.ceil((west - self.lon_first) / self.step - 1e-3))
        last = int(np.floor((east - self.lon_first) / self.step + 1e-3))
        return max(first, 0), min(last, self.lon_count - 1)

    def longitude_of_column(self, index: int) -> float:
        return float(index * self.step + self.lon_first)


ERA5_GRID = LatLonGrid(step=0.25, lat_count=721, lon_count=1440, lon_first=-179.75)
LAND_GRID = LatLonGrid(step=0.1, lat_count=1801, lon_count=3600, lon_first=-179.9)


@dataclass(frozen=True)
class Dataset:
    name: str  # what --dataset, the settings and the DAG id say
    collection: str  # the CDS collection
    title: str
    grid: LatLonGrid
    catalogue: tuple[Variable, ...]
    default_variables: tuple[str, ...]  # CDS names asked for when a user names none
    first_month: str  # YYYY-MM: the first month the collection holds
    request_keys: dict[str, list[str]] = field(default_factory=dict)
    levels: tuple[int, ...] = ()  # hPa; empty: rows have no level
    accumulation: Accumulation = "hourly"
    land_only: bool = False
    period: Period = "hour"

    def __hash__(self) -> int:
        # A dataset is known by its name (its fields hold a dict, which has no hash): equal datasets
        # share a name, so a dataset can key what a read keeps (db.facts).
        return hash(self.name)

    @property
    def monthly(self) -> bool:
        return self.period != "hour"

    def times_in(self, month: Month) -> int:
        """Row times a point has in ``month``: its hours, one (a monthly mean) or 24 (by hour of day)."""
        return {"hour": month.hours, "month": 1, "month_by_hour": 24}[self.period]

    def request_times(self) -> dict[str, list[str]]:
        """The request's time keys for one month beyond year and month: every day's 24 hours; a monthly
        mean's one time (00:00, no day); by hour of day the 24 hours (no day). Days are added by the
        caller for an hourly collection (its parts split them)."""
        if self.period == "month":
            return {"time": ["00:00"]}
        return {"time": [f"{h:02d}:00" for h in range(24)]}

    @property
    def has_levels(self) -> bool:
        return bool(self.levels)

    @property
    def base_variables(self) -> tuple[Variable, ...]:
        """The columns its table is made with, each load writing them all (a row is replaced whole).

        A table without levels is the one table layout of single levels with its six columns, whatever
        the dataset (ERA5-Land's too: its rollups and reads are those of that table, and
        total_cloud_cover, which ERA5-Land has not, stays NULL); a table on levels has its dataset's
        default variables."""
        if not self.has_levels:
            return CATALOGUE[:6]
        return tuple(v for v in self.catalogue if v.cds_name in self.default_variables)

    def variable(self, name: str) -> Variable | None:
        """One of its variables by CDS name, NetCDF name or column."""
        return next((v for v in self.catalogue if name in (v.cds_name, v.short_name, v.column)), None)

    def parse_levels(self, levels: str | Iterable[int | str] | None) -> tuple[int, ...]:
        """The levels asked for (a comma-separated text or numbers; None or empty: all of them), checked
        against the dataset's and sorted top to bottom (ascending hPa). A dataset without levels takes none."""
        if isinstance(levels, str):
            levels = [t for t in levels.replace(" ", ",").split(",") if t.strip()]
        asked = list(levels or ())
        if not self.has_levels:
            if asked:
                raise InputError(f"{self.name} has no pressure levels; levels {', '.join(map(str, asked))} "
                                 "were asked for")
            return ()
        if not asked:
            return self.levels
        out: set[int] = set()
        for item in asked:
            try:
                value = float(str(item).strip().lower().removesuffix("hpa"))
            except ValueError:
                raise InputError(f"level {item!r}: expected a pressure in hPa, one of "
                                 f"{', '.join(map(str, self.levels))}") from None
            if value != int(value) or int(value) not in self.levels:
                raise InputError(f"level {item!r} hPa is not one of {self.name}'s levels "
                                 f"({', '.join(map(str, self.levels))})")
            out.add(int(value))
        return tuple(sorted(out))


SINGLE_LEVELS = Dataset(
    name="single-levels", collection="reanalysis-era5-single-levels", title="ERA5 hourly on single levels",
    grid=ERA5_GRID, catalogue=CATALOGUE, default_variables=tuple(v.cds_name for v in CATALOGUE[:6]),
    first_month="1940-01", request_keys={"product_type": ["reanalysis"]})

# ERA5-Land: 0.1 degree, land points only (sea is NaN in NetCDF, bitmap-missing in GRIB, and no row),
# no product type, accumulations a running total from 00 UTC (stored as hourly amounts, see
# era5etl.stage.land and docs/land.md).
LAND = Dataset(
    name="land", collection="reanalysis-era5-land", title="ERA5-Land hourly",
    grid=LAND_GRID, catalogue=LAND_CATALOGUE, default_variables=LAND_DEFAULT_VARIABLES,
    first_month="1950-01", request_keys={}, accumulation="since_00utc", land_only=True)


# Request keys: product_type only; the pressure_level list is the asked levels (fetch.request).
PRESSURE_LEVELS = Dataset(
    name="pressure-levels", collection="reanalysis-era5-pressure-levels", title="ERA5 hourly on pressure levels",
    grid=ERA5_GRID, catalogue=PL_CATALOGUE, default_variables=tuple(v.cds_name for v in PL_CATALOGUE[:6]),
    first_month="1940-01", request_keys={"product_type": ["reanalysis"]}, levels=PRESSURE_LEVELS_HPA)

# The monthly means: the hourly collections' catalogues with the monthly units (core.catalogue_monthly).
MONTHLY_MEANS = Dataset(
    name="monthly-means", collection="reanalysis-era5-single-levels-monthly-means",
    title="ERA5 monthly averaged data on single levels", grid=ERA5_GRID, catalogue=MONTHLY_CATALOGUE,
    default_variables=SINGLE_LEVELS.default_variables, first_month="1940-01",
    request_keys={"product_type": ["monthly_averaged_reanalysis"]}, accumulation="daily_mean", period="month")
MONTHLY_MEANS_BY_HOUR = Dataset(
    name="monthly-means-by-hour", collection="reanalysis-era5-single-levels-monthly-means",
    title="ERA5 monthly averaged data on single levels by hour of day", grid=ERA5_GRID,
    catalogue=BY_HOUR_CATALOGUE, default_variables=SINGLE_LEVELS.default_variables, first_month="1940-01",
    request_keys={"product_type": ["monthly_averaged_reanalysis_by_hour_of_day"]}, period="month_by_hour")
LAND_MONTHLY_MEANS = Dataset(
    name="land-monthly-means", collection="reanalysis-era5-land-monthly-means",
    title="ERA5-Land monthly averaged data", grid=LAND_GRID, catalogue=LAND_MONTHLY_CATALOGUE,
    default_variables=LAND_DEFAULT_VARIABLES, first_month="1950-01",
    request_keys={"product_type": ["monthly_averaged_reanalysis"]}, accumulation="daily_mean", land_only=True,
    period="month")

# What the monthly pipeline fetches, validates and has DAGs for, and load-file takes.
DATASETS: dict[str, Dataset] = {d.name: d for d in (SINGLE_LEVELS, LAND, PRESSURE_LEVELS, MONTHLY_MEANS,
                                                    MONTHLY_MEANS_BY_HOUR, LAND_MONTHLY_MEANS)}
FILE_DATASETS: dict[str, Dataset] = DATASETS
DEFAULT = SINGLE_LEVELS


def by_name(name: str, among: dict[str, Dataset] = DATASETS) -> Dataset:
    try:
        return among[name.strip().lower()]
    except KeyError:
        raise InputError(f"unknown dataset {name!r}: expected one of {', '.join(among)}") from None
