"""A download's grid points as the table stores them, whatever the file format: latitude-major
points, longitudes in (-180, 180], and each point's ``location_id`` on the dataset's global lattice
(ERA5's 0.25 degree one unless told another, e.g. ERA5-Land's 0.1 degree ``LAND_GRID``; None for a
grid off it). Shared by the NetCDF and the GRIB stager, so both load a grid alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from era5etl.core.errors import InputError
from era5etl.core.grid import location_ids, normalize_longitude
from era5etl.stage.block import F32
from era5etl.stage.errors import StageError

if TYPE_CHECKING:
    from era5etl.core.datasets import LatLonGrid


@dataclass(frozen=True)
class Points:
    latitude: F32  # (P,) latitude-major, in file order
    longitude: F32  # (P,) in (-180, 180]
    location_id: npt.NDArray[np.int32] | None  # None: off the 0.25 degree lattice, stored NULL

    level: npt.NDArray[np.int16] | None = None  # (P,) hPa when the points run over (level, point) pairs

    @property
    def count(self) -> int:
        return int(self.latitude.size)

    def on_levels(self, levels: tuple[int, ...]) -> Points:
        """The (level, point) pairs of these points on ``levels``, level-major (a block's P axis for a
        download on pressure levels); the points themselves when there are no levels."""
        if not levels:
            return self
        n = len(levels)
        return Points(readonly(np.tile(self.latitude, n)), readonly(np.tile(self.longitude, n)),
                      None if self.location_id is None else readonly(np.tile(self.location_id, n)),
                      readonly(np.repeat(np.asarray(levels, dtype=np.int16), self.count)))


def grid_points(lat: npt.NDArray[Any], lon: npt.NDArray[Any], label: str, grid: LatLonGrid | None = None
                ) -> Points:
    """The points of the regular grid with axes ``lat`` (rows) and ``lon`` (columns, any convention);
    ``grid``: the lattice that numbers them (None: ERA5's 0.25 degree one, ``core.grid.location_ids``)."""
    glat, glon = np.meshgrid(lat, normalize_longitude(np.asarray(lon, dtype=np.float64)), indexing="ij")
    ids: npt.NDArray[np.int32] | None
    try:
        ids = location_ids(glat.ravel(), glon.ravel()) if grid is None else grid.location_ids(glat.ravel(),
                                                                                             glon.ravel())
    except InputError:
        # The CDS interpolates to any grid asked for; such points are loaded with their true
        # latitude and longitude but no id, rather than being given a neighbour's.
        ids = None
    else:
        # id - 1 = lat_index * lon_count + lon_index with lon_index < lon_count: two points share an id exactly
        # when a latitude or a longitude repeats, so checking the axes avoids a unique() over all points.
        axes = ids.reshape(glat.shape)
        if np.unique(axes[:, 0]).size != axes.shape[0] or np.unique(axes[0, :]).size != axes.shape[1]:
            raise StageError(f"{label}: some grid points repeat (after mapping longitude to (-180, 180]); "
                             "each point would be loaded twice")
    return Points(readonly(glat.ravel().astype(np.float32)), readonly(glon.ravel().astype(np.float32)),
                  None if ids is None else readonly(ids))


def readonly(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
    # Blocks share these arrays; a consumer editing one in place would corrupt every later block.
    a.flags.writeable = False
    return a


