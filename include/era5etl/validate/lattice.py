"""The area's lattice as SQL: which rows belong to the area, and which of them lie on its grid.

Which rows are "the month of the area": rows of the month whose coordinates lie in the area's box,
or whose location_id is one of the area's ids. A row is outside the area when its location_id is
not a grid point of the area, or not the id of the row's own coordinates; a row at a point
outside the box that also carries that point's id is another area's row (the table may hold
several areas) and is not this month's business, just as the loader's replace predicate ignores it.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from psycopg import sql

from era5etl.core.datasets import SINGLE_LEVELS, Dataset
from era5etl.core.grid import GLOBAL_LON_COUNT, Area, Grid


@dataclass(frozen=True)
class Lattice:
    """The area's grid points as global 0.25 degree indexes: rows lat0..lat1, columns lon0..lon1, every ``every``."""

    lat0: int
    lat1: int
    lon0: int
    lon1: int
    every: int

    lon_count: int = GLOBAL_LON_COUNT  # of the dataset's global lattice

    @classmethod
    def of(cls, area: Area, grid: Grid, dataset: Dataset = SINGLE_LEVELS) -> Lattice | None:
        lats, lons = area.latitudes(grid), area.longitudes(grid)
        if not lats or not lons:
            return None
        g = dataset.grid
        lat_idx = [round((v + 90.0) / g.step) for v in lats]
        lon_idx = [round((v - g.lon_first) / g.step) for v in lons]
        every = grid.step / Decimal(str(g.step))
        if every % 1 != 0:
            raise ValueError(f"grid {grid} is not a multiple of {dataset.title}'s {g.step:g} degree lattice")
        return cls(min(lat_idx), max(lat_idx), min(lon_idx), max(lon_idx), int(every), g.lon_count)

    @property
    def id_min(self) -> int:
        return self.lat0 * self.lon_count + self.lon0 + 1

    @property
    def id_max(self) -> int:
        return self.lat1 * self.lon_count + self.lon1 + 1


def _exact(step: float) -> bool:
    """Whether the lattice's coordinates are exact in binary floating point (0.25 degrees: multiples
    of a power of two; 0.1 is not)."""
    return Fraction(step).limit_denominator(1000) == Fraction(step)


def area_predicates(area: Area, grid: Grid, dataset: Dataset = SINGLE_LEVELS) -> tuple[sql.Composable, sql.Composable]:
    """(the row belongs to the area, the row is a grid point of the area at its own coordinates).

    The first selects what is validated (box by coordinates, or the id range of the area's lattice);
    the second is what every selected row must satisfy. Index arithmetic is integer and the
    coordinates are compared as float8: on ERA5's 0.25 degree lattice, whose multiples are exact,
    for equality; on ERA5-Land's 0.1 degree one, where they are not, the row's float4 coordinates
    must be within 1e-4 degrees of its id's (a float4 near 180 is exact to 1.5e-5; the next point is
    0.1 away). ERA5-Land's rows are the area's land points, a subset of its lattice, so the same test
    holds.
    """
    lit = sql.Literal
    in_box = sql.SQL(
        "(latitude BETWEEN {s} AND {n} AND longitude BETWEEN {w} AND {e})"
    ).format(s=lit(float(area.south)), n=lit(float(area.north)), w=lit(float(area.west)),
             e=lit(float(area.east)))
    lattice = Lattice.of(area, grid, dataset)
    if lattice is None:
        return in_box, sql.SQL("false")
    n = lit(lattice.lon_count)
    lat = sql.SQL("((location_id - 1) / {n})").format(n=n)
    lon = sql.SQL("((location_id - 1) % {n})").format(n=n)
    step = sql.SQL("{}::float8").format(lit(dataset.grid.step))
    lat_at = sql.SQL("({} * {} - 90)").format(lat, step)
    lon_at = sql.SQL("({} * {} + {}::float8)").format(lon, step, lit(dataset.grid.lon_first))
    at = (sql.SQL("latitude = {} AND longitude = {}") if _exact(dataset.grid.step)
          else sql.SQL("abs(latitude - {}) < 1e-4 AND abs(longitude - {}) < 1e-4")).format(lat_at, lon_at)
    ids = sql.SQL("(location_id BETWEEN {a} AND {b} AND {lon} BETWEEN {c} AND {d})").format(
        a=lit(lattice.id_min), b=lit(lattice.id_max), lon=lon, c=lit(lattice.lon0), d=lit(lattice.lon1))
    belongs = sql.SQL("({} OR {})").format(in_box, ids)
    on_lattice = sql.SQL(
        "(location_id >= 1 AND {lat} BETWEEN {lat0} AND {lat1} AND ({lat} - {lat0}) % {k} = 0"
        " AND {lon} BETWEEN {lon0} AND {lon1} AND ({lon} - {lon0}) % {k} = 0 AND {at})"
    ).format(lat=lat, lon=lon, lat0=lit(lattice.lat0), lat1=lit(lattice.lat1), lon0=lit(lattice.lon0),
             lon1=lit(lattice.lon1), k=lit(lattice.every), at=at)
    return belongs, on_lattice
