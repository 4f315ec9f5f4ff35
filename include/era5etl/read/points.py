"""Which grid point a place is read at: the nearest one the table holds, and the area it holds.

Grid points are found by lattice arithmetic on location ids (``core.grid``), then checked against what
the table holds: the monthly rollup (one row per point and month, indexed by location_id) answers
"which of these ids exist" with an index probe each, so a place is matched among a global table's
million points in milliseconds. Candidates grow in squares around the place until one exists (a
table on a coarser grid, or a sparse one, has gaps), then every point of the spherical cap that
could be nearer is probed too, so the choice is the nearest by great-circle distance. A table whose
rollups hold nothing yet (loaded by ``load-file``) is matched among the points of its latest hour.

The lattice is the dataset's (``nearest_point(..., dataset=)``): ERA5's 0.25 degree one by default,
ERA5-Land's 0.1 degree one for a land table. ERA5-Land has rows at land points only, so a place at sea
or on a coast is read at the nearest land point, which the search finds like any other gap;
:func:`describe` says "land point" and how far it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from era5etl.core.datasets import SINGLE_LEVELS, Dataset, LatLonGrid
from era5etl.core.grid import GLOBAL_STEP, normalize_longitude
from era5etl.core.tiles import tile_of
from era5etl.db import table_ident
from era5etl.db.extents import recorded, scanned
from era5etl.db.facts import kept
from era5etl.db.layout import in_tiles
from era5etl.db.registry import table_dataset
from era5etl.db.tables import rollup_of
from era5etl.read.errors import ReadError
from era5etl.read.hour import hour_columns

EARTH_RADIUS_KM = 6371.0088  # the mean radius (IUGG)
# A place within half a native cell of the loaded edge is in that edge point's cell: inside the area.
MARGIN = GLOBAL_STEP / 2


@dataclass(frozen=True)
class Point:
    """A grid point of the table, and how far it is from the place asked for."""

    location_id: int
    latitude: float
    longitude: float
    distance_km: float


@dataclass(frozen=True)
class Bounds:
    """The loaded grid points' box, degrees (west and east in the table's (-180, 180])."""

    north: float
    west: float
    south: float
    east: float
    margin: float = MARGIN  # half the lattice's step

    def __str__(self) -> str:
        return f"{self.north:g}/{self.west:g}/{self.south:g}/{self.east:g}"

    def holds(self, lat: float, lon: float) -> bool:
        """Whether the place is inside the box, or within MARGIN of it (across 180 too)."""
        m = self.margin
        if not self.south - m <= lat <= self.north + m:
            return False
        return any(self.west - m <= lon + turn <= self.east + m for turn in (-360.0, 0.0, 360.0))


def coordinates(ids: np.ndarray, grid: LatLonGrid = SINGLE_LEVELS.grid) -> tuple[np.ndarray, np.ndarray]:
    """(latitude, longitude) of location ids: the inverse of ``core.grid.location_ids`` (of ``grid``'s)."""
    return grid.coordinates(ids)


def describe(point: Point, lat: float, lon: float, dataset: Dataset = SINGLE_LEVELS) -> str:
    """How a read names the point it picked: "point 123: ..." (a land point for ERA5-Land, whose sea
    points are not rows: a place at sea is read at the nearest land point, and this says how far)."""
    kind = "nearest land point" if dataset.land_only else "point"
    return (f"{kind} {point.location_id}: {point.latitude:g}, {point.longitude:g} ({point.distance_km:.1f} km "
            f"from {lat:g}, {lon:g})")


def distance_km(lat: float, lon: float, lats: np.ndarray, lons: np.ndarray) -> np.ndarray:
    """Great-circle distance from (lat, lon) to each point (haversine, on the mean radius)."""
    p1, p2 = math.radians(lat), np.radians(lats)
    h = np.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * np.cos(p2) * np.sin(np.radians(lons - lon) / 2) ** 2
    return np.asarray(2 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0))))


@kept
def require_table(conn: psycopg.Connection[Any], table: str) -> None:
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table_ident(table).as_string(conn),)).fetchone()
    if row != (True,):
        raise ReadError(f"table {table!r} does not exist")


def _place(lat: float, lon: float) -> tuple[float, float]:
    if not (math.isfinite(lat) and math.isfinite(lon)):
        raise ReadError(f"the place {lat}, {lon} is not a pair of finite numbers")
    if not -90 <= lat <= 90:
        raise ReadError(f"latitude {lat:g} is outside -90..90")
    return float(lat), float(normalize_longitude(lon))


