"""A region's cell weights, computed by PostGIS in the database and kept there for a SQL user to join.

``era5_regions`` (sql/009_regions.sql) holds each outline once per grid, keyed by its WKB's sha256;
``era5_region_weights`` its grid points' weights: the area of the point's 0.25 degree cell inside the
outline (planar, square degrees, as ``read.regions.cell_weights`` computes it with shapely) x
cos(latitude). The outline is sent as a bound WKB parameter, the grid's cells are built in SQL over
the outline's box, and a cell at the antimeridian gets what lies on either side of it (both halves
land on one ``location_id``). The first read of a region fills its rows; every later read, from any
process, joins them (``read.region_series``).

A server without PostGIS has neither table; a region read there is refused with the extension's name.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

import numpy as np
import psycopg

from era5etl.core.datasets import ERA5_GRID
from era5etl.read.errors import ReadError
from era5etl.read.regions import HALF, STEP, Region

GRID = "ERA5 0.25 degree"
EXTENSION = "postgis"

# The cells of the outline's box (lattice rows i, columns k of any longitude range), those touching
# the outline weighed: a cell wholly inside holds STEP^2 without computing the intersection. A
# column k is longitude k x STEP, folded onto (-180, 180] for its location_id (ERA5_GRID's numbering:
# row (lat + 90) / STEP, column (lon + 179.75) / STEP, from 1).
_FILL = f"""
WITH o AS (SELECT outline AS g FROM era5_regions WHERE region_id = %(region_id)s),
b AS (SELECT g, floor((ST_YMin(g) + {HALF}) / {STEP})::int AS i0, ceil((ST_YMax(g) - {HALF}) / {STEP})::int AS i1,
             floor((ST_XMin(g) + {HALF}) / {STEP})::int AS k0, ceil((ST_XMax(g) - {HALF}) / {STEP})::int AS k1
      FROM o),
c AS (SELECT g, i, k, ST_MakeEnvelope(k * {STEP}::float8 - {HALF}, i * {STEP}::float8 - {HALF},
                                     k * {STEP}::float8 + {HALF}, i * {STEP}::float8 + {HALF}, 4326) AS cell
      FROM b, generate_series(greatest(b.i0, -360), least(b.i1, 360)) AS i, generate_series(b.k0, b.k1) AS k),
a AS (SELECT i, k - {ERA5_GRID.lon_count} * ceil((k - {ERA5_GRID.lon_count // 2}) / {ERA5_GRID.lon_count}::float8)::int
             AS kn,
             CASE WHEN ST_ContainsProperly(g, cell) THEN {STEP * STEP}::float8
                  ELSE ST_Area(ST_Intersection(cell, g)) END AS area
      FROM c WHERE ST_Intersects(g, cell))
INSERT INTO era5_region_weights (region_id, location_id, latitude, longitude, weight)
SELECT %(region_id)s, (i + 360) * {ERA5_GRID.lon_count} + kn + {ERA5_GRID.lon_count // 2 - 1} + 1,
       i * {STEP}::float8, kn * {STEP}::float8, sum(area * cos(radians(i * {STEP}::float8)))
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


def weighed(conn: Any, region: Region) -> Region:
    """``region`` with its id and its points' weights from the database, computed there and kept the
    first time the outline is asked for; ReadError when it covers no cell, or the server has no PostGIS."""
    if region.region_id is not None:
        return region
    _require(conn)
    import shapely

    key = digest(region.outline)
    with conn.transaction():
        # Two first reads of one outline at once: the second waits, then finds the first's rows.
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (key,))
        found = conn.execute("SELECT region_id FROM era5_regions WHERE grid = %s AND digest = %s",
                             (GRID, key)).fetchone()
        if found is None:
            found = conn.execute(
                "INSERT INTO era5_regions (grid, name, source, iso, digest, outline)"
                " VALUES (%s, %s, %s, %s, %s, ST_SetSRID(ST_GeomFromWKB(%s), 4326)) RETURNING region_id",
                (GRID, region.name, region.source, region.iso, key,
                 shapely.to_wkb(region.outline, hex=False))).fetchone()
            conn.execute(_FILL, {"region_id": found[0]})
    if not conn.autocommit:
        conn.commit()  # kept for the next read, whatever this one does next
    region_id = int(found[0])
    rows = conn.execute("SELECT location_id, weight, latitude, longitude FROM era5_region_weights"
                        " WHERE region_id = %s ORDER BY location_id", (region_id,)).fetchall()
    if not rows:
        raise ReadError(f"the region {region} covers no cell of the 0.25 degree grid")
    ids, weights, lats, lons = (np.array(c) for c in zip(*rows, strict=True))
    return replace(region, region_id=region_id, ids=ids.astype(np.int64), weights=weights.astype(np.float64),
                   latitudes=lats.astype(np.float64), longitudes=lons.astype(np.float64))


__all__ = ["EXTENSION", "GRID", "digest", "weighed"]
