"""A region's cell weights, computed by PostGIS in the database and kept there for a SQL user to join.

``era5_regions`` (sql/009_regions.sql) holds each outline once per grid, keyed by its WKB's sha256;
``era5_region_weights`` its grid points' weights: the area of the point's cell inside the outline
(planar, square degrees, as ``read.regions.cell_weights`` computes it with shapely) x cos(latitude).
A grid is the lattice of the table read: ERA5's 0.25 degree cells, or ERA5-Land's 0.1 degree ones
(ids of its own lattice), each weighed and kept under its own name (:data:`GRIDS`). The outline is
sent as a bound WKB parameter, the grid's cells are built in SQL over the outline's box, and a cell
at the antimeridian gets what lies on either side of it (both halves land on one ``location_id``).
The first read of a region on a grid fills its rows; every later read, from any process, joins them
(``read.region_series``).

A server without PostGIS has neither table; a region read there is refused with the extension's name.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

import numpy as np
import psycopg

from era5etl.core.datasets import ERA5_GRID, LAND_GRID, LatLonGrid
from era5etl.read.errors import ReadError
from era5etl.read.regions import Region

# Each lattice's name in era5_regions.grid (ERA5's was the only one first, and keeps its name).
GRIDS = {ERA5_GRID: "ERA5 0.25 degree", LAND_GRID: "ERA5-Land 0.1 degree"}
GRID = GRIDS[ERA5_GRID]
EXTENSION = "postgis"


def _fill(grid: LatLonGrid) -> str:
    """The statement weighing region %(region_id)s on ``grid``: the cells of the outline's box (lattice
    rows i, columns k of any longitude range, counted from the equator and the prime meridian), those
    touching the outline weighed; a cell wholly inside holds step^2 without computing the intersection.
    A column k is longitude k x step, folded onto (-180, 180] for its location_id (``LatLonGrid``'s
    numbering: row (lat + 90) / step, column (lon - lon_first) / step, from 1)."""
    step, half, n = grid.step, grid.step / 2, grid.lon_count
    rows = round(90 / step)  # the lattice rows from the equator to a pole
    east = round(-grid.lon_first / step)  # the column of longitude 0 counted from lon_first
    return f"""
WITH o AS (SELECT outline AS g FROM era5_regions WHERE region_id = %(region_id)s),
b AS (SELECT g, floor((ST_YMin(g) + {half}) / {step})::int AS i0, ceil((ST_YMax(g) - {half}) / {step})::int AS i1,
             floor((ST_XMin(g) + {half}) / {step})::int AS k0, ceil((ST_XMax(g) - {half}) / {step})::int AS k1
      FROM o),
c AS (SELECT g, i, k, ST_MakeEnvelope(k * {step}::float8 - {half}, i * {step}::float8 - {half},
                                     k * {step}::float8 + {half}, i * {step}::float8 + {half}, 4326) AS cell
      FROM b, generate_series(greatest(b.i0, -{rows}), least(b.i1, {rows})) AS i, generate_series(b.k0, b.k1) AS k),