def _nearest(lat: float, lon: float, ids: np.ndarray, grid: LatLonGrid) -> Point:
    lats, lons = grid.coordinates(ids)
    d = distance_km(lat, lon, lats, lons)
    best = int(np.lexsort((ids, d))[0])  # the nearest; of equals, the lowest id
    return Point(int(ids[best]), float(lats[best]), float(lons[best]), float(d[best]))


def _bounds_of(ids: np.ndarray, grid: LatLonGrid) -> Bounds:
    lats, lons = grid.coordinates(ids)
    return Bounds(float(lats.max()), float(lons.min()), float(lats.min()), float(lons.max()), grid.step / 2)


def _outside(table: str, lat: float, lon: float, bounds: Bounds) -> ReadError:
    return ReadError(f"{lat:g}, {lon:g} is outside the area {table} holds: {bounds} (N/W/S/E, the loaded grid "
                     "points' box)")


@kept
def nearest_point(conn: psycopg.Connection[Any], table: str, lat: float, lon: float,
                  dataset: Dataset | None = None) -> Point:
    """The grid point ``table`` holds nearest to (lat, lon), on ``dataset``'s lattice (by default the
    one the ledger records for the table, :func:`table_dataset`; for ERA5-Land the nearest land
    point); ReadError if the place is outside the loaded area (the message gives the area's bounds)."""
    if dataset is None:
        dataset = table_dataset(conn, table)
    grid = dataset.grid
    lat, lon = _place(lat, lon)
    require_table(conn, table)
    monthly = rollup_of(conn, table, "month")
    found = _held_bounds(conn, table, monthly, grid) if monthly else None
    if found is None:
        ids = _latest_hour_ids(conn, table)
        bounds = _bounds_of(ids, grid)
        if not bounds.holds(lat, lon):
            raise _outside(table, lat, lon, bounds)
        return _nearest(lat, lon, ids, grid)
    assert monthly is not None
    bounds = found
    if not bounds.holds(lat, lon):
        raise _outside(table, lat, lon, bounds)
    return _Search(conn, monthly, bounds, grid).nearest(lat, lon)


def loaded_bounds(conn: psycopg.Connection[Any], table: str, dataset: Dataset = SINGLE_LEVELS) -> Bounds:
    """The loaded grid points' box: the extent the loader records, else from the monthly rollup's
    lowest and highest ids and its longitude range, or from the latest hour's points when the rollups
    hold nothing yet (``dataset``: whose lattice numbers them)."""
    require_table(conn, table)
    monthly = rollup_of(conn, table, "month")
    found = _held_bounds(conn, table, monthly, dataset.grid) if monthly else None
    if found is None:
        return _bounds_of(_latest_hour_ids(conn, table), dataset.grid)
    return found


def _held_bounds(conn: psycopg.Connection[Any], table: str, monthly: str, grid: LatLonGrid) -> Bounds | None:
    """The box of the points ``table`` holds (None when its monthly rollup holds none): north and
    south from their highest and lowest ids, west and east from the ids' longitude columns. Read from
    the extent the loader records (``db.extents``), else scanned from the monthly rollup (a rollup
    keeps no longitude; its id fixes it)."""
    empty = conn.execute(sql.SQL("SELECT NOT EXISTS (SELECT FROM {})").format(table_ident(monthly))).fetchone()
    if empty == (True,):
        return None
    extent = recorded(conn, table) or scanned(conn, table, grid)
    if extent is None:
        return None
    lats, _ = grid.coordinates(np.array([extent.first_id, extent.last_id]))
    return Bounds(float(lats[1]), grid.longitude_of_column(extent.first_column), float(lats[0]),
                  grid.longitude_of_column(extent.last_column), grid.step / 2)


def _latest_hour_ids(conn: psycopg.Connection[Any], table: str) -> np.ndarray:
    last = conn.execute(sql.SQL("SELECT max(time) FROM {}").format(table_ident(table))).fetchone()
    if last is None or last[0] is None:
        raise ReadError(f"{table} holds no rows yet")
    ids = hour_columns(conn, table, last[0], ["location_id"])["location_id"].astype(np.int64)
    if ids.size == 0:
        raise ReadError(f"{table} holds no grid point with a location_id (its grid is off the dataset's lattice)")
    return np.unique(ids)


def _index(degrees: float, origin: float, step: float = GLOBAL_STEP) -> float:
    return (degrees - origin) / step


