"""The atlas's trend map as GeoJSON (RFC 7946): one Feature per grid point with a trend, its cell as
the polygon (the lattice's step around the point, cut at the poles; a cell across the antimeridian a
MultiPolygon of its two halves, as RFC 7946 section 3.1.9 asks), its trend per decade, the half width of
the 95% interval and the complete years in the properties. For a GIS or a web map; the PNG
(``read.atlas_plot``) is for a page."""

from __future__ import annotations

from typing import Any

import numpy as np

from era5etl.read.atlas import point_trends
from era5etl.read.yearly import YearlyField


def _ring(west: float, south: float, east: float, north: float) -> list[list[float]]:
    """A box's exterior ring, counterclockwise (RFC 7946's right-hand rule)."""
    return [[west, south], [east, south], [east, north], [west, north], [west, south]]


def cell_geometry(lat: float, lon: float, step: float) -> dict[str, Any]:
    """The GeoJSON geometry of the cell of ``step`` degrees around (lat, lon), lon in (-180, 180]."""
    half = step / 2
    south, north = max(lat - half, -90.0), min(lat + half, 90.0)
    west, east = lon - half, lon + half
    if east > 180.0:
        return {"type": "MultiPolygon", "coordinates": [[_ring(west, south, 180.0, north)],
                                                        [_ring(-180.0, south, east - 360.0, north)]]}
    if west < -180.0:
        return {"type": "MultiPolygon", "coordinates": [[_ring(-180.0, south, east, north)],
                                                        [_ring(west + 360.0, south, 180.0, north)]]}
    return {"type": "Polygon", "coordinates": [_ring(west, south, east, north)]}


def trend_geojson(field: YearlyField) -> dict[str, Any]:
    """A FeatureCollection of every grid point of ``field`` with a trend (``read.atlas.point_trends``)."""
    trends = point_trends(field)
    lats = np.unique(field.latitude)
    step = float(np.min(np.diff(lats))) if lats.size > 1 else 0.25
    features = []
    for row in np.flatnonzero(np.isfinite(trends.per_decade)):
        lat, lon = float(field.latitude[row]), float(field.longitude[row])
        features.append({"type": "Feature", "geometry": cell_geometry(lat, lon, step), "properties": {
            "location_id": int(field.location_id[row]), "latitude": lat, "longitude": lon,
            "trend_per_decade": float(trends.per_decade[row]), "ci95_half_width": float(trends.half_ci95[row]),
            "complete_years": int(trends.years[row])}})
    return {"type": "FeatureCollection", "features": features, "properties": {
        "table": field.table, "variable": field.variable, "statistic": field.statistic,
        "unit": f"{field.unit}/decade", "years": [int(field.years[0]), int(field.years[-1])], "step": step}}


__all__ = ["cell_geometry", "trend_geojson"]
