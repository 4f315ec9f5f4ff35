"""Where a read is made (read.where): a place by name from the real gazetteer or bare coordinates, each
half-given or doubly-given form refused with what to give, and the day boundary a place implies."""

from __future__ import annotations

import pytest

from era5etl.read.errors import ReadError
from era5etl.read.places import find_place
from era5etl.read.where import Where, offset_minutes, where


def test_a_place_by_name_is_the_gazetteers_and_names_itself() -> None:
    at = where(None, None, "Jakarta", None)
    jakarta = find_place("Jakarta")
    assert at == Where(jakarta.latitude, jakarta.longitude, jakarta)
    assert at is not None and at.label() == f"{jakarta}, "


def test_bare_coordinates_have_no_place_and_nothing_is_none() -> None:
    assert where(52.5, 13.4, None, None) == Where(52.5, 13.4)
    assert Where(52.5, 13.4).label() == ""
    assert where(None, None, None, None) is None


@pytest.mark.parametrize(("lat", "lon", "place", "country", "says"), [
    (52.5, None, "Jakarta", None, "not both"),
    (None, None, None, "DE", "goes with a place by name"),
    (52.5, None, None, None, "both its latitude and its longitude"),
    (None, 13.4, None, None, "both its latitude and its longitude"),
])
def test_half_or_double_answers_are_refused(lat: float | None, lon: float | None, place: str | None,
                                            country: str | None, says: str) -> None:
    with pytest.raises(ReadError, match=says):
        where(lat, lon, place, country)


def test_the_day_boundary_is_utc_unless_asked_or_a_place_implies_it() -> None:
    jakarta = where(None, None, "Jakarta", None)
    assert jakarta is not None and jakarta.place is not None
    assert offset_minutes(None, jakarta) is None  # UTC days: the rollups'
    assert offset_minutes(None, jakarta, default_local=True) == jakarta.place.standard_offset_minutes() == 7 * 60
    assert offset_minutes("+05:30", jakarta) == 330
    assert offset_minutes(None, Where(52.5, 13.4), default_local=True) is None  # bare coordinates: no zone