def cap_box(lat: float, lon: float, km: float, grid: LatLonGrid = SINGLE_LEVELS.grid) -> tuple[int, int, int, int]:
    """Lattice rows and columns (first, last) of the box around the spherical cap of radius ``km``
    about (lat, lon), a cell wider each side; every column when the cap holds a pole."""
    step, west = grid.step, grid.lon_first
    delta = math.degrees(km / EARTH_RADIUS_KM)
    south, north = lat - delta, lat + delta
    if south <= -90 or north >= 90:
        return (math.floor(_index(max(south, -90), -90, step)) - 1, math.ceil(_index(min(north, 90), -90, step)) + 1,
                0, grid.lon_count - 1)
    wide = math.degrees(math.asin(min(1.0, math.sin(math.radians(delta)) / math.cos(math.radians(lat)))))
    return (math.floor(_index(south, -90, step)) - 1, math.ceil(_index(north, -90, step)) + 1,
            math.floor(_index(lon - wide, west, step)) - 1, math.ceil(_index(lon + wide, west, step)) + 1)


class _Search:
    """Grid points around a place, probed against a rollup holding one row per point and bucket."""

    def __init__(self, conn: psycopg.Connection[Any], relation: str, bounds: Bounds,
                 grid: LatLonGrid = SINGLE_LEVELS.grid) -> None:
        self.conn = conn
        self.grid = grid
        # One scan for a probe's ids: their range lets the columnstore skip every batch of other
        # points by its min/max metadata (a global month's rollup: 4 ms, where a lookup an id took
        # 3 s, each decompressing the chunk: docs/benchmarks.md), and in tiles (db.layout) their
        # tiles pick the segments.
        self.tiled = in_tiles(conn, relation)
        tile = sql.SQL(" AND tile = ANY(%(tiles)s)") if self.tiled else sql.SQL("")
        self.probe_sql = sql.SQL("SELECT DISTINCT location_id FROM {} WHERE location_id BETWEEN %(first)s AND"
                                 " %(last)s AND location_id = ANY(%(ids)s){}").format(table_ident(relation), tile)
        step, west = grid.step, grid.lon_first
        self.rows = (round(_index(bounds.south, -90, step)), round(_index(bounds.north, -90, step)))
        self.columns = (round(_index(bounds.west, west, step)), round(_index(bounds.east, west, step)))

    def box(self, row0: int, row1: int, col0: int, col1: int) -> np.ndarray:
        """Ids of the lattice box (columns wrap around 180), clipped to the loaded bounds."""
        n_lon = self.grid.lon_count
        rows = np.arange(max(row0, self.rows[0], 0), min(row1, self.rows[1], self.grid.lat_count - 1) + 1)
        cols = (np.arange(n_lon) if col1 - col0 + 1 >= n_lon else np.arange(col0, col1 + 1) % n_lon)
        cols = cols[(cols >= self.columns[0]) & (cols <= self.columns[1])]
        return np.asarray((rows[:, None] * n_lon + cols[None, :] + 1).ravel(), dtype=np.int64)

    def existing(self, ids: np.ndarray) -> np.ndarray:
        if ids.size == 0:
            return ids
        params: dict[str, Any] = {"first": int(ids.min()), "last": int(ids.max()), "ids": ids.tolist()}
        if self.tiled:
            params["tiles"] = np.unique(tile_of(ids)).tolist()
        found = self.conn.execute(self.probe_sql, params).fetchall()
        return np.array(sorted(int(r[0]) for r in found), dtype=np.int64)

    def nearest(self, lat: float, lon: float) -> Point:
        step, west = self.grid.step, self.grid.lon_first
        row, col = round(_index(lat, -90, step)), round(_index(lon, west, step))
        reach = 1
        while True:
            found = self.existing(self.box(row - reach, row + reach, col - reach, col + reach))
            if found.size or reach >= self.grid.lon_count:
                break
            reach *= 2
        if found.size == 0:
            raise ReadError(f"no grid point found near {lat:g}, {lon:g}")
        # A point nearer than the first found lies in the cap of that radius, which a square of
        # cells does not always hold (longitude cells narrow away from the equator): probe it all.
        nearer = self.existing(self.box(*cap_box(lat, lon, _nearest(lat, lon, found, self.grid).distance_km,
                                                  self.grid)))
        return _nearest(lat, lon, np.union1d(found, nearer), self.grid)
