from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from era5etl.core.errors import InputError
from era5etl.core.grid import Area, Grid, expected_rows, location_ids, normalize_longitude
from era5etl.core.months import Month
from era5etl.core.variables import parse_list


def test_month_arithmetic() -> None:
    feb = Month.parse("2024-02")
    assert (feb.days, feb.hours) == (29, 696)
    assert feb.start == datetime(2024, 2, 1, tzinfo=UTC)
    assert feb.end == datetime(2024, 3, 1, tzinfo=UTC)
    assert Month.parse("2023-12").next() == Month(2024, 1)
    assert str(Month.parse("1940-01")) == "1940-01"


@pytest.mark.parametrize("text", ["2024-13", "2024-00", "24-01", "2024/01", "", "1939-12", "2024-1"])
def test_bad_months_are_refused_clearly(text: str) -> None:
    with pytest.raises(InputError, match="month"):
        Month.parse(text)


@pytest.mark.parametrize(
    "text", ["50/5/45", "a/5/45/10", "45/5/50/10", "50/5/45/10/1", "91/0/0/1", "50/170/45/-170", "nan/5/45/10"]
)
def test_bad_areas_are_refused_clearly(text: str) -> None:
    with pytest.raises(InputError, match="area"):
        Area.parse(text)


def test_area_points_follow_the_lattice() -> None:
    area = Area.parse("50/5/45/10")
    assert area.points(Grid()) == 21 * 21
    assert area.points(Grid.parse("0.5")) == 11 * 11
    assert area.latitudes(Grid())[0] == 50.0  # north first, as the CDS delivers
    # Edges off the lattice snap inwards.
    assert Area.parse("50.1/5.1/45.1/10.1").points(Grid()) == 20 * 20
    # 0..360 longitudes are the same box as -180..180 ones.
    assert Area.parse("10/350/0/355") == Area.parse("10/-10/0/-5")
    assert Area.parse("90/-180/-90/180").points(Grid()) == 1_038_240
    assert Area.parse("50/-180/40/-170").longitudes(Grid())[:2] == [-179.75, -179.5]
    assert expected_rows(Month(2024, 1), area, Grid()) == 744 * 441


def test_grid_must_be_a_multiple_of_the_native_step() -> None:
    with pytest.raises(InputError):
        Grid.parse("0.1")
    with pytest.raises(InputError):
        Grid.parse("-1")
    assert Grid.parse("1.0").cds == ["1", "1"]


def test_location_ids_match_the_benchmark_convention() -> None:
    # lat_index counted from -90, lon_index from -179.75; 1-based.
    assert location_ids(-90.0, -179.75) == 1
    assert location_ids(-90.0, 180.0) == 1440
    assert location_ids(-90.0, -180.0) == 1440  # the same meridian as 180
    assert location_ids(90.0, 180.0) == 1_038_240
    assert location_ids(0.0, 0.0) == 360 * 1440 + 719 + 1
    # 0..359.75 longitudes (the CDS's own) give the same ids as -180..180.
    np.testing.assert_array_equal(location_ids([10, 10], [350.0, 359.75]), location_ids([10, 10], [-10.0, -0.25]))
    with pytest.raises(InputError):
        location_ids(10.1, 0.0)


def test_normalize_longitude() -> None:
    np.testing.assert_array_equal(normalize_longitude([0, 180, 180.25, 359.75, -180, -0.25]),
                                  [0, 180, -179.75, -0.25, 180, -0.25])


def test_variables() -> None:
    assert [v.column for v in parse_list("tp,2m_temperature")] == ["temperature_2m", "total_precipitation"]
    with pytest.raises(InputError, match="unknown variable"):
        parse_list("2m_temperature,not_a_variable")
    with pytest.raises(InputError):
        parse_list("")


def test_plus_moves_by_calendar_months_across_years() -> None:
    assert Month(2024, 11).plus(2) == Month(2025, 1)
    assert Month(2025, 1).plus(-3) == Month(2024, 10)
    assert Month(2024, 5).plus(0) == Month(2024, 5)
    assert Month(2024, 12).plus(-24) == Month(2022, 12)