a AS (SELECT i, k - {n} * ceil((k - {n // 2}) / {n}::float8)::int AS kn,
             CASE WHEN ST_ContainsProperly(g, cell) THEN {step * step}::float8
                  ELSE ST_Area(ST_Intersection(cell, g)) END AS area
      FROM c WHERE ST_Intersects(g, cell))
INSERT INTO era5_region_weights (region_id, location_id, latitude, longitude, weight)
SELECT %(region_id)s, (i + {rows}) * {n} + kn + {east} + 1,
       i * {step}::float8, kn * {step}::float8, sum(area * cos(radians(i * {step}::float8)))
FROM a WHERE area > 0 GROUP BY i, kn
"""


def digest(outline: Any) -> str:
    """The outline's key in ``era5_regions``: the sha256 of its WKB."""
    import shapely

    return hashlib.sha256(shapely.to_wkb(outline, hex=False)).hexdigest()


def _require(conn: Any) -> None:
    """ReadError naming the extension unless PostGIS and the region tables are in this database. A
    database whose schema predates them gets them here when the connection may make them."""
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = %(e)s),"
        " EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = %(e)s),"
        " to_regclass('era5_region_weights') IS NOT NULL", {"e": EXTENSION}).fetchone()
    created, available, tables = row
    if created and tables:
        return
    if not available:
        raise ReadError(f"a region's weights are computed by PostGIS, and this server has no '{EXTENSION}' "
                        "extension: install PostGIS for PostgreSQL 17 (Debian's postgresql-17-postgis-3; the local "
                        "server's image has it), or read a box with --area")
    from era5etl.db import SQL_DIR, render

    try:
        with conn.transaction():
            conn.execute(render(SQL_DIR / "009_regions.sql"))
    except psycopg.errors.InsufficientPrivilege:
        raise ReadError(f"a region's weights are computed by PostGIS, and the '{EXTENSION}' extension is not created "
                        f"in this database: a superuser's CREATE EXTENSION {EXTENSION}, or a load (which applies "
                        "the schema), makes it") from None
    if not conn.autocommit:
        conn.commit()


def weighed(conn: Any, region: Region, grid: LatLonGrid = ERA5_GRID) -> Region:
    """``region`` with its id and its points' weights on ``grid`` from the database, computed there and
    kept the first time the outline is asked for on that grid; ReadError when it covers no cell, or the
    server has no PostGIS."""
    name = GRIDS[grid]
    if region.region_id is not None and region.grid == name:
        return region
    _require(conn)
    import shapely

    key = digest(region.outline)
    with conn.transaction():
        # Two first reads of one outline at once: the second waits, then finds the first's rows.
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (key,))
        found = conn.execute("SELECT region_id FROM era5_regions WHERE grid = %s AND digest = %s",
                             (name, key)).fetchone()
        if found is None:
            found = conn.execute(
                "INSERT INTO era5_regions (grid, name, source, iso, digest, outline)"
                " VALUES (%s, %s, %s, %s, %s, ST_SetSRID(ST_GeomFromWKB(%s), 4326)) RETURNING region_id",
                (name, region.name, region.source, region.iso, key,
                 shapely.to_wkb(region.outline, hex=False))).fetchone()
            conn.execute(_fill(grid), {"region_id": found[0]})
    if not conn.autocommit:
        conn.commit()  # kept for the next read, whatever this one does next
    region_id = int(found[0])
    rows = conn.execute("SELECT location_id, weight, latitude, longitude FROM era5_region_weights"
                        " WHERE region_id = %s ORDER BY location_id", (region_id,)).fetchall()
    if not rows:
        raise ReadError(f"the region {region} covers no cell of the {grid.step:g} degree grid")
    ids, weights, lats, lons = (np.array(c) for c in zip(*rows, strict=True))
    return replace(region, region_id=region_id, grid=name, left_out=0, ids=ids.astype(np.int64),
                   weights=weights.astype(np.float64), latitudes=lats.astype(np.float64),
                   longitudes=lons.astype(np.float64))


def stored(conn: Any) -> list[dict[str, Any]]:
    """The regions the database keeps, oldest first: id, name, ISO code, source, grid, grid points and
    when it was first read. Empty where the server has no region tables (no PostGIS)."""
    found = conn.execute("SELECT to_regclass('era5_regions') IS NOT NULL").fetchone()
    if not found or not found[0]:
        return []
    rows = conn.execute(
        "SELECT r.region_id, r.name, r.iso, r.source, r.grid, count(w.location_id), r.created_at"
        " FROM era5_regions r LEFT JOIN era5_region_weights w USING (region_id)"
        " GROUP BY r.region_id ORDER BY r.region_id").fetchall()
    keys = ("region_id", "name", "iso", "source", "grid", "points", "created_at")
    return [dict(zip(keys, r, strict=True)) for r in rows]


def named(conn: Any, name: str) -> list[dict[str, Any]]:
    """The stored regions (:func:`stored`) called ``name``: every one of that name or ISO code (case
    ignored; several outlines may share a name), or the one of that id; ReadError naming the stored
    ones when none is."""
    wanted = name.strip()
    regions = stored(conn)
    matching = [r for r in regions
                if wanted.casefold() in (str(r["name"]).casefold(), str(r["iso"] or "").casefold())
                or wanted == str(r["region_id"])]
    if not matching:
        names = ", ".join(sorted({str(r["name"]) for r in regions})) or "none"
        raise ReadError(f"no stored region is called {name!r}; the stored ones: {names}")
    return matching


def forget(conn: Any, regions: list[dict[str, Any]]) -> None:
    """The stored ``regions`` (as :func:`named` gives them) deleted with their weights. A later read
    of such an outline weighs it again."""
    with conn.transaction():
        conn.execute("DELETE FROM era5_regions WHERE region_id = ANY(%s)",  # their weights cascade
                     ([r["region_id"] for r in regions],))
    if not conn.autocommit:
        conn.commit()


__all__ = ["EXTENSION", "GRID", "GRIDS", "digest", "forget", "named", "stored", "weighed"]
