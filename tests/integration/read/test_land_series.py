"""A series from an ERA5-Land table: the place is matched on ERA5-Land's 0.1 degree lattice among the
land points the table holds, so a place at sea is read at the nearest land point, and the read says so."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from era5etl.core.datasets import LAND, LAND_GRID
from era5etl.db import connect
from era5etl.read.errors import ReadError
from era5etl.read.points import describe, distance_km
from era5etl.read.series import nearest_point, series

from ...land_reference import decoded
from ..load.test_load_land import NC_HOUR, load_land


def test_a_place_at_sea_is_read_at_the_nearest_land_point(db_url: str, table: str, samples: Path) -> None:
    load_land(db_url, table, samples / NC_HOUR)
    _, lat, lon, cubes = decoded(samples / NC_HOUR)
    sea = ~np.isfinite(np.stack([c[0] for c in cubes.values()])).any(axis=0)
    land_ids = LAND_GRID.location_ids(lat[~sea], lon[~sea])
    land_lat, land_lon = LAND_GRID.coordinates(land_ids)
    with connect(db_url) as conn:
        held = {r[0] for r in conn.execute(f"SELECT DISTINCT location_id FROM {table}").fetchall()}
        assert held == set(land_ids.tolist())
        # Every sea point of the file, and places between points: the brute-force nearest land point.
        # (Those inside the land points' box: the table knows no other area; outside it is refused.)
        inside = (lat >= land_lat.min() - 0.05) & (lon <= land_lon.max() + 0.05) & sea
        places = [(float(a), float(b)) for a, b in zip(lat[inside][::3], lon[inside][::3], strict=True)]
        assert len(places) >= 5
        places += [(13.537, -89.712), (13.95, -89.05)]
        for plat, plon in places:
            point = nearest_point(conn, table, plat, plon, LAND)
            d = distance_km(plat, plon, land_lat, land_lon)
            best = int(np.lexsort((land_ids, d))[0])
            assert point.location_id == land_ids[best], (plat, plon)
            assert point.distance_km == pytest.approx(d[best])
            assert point.location_id in held
        text = describe(point, plat, plon, LAND)
        assert text.startswith(f"nearest land point {point.location_id}: ") and " km from " in text
        s = series(conn, table, point, datetime(2025, 10, 17, tzinfo=UTC), None, ["temperature_2m"], "hour")
    assert len(s.time) == 1
    with connect(db_url) as conn, pytest.raises(ReadError, match="outside the area"):
        nearest_point(conn, table, 12.0, -89.5, LAND)


def test_single_levels_keep_their_lattice_and_words() -> None:
    from era5etl.read.points import Point, coordinates

    lat, lon = coordinates(np.array([1, 1441]))
    np.testing.assert_array_equal(lat, [-90.0, -89.75])
    np.testing.assert_array_equal(lon, [-179.75, -179.75])
    assert describe(Point(7, 1.0, 2.0, 3.04), 1.0, 2.0) == "point 7: 1, 2 (3.0 km from 1, 2)"
