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

from era5etl.core.grid import GLOBAL_LON_COUNT, GLOBAL_STEP, Area, Grid


@dataclass(frozen=True)
class Lattice:
    """The area's grid points as global 0.25 degree indexes: rows lat0..lat1, columns lon0..lon1, every ``every``."""

    lat0: int
    lat1: int
    lon0: int
    lon1: int
    every: int

    @classmethod
    def of(cls, area: Area, grid: Grid) -> Lattice | None:
        lats, lons = area.latitudes(grid), area.longitudes(grid)
        if not lats or not lons:
            return None
        lat_idx = [round((v + 90.0) / GLOBAL_STEP) for v in lats]
        lon_idx = [round((v + 179.75) / GLOBAL_STEP) for v in lons]
        return cls(min(lat_idx), max(lat_idx), min(lon_idx), max(lon_idx), int(grid.step / Decimal("0.25")))

    @property
    def id_min(self) -> int:
        return self.lat0 * GLOBAL_LON_COUNT + self.lon0 + 1

    @property
    def id_max(self) -> int:
        return self.lat1 * GLOBAL_LON_COUNT + self.lon1 + 1


_LAT_IDX = sql.SQL("((location_id - 1) / {n})").format(n=sql.Literal(GLOBAL_LON_COUNT))
_LON_IDX = sql.SQL("((location_id - 1) % {n})").format(n=sql.Literal(GLOBAL_LON_COUNT))


def area_predicates(area: Area, grid: Grid) -> tuple[sql.Composable, sql.Composable]:
    """(the row belongs to the area, the row is a grid point of the area at its own coordinates).

    The first selects what is validated (box by coordinates, or the id range of the area's lattice);
    the second is what every selected row must satisfy. Index arithmetic is integer and the
    coordinates are compared as float8, where multiples of 0.25 are exact, so no tolerance is needed.
    """
    lit = sql.Literal
    in_box = sql.SQL(
        "(latitude BETWEEN {s} AND {n} AND longitude BETWEEN {w} AND {e})"
    ).format(s=lit(float(area.south)), n=lit(float(area.north)), w=lit(float(area.west)),
             e=lit(float(area.east)))
    lattice = Lattice.of(area, grid)
    if lattice is None:
        return in_box, sql.SQL("false")
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
