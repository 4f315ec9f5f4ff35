"""A region's cell weights, computed by PostGIS in the database and kept there for a SQL user to join.

``era5_regions`` (sql/009_regions.sql) holds each outline once per grid, keyed by its WKB's sha256;
``era5_region_weights`` its grid points' weights: the area of the point's cell inside the outline
(planar, square degrees, as ``read.regions.cell_weights`` computes it with shapely) x cos(latitude).
A grid is the lattice of the table read: ERA5's 0.25 degree cells, or ERA5-Land's 0.1 degree ones
(ids of its own lattice), each weighed and kept under its own name (:data:`GRIDS`). The outline is
sent as a bound WKB parameter to ``era5_weigh_region``, which runs as the schema's owner (the read
role may only SELECT the tables and call it), keys it by its WKB's sha256, builds the grid's cells in
SQL over the outline's box and weighs them; a cell at the antimeridian gets what lies on either side
of it (both halves land on one ``location_id``).
The first read of a region on a grid fills its rows; every later read, from any process, joins them
(``read.region_series``).

A server without PostGIS has neither table; a region read there is refused with the extension's name.
"""

# Imports inside functions: shapely loads only when a region is weighed.

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

import numpy as np
import psycopg

from era5etl.core.datasets import ERA5_GRID, LAND_GRID, LatLonGrid
from era5etl.core.names import printable
from era5etl.db import SQL_DIR, render
from era5etl.read.errors import ReadError
from era5etl.read.regions import Region

# Each lattice's name in era5_regions.grid (ERA5's was the only one first, and keeps its name).
GRIDS = {ERA5_GRID: "ERA5 0.25 degree", LAND_GRID: "ERA5-Land 0.1 degree"}
GRID = GRIDS[ERA5_GRID]
EXTENSION = "postgis"


def digest(outline: Any) -> str:
    """The outline's key in ``era5_regions``: the sha256 of its WKB."""
    import shapely

    return hashlib.sha256(shapely.to_wkb(outline, hex=False)).hexdigest()


def _require(conn: psycopg.Connection[Any]) -> None:
    """ReadError naming the extension unless PostGIS and the region tables are in this database. A
    database whose schema predates them gets them here when the connection may make them."""
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = %(e)s),"
        " EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = %(e)s),"
        " to_regclass('era5_region_weights') IS NOT NULL", {"e": EXTENSION}).fetchone()
    assert row is not None  # a SELECT of expressions returns one row
    created, available, tables = row
    if created and tables and conn.execute(
            "SELECT to_regprocedure('era5_weigh_region(text, text, text, text, bytea)') IS NOT NULL"
    ).fetchone() == (True,):
        return
    if not available:
        raise ReadError(f"a region's weights are computed by PostGIS, and this server has no '{EXTENSION}' "
                        "extension: install PostGIS for PostgreSQL 17 (Debian's postgresql-17-postgis-3; the local "
                        "server's image has it), or read a box with --area")

    try:
        with conn.transaction():
            conn.execute(render(SQL_DIR / "009_regions.sql"))
    except psycopg.errors.InsufficientPrivilege:
        raise ReadError(f"a region's weights are computed by PostGIS, and the '{EXTENSION}' extension is not created "
                        f"in this database: a superuser's CREATE EXTENSION {EXTENSION}, or a load (which applies "
                        "the schema), makes it") from None
    if not conn.autocommit:
        conn.commit()


def weighed(conn: psycopg.Connection[Any], region: Region, grid: LatLonGrid = ERA5_GRID) -> Region:
    """``region`` with its id and its points' weights on ``grid`` from the database, computed there and
    kept the first time the outline is asked for on that grid; ReadError when it covers no cell, or the
    server has no PostGIS."""
    name = GRIDS[grid]
    if region.region_id is not None and region.grid == name:
        return region
    _require(conn)
    import shapely

    # era5_weigh_region (sql/009_regions.sql) keys, stores and weighs the outline as the schema's owner,
    # so the read role needs no write grant; two first reads of one outline wait for each other there.
    try:
        with conn.transaction():
            found = conn.execute("SELECT era5_weigh_region(%s, %s, %s, %s, %s)",
                                 (name, region.name, region.source, region.iso,
                                  shapely.to_wkb(region.outline, hex=False))).fetchone()
    except psycopg.errors.InvalidParameterValue as exc:
        raise ReadError(f"the region {region.name[:80]!r} cannot be kept: {exc.diag.message_primary}") from None
    if not conn.autocommit:
        conn.commit()  # kept for the next read, whatever this one does next
    assert found is not None  # the function returns one row
    region_id = int(found[0])
    rows = conn.execute("SELECT location_id, weight, latitude, longitude FROM era5_region_weights"
                        " WHERE region_id = %s ORDER BY location_id", (region_id,)).fetchall()
    if not rows:
        raise ReadError(f"the region {region} covers no cell of the {grid.step:g} degree grid")
    ids, weights, lats, lons = (np.array(c) for c in zip(*rows, strict=True))
    return replace(region, region_id=region_id, grid=name, left_out=0, ids=ids.astype(np.int64),
                   weights=weights.astype(np.float64), latitudes=lats.astype(np.float64),
                   longitudes=lons.astype(np.float64))


