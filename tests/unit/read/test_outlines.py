"""Natural Earth's coastlines and borders, clipped to a map's box (shapely as the reference)."""

from __future__ import annotations

import numpy as np
import pytest
import shapely

from era5etl.read.errors import ReadError
from era5etl.read.outlines import borders, coastlines, outlines_in, outlines_json
from era5etl.read.regions import country


def test_the_coastlines_are_natural_earths_land() -> None:
    lines = coastlines()
    assert len(lines) > 1000
    every = np.concatenate(lines)
    assert every[:, 0].min() >= -180 and every[:, 0].max() <= 180 and every[:, 1].min() < -60  # Antarctica
    # Cut at the antimeridian: no line steps across the map from 180 to -180.
    assert max(float(np.abs(np.diff(line[:, 0])).max()) for line in lines) < 180
    assert all(line[:, 1].max() > -89.99 for line in lines)  # nor along the South Pole, Antarctica's closing edge


def test_a_border_is_an_edge_two_countries_share() -> None:
    france, germany = (shapely.make_valid(country(name)[2]) for name in ("France", "Germany"))
    shared = france.boundary.intersection(germany.boundary)
    assert shared.length > 3  # degrees: the Rhine and the Palatinate
    lines = shapely.MultiLineString(list(borders()))
    # The border lines cover the edge France and Germany share (within a hundredth of a degree) ...
    assert shared.difference(lines.buffer(0.01)).length < 0.01 * shared.length
    # ... and none runs along France's Atlantic coast (Brest to Bordeaux), which no other country shares.
    atlantic = shapely.box(-5.0, 44.6, -1.0, 48.5)
    assert lines.intersection(atlantic).length == 0
    assert shapely.MultiLineString(list(coastlines())).intersection(atlantic).length > 5


def test_the_outlines_in_a_box_stay_inside_it() -> None:
    found = outlines_in(95.0, -11.0, 141.0, 6.0)  # the Maritime Continent
    coast = np.concatenate(found["coast"])
    assert coast[:, 0].min() >= 95 and coast[:, 0].max() <= 141 and coast[:, 1].min() >= -11 and coast[:, 1].max() <= 6
    assert len(found["coast"]) > 50
    assert found["borders"]  # Borneo's and New Guinea's land borders
    whole = outlines_in(-180.0, -90.0, 180.0, 90.0)
    # Thinned to the globe's detail: fewer points than the box's own coast at its detail, per degree of coast.
    assert sum(len(x) for x in whole["coast"]) < sum(len(x) for x in coastlines()) / 2


def test_the_outlines_json_is_lists_of_positions() -> None:
    answer = outlines_json(100.0, 0.0, 110.0, 10.0)
    assert answer["source"].startswith("Natural Earth") and answer["coast"]
    assert all(len(p) == 2 for line in answer["coast"] for p in line)


def test_a_box_inside_out_is_refused() -> None:
    with pytest.raises(ReadError, match="west must be less than east"):
        outlines_in(10.0, 0.0, 5.0, 10.0)
