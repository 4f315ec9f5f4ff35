"""A download's grid as the table stores it: longitudes in (-180, 180], repeated points refused.

See samples.py for the reference the values are compared with.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from era5etl.core.grid import location_ids
from era5etl.stage import open_download

from .samples import (
    NEW_INSTANT,
    assert_bits_equal,
    refused,
    write_like,
)


def test_longitudes_0_to_360_are_normalised(samples: Path, tmp_path: Path) -> None:
    # The same data with longitudes written 0..360: 351.5.. instead of -8.5..
    shifted = write_like(samples / NEW_INSTANT, tmp_path / "east.nc",
                         lambda ds: ds.assign_coords(longitude=ds["longitude"] + 360.0))
    across = write_like(samples / NEW_INSTANT, tmp_path / "across.nc",
                        lambda ds: ds.assign_coords(longitude=[359.5, 359.75, 0.0, 0.25, 0.5]))
    with open_download([samples / NEW_INSTANT]) as a, open_download([shifted]) as b:
        np.testing.assert_array_equal(b.longitude, a.longitude)
        np.testing.assert_array_equal(b.location_id, a.location_id)
        t2m_a, t2m_b = (next(x.blocks()).values["temperature_2m"] for x in (a, b))
        assert_bits_equal(t2m_b, t2m_a)
    with open_download([across]) as c:
        assert c.longitude[:5].tolist() == [-0.5, -0.25, 0.0, 0.25, 0.5]
        np.testing.assert_array_equal(c.location_id, location_ids(c.latitude, c.longitude))


def test_a_grid_with_repeated_points_isrefused(samples: Path, tmp_path: Path) -> None:
    # 0 and 360 are the same meridian: each of those points would be loaded twice.
    wrapped = write_like(samples / NEW_INSTANT, tmp_path / "wrapped.nc",
                         lambda ds: ds.assign_coords(longitude=[0.0, 90.0, 180.0, 270.0, 360.0]))
    refused(wrapped, "repeat")

