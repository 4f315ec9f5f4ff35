"""An ERA5-Land month is fetched with the hour before it: one CDS job more, the previous day's 23 UTC
(the CDS crosses days with hours), of the same variables, area and grid; none before the collection's
first month. The month's hash (its staging folder) is the month's request alone. No network, no database."""

from __future__ import annotations

from decimal import Decimal

import pytest

from era5etl import settings
from era5etl.core.datasets import LAND, SINGLE_LEVELS
from era5etl.core.errors import InputError
from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import parse_list
from era5etl.fetch import MonthRequest, plan
from era5etl.pipeline.job import MonthJob, dataset_grid

AREA = Area.parse("46/8/45/9.2")
GRID = Grid(Decimal("0.1"))
LAND_VARS = tuple(parse_list("2m_temperature,total_precipitation", catalogue=LAND.catalogue))


def test_a_land_month_has_a_part_for_the_previous_days_23utc() -> None:
    request = MonthRequest(Month(2020, 3), AREA, GRID, LAND_VARS, dataset=LAND)
    parts = plan(request)
    assert [p.previous_hour for p in parts] == [False, True]
    assert {p.count for p in parts} == {2} and [p.index for p in parts] == [0, 1]
    month, before = (p.cds_request() for p in parts)
    assert "product_type" not in month and month["grid"] == ["0.1", "0.1"]
    assert (before["year"], before["month"], before["day"], before["time"]) == (["2020"], ["02"], ["29"], ["23:00"])
    assert {k: v for k, v in before.items() if k not in ("year", "month", "day", "time")} == \
        {k: v for k, v in month.items() if k not in ("year", "month", "day", "time")}
    assert parts[0].hash != parts[1].hash and "23 UTC" in parts[1].label
    # The month's folder is named by the month's request, not by its parts.
    assert request.hash == MonthRequest(Month(2020, 3), AREA, GRID, LAND_VARS, dataset=LAND).hash


def test_january_asks_for_the_last_day_of_the_year_before_and_the_first_month_for_none() -> None:
    before = plan(MonthRequest(Month(2020, 1), AREA, GRID, LAND_VARS, dataset=LAND))[-1].cds_request()
    assert (before["year"], before["month"], before["day"]) == (["2019"], ["12"], ["31"])
    assert [p.previous_hour for p in plan(MonthRequest(Month(1950, 1), AREA, GRID, LAND_VARS, dataset=LAND))] \
        == [False]


def test_single_levels_have_no_previous_hour_part() -> None:
    request = MonthRequest(Month(2020, 3), AREA, Grid(), tuple(parse_list("2m_temperature")), dataset=SINGLE_LEVELS)
    assert [p.previous_hour for p in plan(request)] == [False]


def test_a_land_month_is_on_the_01_degree_grid_unless_told_a_multiple_of_it() -> None:
    s = settings.load({})
    assert dataset_grid(s, LAND) == GRID and dataset_grid(s, SINGLE_LEVELS) == Grid()
    assert dataset_grid(s, LAND, "0.5") == Grid(Decimal("0.5"))
    with pytest.raises(InputError, match=r"multiple of 0\.1"):
        dataset_grid(s, LAND, "0.25")
    with pytest.raises(InputError, match=r"multiple of 0\.25"):
        Grid.parse("0.1")
    job = MonthJob.create(s, Month(2020, 1), run_id="t", dataset="land", area=str(AREA))
    assert job.grid == GRID and job.table == "weather_land" and job.variables == tuple(
        v for v in LAND.catalogue if v.cds_name in LAND.default_variables)
    assert len(plan(job.request)) == 2
