"""A region's weights computed here, one cell at a time with shapely, as the reference the database's
(PostGIS, ``read.region_weights``) and the reads' weighted means are held to."""

from __future__ import annotations

from typing import Any

import numpy as np
import shapely


def shapely_weights(outline: Any, rows: dict[str, np.ndarray], step: float = 0.25) -> dict[int, float]:
    """Each point of ``rows`` (``id``, ``lat``, ``lon`` arrays, a row or more a point), weighed one
    cell at a time: the area of its ``step`` degree cell inside the outline (square degrees) x
    cos(latitude); points whose cell misses the outline left out."""
    half = step / 2
    out = {}
    for point in np.unique(rows["id"]):
        at = np.flatnonzero(rows["id"] == point)[0]
        lat, lon = rows["lat"][at], rows["lon"][at]
        cell = shapely.geometry.box(lon - half, lat - half, lon + half, lat + half)
        overlap = cell.intersection(outline).area
        if overlap > 0:
            out[int(point)] = overlap * np.cos(np.radians(lat))
    return out
