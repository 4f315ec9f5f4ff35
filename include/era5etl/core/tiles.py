"""Tiles: the columnstore's unit of place (docs/table.md, "Where the rows live").

A tile is ``TILE_POINTS`` grid points with consecutive ids: a strip of neighbours along a latitude
row of the lattice (32 points are 8 degrees of ERA5's 0.25 lattice, 3.2 of ERA5-Land's 0.1). A table
laid out in tiles (``db.layout``; ``db.new_layout`` says which tables are) and its rollups are
segmented by ``tile``, a key column the loader fills from the id,
so a compressed batch holds the rows of one tile and a place decodes its own tile's batches instead
of a batch of some other hour's neighbours for every hour it asks for. Because a tile's ids are
consecutive, each batch's location_id bounds are the tile's, and the server finds a place's batches
by its ``tile`` through the compressed chunk's index: ``tile = era5_tile(location_id)`` in SQL
(``sql/007_tiles.sql``, the same function as :func:`tile_of`).
"""

from __future__ import annotations

from typing import Any, overload

import numpy as np
import numpy.typing as npt

TILE_POINTS = 32
TILE_COLUMN = "tile"


@overload
def tile_of(location_id: int) -> int: ...
@overload
def tile_of(location_id: npt.NDArray[Any]) -> npt.NDArray[np.int32]: ...
def tile_of(location_id: npt.NDArray[Any] | int) -> npt.NDArray[np.int32] | int:
    """The tile of each id (ids start at 1), as the SQL function ``era5_tile`` computes it."""
    if isinstance(location_id, (int, np.integer)):
        return (int(location_id) - 1) // TILE_POINTS
    return ((np.asarray(location_id, dtype=np.int64) - 1) // TILE_POINTS).astype(np.int32)


def tile_runs(tiles: npt.NDArray[np.int32]) -> npt.NDArray[np.intp]:
    """Where each run of one tile begins in ``tiles`` (points in id order: a tile's points are one run),
    with ``len(tiles)`` appended."""
    if len(tiles) == 0:
        return np.zeros(1, dtype=np.intp)
    starts = np.flatnonzero(np.concatenate(([True], tiles[1:] != tiles[:-1])))
    return np.append(starts, len(tiles)).astype(np.intp)


def tile_groups(tiles: npt.NDArray[np.int32], hours: int, rows: int) -> list[slice]:
    """Slices of the points (in id order) cut at tile boundaries, each of at most ``rows`` rows over
    ``hours`` hours, or one tile where a tile alone holds more."""
    bounds = tile_runs(tiles)
    out: list[slice] = []
    a = 0
    for i in range(1, len(bounds)):
        b = int(bounds[i])
        if b - a > 0 and (b - a) * hours > rows and int(bounds[i - 1]) > a:
            out.append(slice(a, int(bounds[i - 1])))
            a = int(bounds[i - 1])
    if a < len(tiles):
        out.append(slice(a, len(tiles)))
    return out
