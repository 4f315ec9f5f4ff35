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


_LAT_IDX = sql.SQL("((location_id - 1) / {n})").format(n=sql.Literal(GLOBAL_LON_COUNT))
_LON_IDX = sql.SQL("((location_id - 1) % {n})").format(n=sql.Literal(GLOBAL_LON_COUNT))


def area_predicates(area: Area, grid: Grid, dataset: Dataset = SINGLE_LEVELS) -> tuple[sql.Composable, sql.Composable]:
    """(the row belongs to the area, the row is a grid point of the area at its own coordinates).

    The first selects what is validated (box by coordinates, or the id range of the area's lattice);
    the second is what every selected row must satisfy. Index arithmetic is integer and the
    coordinates are compared as float8, where multiples of 0.25 are exact, so no tolerance is needed.
    On ERA5-Land's 0.1 degree lattice they are not: the row's float4 coordinates must be within
    1e-4 degrees of its id's (a float4 near 180 is exact to 1.5e-5; the next point is 0.1 away).
    ERA5-Land's rows are the area's land points, a subset of its lattice, so the same test holds.
    """
    lit = sql.Literal
    in_box = sql.SQL(
        "(latitude BETWEEN {s} AND {n} AND longitude BETWEEN {w} AND {e})"
    ).format(s=lit(float(area.south)), n=lit(float(area.north)), w=lit(float(area.west)),
             e=lit(float(area.east)))
    lattice = Lattice.of(area, grid, dataset)
    if lattice is None:
        return in_box, sql.SQL("false")
    if dataset.grid != SINGLE_LEVELS.grid:
        return _other_lattice(in_box, lattice, dataset)
    ids = sql.SQL("(location_id BETWEEN {a} AND {b} AND {lon} BETWEEN {c} AND {d})").format(
        a=lit(lattice.id_min), b=lit(lattice.id_max), lon=_LON_IDX, c=lit(lattice.lon0), d=lit(lattice.lon1))
    belongs = sql.SQL("({} OR {})").format(in_box, ids)
    on_lattice = sql.SQL(
        "(location_id >= 1 AND {lat} BETWEEN {lat0} AND {lat1} AND ({lat} - {lat0}) % {k} = 0"
        " AND {lon} BETWEEN {lon0} AND {lon1} AND ({lon} - {lon0}) % {k} = 0"
        " AND latitude = {lat} * {step} - 90 AND longitude = {lon} * {step} - 179.75)"
    ).format(lat=_LAT_IDX, lon=_LON_IDX, lat0=lit(lattice.lat0), lat1=lit(lattice.lat1),
             lon0=lit(lattice.lon0), lon1=lit(lattice.lon1), k=lit(lattice.every),
             step=sql.SQL("0.25::float8"))
    return belongs, on_lattice


def _other_lattice(in_box: sql.Composable, lattice: Lattice, dataset: Dataset) -> tuple[sql.Composable,
                                                                                        sql.Composable]:
    """``area_predicates`` on a lattice other than ERA5's (ERA5-Land's 0.1 degree one)."""
    lit = sql.Literal
    n = lit(lattice.lon_count)
    lat_idx = sql.SQL("((location_id - 1) / {n})").format(n=n)
    lon_idx = sql.SQL("((location_id - 1) % {n})").format(n=n)
    step = sql.SQL("{}::float8").format(lit(dataset.grid.step))
    ids = sql.SQL("(location_id BETWEEN {a} AND {b} AND {lon} BETWEEN {c} AND {d})").format(
        a=lit(lattice.id_min), b=lit(lattice.id_max), lon=lon_idx, c=lit(lattice.lon0), d=lit(lattice.lon1))
    belongs = sql.SQL("({} OR {})").format(in_box, ids)
    on_lattice = sql.SQL(
        "(location_id >= 1 AND {lat} BETWEEN {lat0} AND {lat1} AND ({lat} - {lat0}) % {k} = 0"
        " AND {lon} BETWEEN {lon0} AND {lon1} AND ({lon} - {lon0}) % {k} = 0"
        " AND abs(latitude - ({lat} * {step} - 90)) < 1e-4"
        " AND abs(longitude - ({lon} * {step} + {west})) < 1e-4)"
    ).format(lat=lat_idx, lon=lon_idx, lat0=lit(lattice.lat0), lat1=lit(lattice.lat1), lon0=lit(lattice.lon0),
             lon1=lit(lattice.lon1), k=lit(lattice.every), step=step,
             west=sql.SQL("{}::float8").format(lit(dataset.grid.lon_first)))
    return belongs, on_lattice
