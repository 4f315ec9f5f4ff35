"""How much one HTTP read may answer: counted from the range and area asked for, refused with the limit."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from era5etl import serve
from era5etl.core.errors import InputError
from era5etl.core.grid import Area
from era5etl.serve.limits import MAX_MAP_CELLS, MAX_SERIES_ROWS, check_area, check_series, series_rows


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_rows_of_a_range() -> None:
    assert series_rows(utc(2024, 1, 1), utc(2024, 1, 31, 23), "hour") == 744
    assert series_rows(utc(2024, 1, 1, 0, 30), utc(2024, 1, 1, 2), "hour") == 2  # 01:00 and 02:00
    assert series_rows(utc(2024, 1, 1), utc(2024, 3, 31, 23), "day") == 91
    assert series_rows(utc(2024, 1, 1, 12), utc(2024, 3, 31, 23), "day") == 90  # buckets start at midnight
    assert series_rows(utc(2024, 1, 1), utc(2025, 2, 1), "month") == 14
    assert series_rows(utc(2024, 1, 15), utc(2025, 2, 1), "month") == 13  # from February 2024
    assert series_rows(utc(2024, 1, 15), utc(2024, 1, 20), "month") == 0
    assert series_rows(utc(2024, 2, 1), utc(2024, 1, 1), "day") == 0


def test_a_decade_hourly_and_every_year_daily_fit() -> None:
    assert check_series(utc(2015, 1, 1), utc(2024, 12, 31, 23), "hour") == 87_672 <= MAX_SERIES_ROWS
    assert check_series(utc(1940, 1, 1), utc(2030, 12, 31, 23), "day") == 33_238
    assert check_series(utc(1940, 1, 1), utc(2030, 12, 31, 23), "month") == 1092


def test_more_is_refused_with_the_limit_and_how_to_narrow() -> None:
    with pytest.raises(serve.LimitError) as caught:
        check_series(utc(2000, 1, 1), utc(2024, 12, 31, 23), "hour")
    message = str(caught.value)
    assert f"{MAX_SERIES_ROWS:,} hours" in message and "219,168 hours" in message
    assert "from=" in message and "step=day" in message
    assert (caught.value.limit, caught.value.requested) == (MAX_SERIES_ROWS, 219_168)
    assert isinstance(caught.value, InputError) and serve.http_status(caught.value) == 422


def test_map_cells() -> None:
    assert check_area(Area.parse("75/-60/15/90")) == 241 * 601  # Europe fits
    with pytest.raises(serve.LimitError, match=f"1,038,240 grid points, more than the limit of {MAX_MAP_CELLS:,}"):
        check_area(Area.parse("90/-180/-90/180"))


def test_statuses() -> None:
    from era5etl.db import DatabaseError

    assert serve.http_status(InputError("x")) == 400
    assert serve.http_status(serve.NotFoundError("x")) == 404
    assert serve.http_status(DatabaseError("x")) == 503
    assert serve.http_status(serve.TooSlowError("x")) == 503


def test_an_areas_series_is_limited_by_its_points_times_its_steps() -> None:
    from era5etl.serve.limits import MAX_AREA_POINT_STEPS, check_area_series

    # The benchmark's area (441 points) over 25 years of days fits; hourly it does not.
    assert check_area_series(Area.parse("50/5/45/10"), utc(2000, 1, 1), utc(2024, 12, 31, 23), "day") == 4_027_212
    assert check_area_series(Area.parse("50/5/45/10"), utc(2024, 1, 1), utc(2024, 12, 31, 23), "hour") == 3_873_744
    with pytest.raises(serve.LimitError) as caught:
        check_area_series(Area.parse("50/5/45/10"), utc(2000, 1, 1), utc(2024, 12, 31, 23), "hour")
    message = str(caught.value)
    assert "441 grid points x 219,168 hours = 96,653,088 rows to read" in message
    assert f"more than the limit of {MAX_AREA_POINT_STEPS:,}" in message and "or ask step=day" in message
    with pytest.raises(serve.LimitError, match="3,321 grid points x 9,132 days = 30,327,372 rows to read"):
        check_area_series(Area.parse("60/0/50/20"), utc(2000, 1, 1), utc(2024, 12, 31, 23), "day")