def weighed_all(conn: psycopg.Connection[Any], regions: list[Region], grid: LatLonGrid = ERA5_GRID
                ) -> list[Region | None]:
    """:func:`weighed` of many regions in two statements (the atlas's countries): each as weighed
    returns it, or None where it covers no cell of ``grid``."""
    if not regions:
        return []
    name = GRIDS[grid]
    _require(conn)
    import shapely

    try:
        with conn.transaction():
            found = conn.execute(
                "SELECT era5_weigh_region(%s, n, s, i, w) FROM unnest(%s::text[], %s::text[], %s::text[], %s::bytea[])"
                " WITH ORDINALITY AS r(n, s, i, w, k) ORDER BY k",
                (name, [r.name for r in regions], [r.source for r in regions], [r.iso for r in regions],
                 [shapely.to_wkb(r.outline, hex=False) for r in regions])).fetchall()
    except psycopg.errors.InvalidParameterValue as exc:
        raise ReadError(f"a region cannot be kept: {exc.diag.message_primary}") from None
    if not conn.autocommit:
        conn.commit()
    ids = [int(f[0]) for f in found]
    rows = conn.execute("SELECT region_id, location_id, weight, latitude, longitude FROM era5_region_weights"
                        " WHERE region_id = ANY(%s) ORDER BY region_id, location_id", (ids,)).fetchall()
    table = np.array(rows, dtype=np.float64).reshape(-1, 5)
    keys = table[:, 0].astype(np.int64)
    out: list[Region | None] = []
    for region, region_id in zip(regions, ids, strict=True):
        lo, hi = np.searchsorted(keys, region_id, "left"), np.searchsorted(keys, region_id, "right")
        part = table[lo:hi]
        out.append(None if hi == lo else replace(
            region, region_id=region_id, grid=name, left_out=0, ids=part[:, 1].astype(np.int64),
            weights=part[:, 2].copy(), latitudes=part[:, 3].copy(), longitudes=part[:, 4].copy()))
    return out


def stored(conn: psycopg.Connection[Any]) -> list[dict[str, Any]]:
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


def named(conn: psycopg.Connection[Any], name: str) -> list[dict[str, Any]]:
    """The stored regions (:func:`stored`) called ``name``: every one of that name or ISO code (case
    ignored; several outlines may share a name), or the one of that id; ReadError naming the stored
    ones when none is."""
    wanted = name.strip()
    if not wanted:  # "" would match every region without an ISO code
        raise ReadError("a stored region's name, ISO code or id is needed, not an empty name (`regions list`)")
    regions = stored(conn)
    matching = [r for r in regions
                if wanted.casefold() in (str(r["name"]).casefold(), str(r["iso"] or "").casefold())
                or wanted == str(r["region_id"])]
    if not matching:
        names = ", ".join(sorted({printable(r["name"]) for r in regions})) or "none"
        raise ReadError(f"no stored region is called '{printable(name)}'; the stored ones: {names}")
    return matching


def forget(conn: psycopg.Connection[Any], regions: list[dict[str, Any]]) -> None:
    """The stored ``regions`` (as :func:`named` gives them) deleted with their weights. A later read
    of such an outline weighs it again."""
    with conn.transaction():
        conn.execute("DELETE FROM era5_regions WHERE region_id = ANY(%s)",  # their weights cascade
                     ([r["region_id"] for r in regions],))
    if not conn.autocommit:
        conn.commit()


__all__ = ["EXTENSION", "GRID", "GRIDS", "digest", "forget", "named", "stored", "weighed", "weighed_all"]
