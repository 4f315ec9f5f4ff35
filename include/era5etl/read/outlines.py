"""The outlines every map draws under its cells: Natural Earth's coastlines and country borders at
1:50m, from the ``world-atlas`` npm package the countries of ``read.regions`` come from (pinned in
package.json, installed into ``node_modules`` by ``scripts/setup.sh``, copied into the Airflow image by
the Dockerfile; nothing is downloaded at run time).

* The coastlines are every arc of ``land-50m.json``.
* The borders are the arcs of ``countries-50m.json`` that two countries share (TopoJSON stores a shared
  edge once, and each country's rings name it); an arc only one country names is its coast.

Both are cut where they cross the antimeridian (a step from 180 to -180 would draw a line across the
map) and without Antarctica's closing edge along the South Pole. :func:`outlines_in` clips them to a
map's box and thins them to what the map can show (shapely), for the PNGs (``read.plots``,
``read.atlas_plot``) and the Data view's SVG map (``GET /era5/outlines``) alike.
"""

# Imports inside functions: shapely loads only when outlines are clipped to a box.

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from era5etl.core.paths import PROJECT_ROOT
from era5etl.read.errors import ReadError

_WORLD_ATLAS = Path("node_modules") / "world-atlas"
# The checkout's (scripts/setup.sh), else where the Dockerfile puts it in the Airflow image, whose
# installed package has no checkout around it (core.paths).
WORLD_ATLAS_DIR = next((root / _WORLD_ATLAS for root in (PROJECT_ROOT, Path("/opt/era5etl"))
                        if (root / _WORLD_ATLAS / "countries-50m.json").is_file()), PROJECT_ROOT / _WORLD_ATLAS)
COUNTRIES_FILE = WORLD_ATLAS_DIR / "countries-50m.json"
LAND_FILE = WORLD_ATLAS_DIR / "land-50m.json"
# How finely a map's outlines are kept: a map's larger side in degrees over this (about a pixel of a
# 1,100-pixel map).
DETAIL = 1200


def read_topology(path: Path) -> dict[str, Any]:
    """A world-atlas TopoJSON file, or a ReadError saying how to install it."""
    if not path.is_file():
        raise ReadError(f"Natural Earth's outlines are not installed ({path}): run scripts/setup.sh (npm ci "
                        "installs world-atlas)")
    topology: dict[str, Any] = json.loads(path.read_text())
    return topology


def decode_arc(topo: dict[str, Any], i: int) -> np.ndarray:
    """Arc ``i`` in degrees (a negative index ~i: arc i reversed): TopoJSON's quantized arcs are
    delta-encoded positions, scaled and translated."""
    t = topo["transform"]
    points = np.cumsum(np.array(topo["arcs"][i if i >= 0 else ~i], dtype=np.float64), axis=0)
    points = points * np.array(t["scale"]) + np.array(t["translate"])
    return np.asarray(points if i >= 0 else points[::-1])


def _cut(arc: np.ndarray) -> list[np.ndarray]:
    """An arc's pieces between its antimeridian crossings, without the South Pole's closing edge."""
    cuts = np.flatnonzero(np.abs(np.diff(arc[:, 0])) > 180) + 1
    return [part for part in np.split(arc, cuts) if len(part) > 1 and part[:, 1].max() > -89.99]


@lru_cache(maxsize=1)
def coastlines() -> tuple[np.ndarray, ...]:
    """Every coastline as an (n, 2) array of (longitude, latitude) in degrees."""
    topo = read_topology(LAND_FILE)
    return tuple(part for i in range(len(topo["arcs"])) for part in _cut(decode_arc(topo, i)))


def _arc_indexes(arcs: Any) -> Iterator[int]:
    """Every arc index a geometry's nested ``arcs`` names (a reversed one, ~i, as i)."""
    for item in arcs:
        if isinstance(item, list):
            yield from _arc_indexes(item)
        else:
            yield item if item >= 0 else ~item


@lru_cache(maxsize=1)
def borders() -> tuple[np.ndarray, ...]:
    """Every land border between two countries as an (n, 2) array of (longitude, latitude) in degrees."""
    topo = read_topology(COUNTRIES_FILE)
    named = Counter(i for g in topo["objects"]["countries"]["geometries"] for i in _arc_indexes(g.get("arcs", [])))
    return tuple(part for i, count in sorted(named.items()) if count > 1 for part in _cut(decode_arc(topo, i)))


def _clipped(lines: tuple[np.ndarray, ...], box: tuple[float, float, float, float]) -> list[np.ndarray]:
    """``lines`` inside ``box`` (west, south, east, north), thinned to the box's detail."""
    import shapely

    west, south, east, north = box
    tolerance = max(east - west, north - south) / DETAIL
    inside = [line for line in lines if line[:, 0].max() >= west and line[:, 0].min() <= east
              and line[:, 1].max() >= south and line[:, 1].min() <= north]
    if not inside:
        return []
    clipped = shapely.clip_by_rect(shapely.MultiLineString(inside), west, south, east, north)
    thinned = shapely.simplify(clipped, tolerance)
    parts = shapely.get_parts(shapely.line_merge(thinned) if not thinned.is_empty else thinned)
    return [np.asarray(shapely.get_coordinates(p)) for p in parts if not p.is_empty]


def outlines_in(west: float, south: float, east: float, north: float) -> dict[str, list[np.ndarray]]:
    """The coastlines (``coast``) and borders (``borders``) inside the box, each line an (n, 2) array of
    (longitude, latitude)."""
    if not (west < east and south < north):
        raise ReadError(f"outlines of the box west {west:g}, south {south:g}, east {east:g}, north {north:g}: "
                        "west must be less than east and south less than north")
    box = (west, south, east, north)
    return {"coast": _clipped(coastlines(), box), "borders": _clipped(borders(), box)}


def outlines_json(west: float, south: float, east: float, north: float) -> dict[str, Any]:
    """:func:`outlines_in` as JSON: ``coast`` and ``borders``, lists of lines of [longitude, latitude]
    rounded to 0.01 degrees (a kilometre), ``source``."""
    lines = outlines_in(west, south, east, north)
    return {"source": SOURCE, **{kind: [np.round(line, 2).tolist() for line in found] for kind, found in lines.items()}}


SOURCE = "Natural Earth 4.1.0 at 1:50m, public domain, from npm world-atlas 2.0.2"

__all__ = ["COUNTRIES_FILE", "LAND_FILE", "SOURCE", "borders", "coastlines", "decode_arc", "outlines_in",
           "outlines_json", "read_topology"]
