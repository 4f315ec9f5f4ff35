"""A grid point's coordinates from its location_id: the inverse of core.grid.location_ids."""

from __future__ import annotations

import numpy as np

from era5etl.core.grid import location_ids
from era5etl.read.yearly import coordinates


def test_coordinates_invert_location_ids() -> None:
    lat, lon = (a.ravel() for a in np.meshgrid(np.arange(-90, 90.01, 0.25), np.arange(-179.75, 180.01, 0.25),
                                               indexing="ij"))
    got_lat, got_lon = coordinates(location_ids(lat, lon))
    assert np.array_equal(got_lat, lat) and np.array_equal(got_lon, lon)
