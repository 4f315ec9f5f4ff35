"""Grid points by lattice arithmetic: ids back to coordinates, distances, the loaded box and the
search box that must hold every point nearer than the first one found."""

from __future__ import annotations

import math

import numpy as np

from era5etl.core.grid import GLOBAL_LON_COUNT, location_ids
from era5etl.read.points import EARTH_RADIUS_KM, Bounds, cap_box, coordinates, distance_km


def test_coordinates_invert_location_ids() -> None:
    rng = np.random.default_rng(2)
    lat = rng.integers(0, 721, 5_000) * 0.25 - 90
    lon = rng.integers(0, 1440, 5_000) * 0.25 - 179.75
    back_lat, back_lon = coordinates(location_ids(lat, lon))
    assert np.array_equal(back_lat, lat) and np.array_equal(back_lon, lon)
    assert coordinates(np.array([1]))[0][0] == -90 and coordinates(np.array([1]))[1][0] == -179.75
    assert coordinates(np.array([GLOBAL_LON_COUNT]))[1][0] == 180.0


def test_distances_on_the_sphere() -> None:
    quarter = distance_km(0.0, 0.0, np.array([0.0, 90.0, 0.0]), np.array([90.0, 0.0, -180.0]))
    assert np.allclose(quarter, [math.pi / 2 * EARTH_RADIUS_KM, math.pi / 2 * EARTH_RADIUS_KM,
                                 math.pi * EARTH_RADIUS_KM])
    # Across the antimeridian: 179.9 and -179.9 are 0.2 degrees of longitude apart.
    assert distance_km(0.0, 179.9, np.array([0.0]), np.array([-179.9]))[0] < 23
    assert distance_km(45.0, 7.0, np.array([45.0]), np.array([7.0]))[0] == 0


def test_the_loaded_box_takes_half_a_cell_and_wraps_at_180() -> None:
    box = Bounds(north=46, west=7, south=45, east=8)
    assert str(box) == "46/7/45/8"
    assert box.holds(45.5, 7.5) and box.holds(46.12, 8.12) and box.holds(44.875, 6.875)
    assert not box.holds(44.8, 7.5) and not box.holds(45.5, 8.2)
    east_edge = Bounds(north=10, west=179.5, south=0, east=180)
    assert east_edge.holds(5, -179.9)  # just across 180 from the east edge
    assert not east_edge.holds(5, -179.5)


def test_the_cap_box_holds_every_nearer_grid_point() -> None:
    # Brute force: every lattice point within the radius lies in the box (wrapping columns mod 1440).
    rng = np.random.default_rng(3)
    rows, cols = np.meshgrid(np.arange(721), np.arange(1440), indexing="ij")
    lats, lons = rows.ravel() * 0.25 - 90, cols.ravel() * 0.25 - 179.75
    for _ in range(40):
        lat, lon, km = rng.uniform(-89.9, 89.9), rng.uniform(-180, 180), rng.uniform(1, 400)
        near = distance_km(lat, lon, lats, lons) <= km
        r0, r1, c0, c1 = cap_box(lat, lon, km)
        in_rows = (rows.ravel() >= r0) & (rows.ravel() <= r1)
        in_cols = np.ones_like(in_rows) if c1 - c0 + 1 >= 1440 else np.isin(cols.ravel(), np.arange(c0, c1 + 1) % 1440)
        assert not np.any(near & ~(in_rows & in_cols)), (lat, lon, km)
