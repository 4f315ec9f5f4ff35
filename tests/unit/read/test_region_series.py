"""read.region_series without a database: the statements' box and level filters, and when the
longitude filter is worth its cost on each lattice."""

from __future__ import annotations

from era5etl.core.datasets import ERA5_GRID, LAND_GRID
from era5etl.read.points import Bounds
from era5etl.read.region_series import longitudes_worth_filtering, region_local_statement, region_statement


def _text(statement: object) -> str:
    return repr(statement)


def test_the_level_and_longitude_filters_are_there_when_asked() -> None:
    plain = _text(region_statement("t", "time", "hour", ["temperature_2m_mean"], (True, True)))
    assert "level" not in plain and "col0" not in plain and "first_id" in plain
    at = _text(region_statement("t", "time", "day", ["temperature_mean"], (False, False), LAND_GRID, level=True))
    assert "level = %(level)s" in at and "col0" in at and "3600" in at  # ERA5-Land's columns
    local = _text(region_local_statement("t", ["temperature_mean"], ["temperature"], None, level=True))
    assert "level = %(level)s" in local and "col0" not in local


def test_the_longitude_filter_pays_where_the_table_is_over_twice_as_wide() -> None:
    region = {"col0": 100, "col1": 109}  # ten columns
    for grid in (ERA5_GRID, LAND_GRID):
        west = grid.longitude_of_column(100)
        narrow = Bounds(10.0, west, 0.0, grid.longitude_of_column(119))  # twenty columns
        wide = Bounds(10.0, west, 0.0, grid.longitude_of_column(120))  # twenty-one
        assert longitudes_worth_filtering(narrow, region, grid) is None
        assert longitudes_worth_filtering(wide, region, grid) is grid
