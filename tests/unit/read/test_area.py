"""An area's series, its pure parts: the area checked against the loaded grid points' box, the SQL it
is read with (identifiers and bound parameters only), and what it answers as CSV and JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest

from era5etl.core.datasets import ERA5_GRID
from era5etl.core.grid import Area, location_ids
from era5etl.read.area import (
    AreaSeries,
    area_csv,
    area_json,
    area_params,
    area_statement,
    check_inside,
    holds_other_longitudes,
    lattice_points,
)
from era5etl.read.errors import ReadError
from era5etl.read.points import Bounds

LOADED = Bounds(50.0, 5.0, 45.0, 10.0)


def test_an_area_inside_the_loaded_box_or_within_half_a_cell_of_it_is_read() -> None:
    assert lattice_points(Area.parse("50/5/45/10")) == 441
    check_inside("w", Area.parse("50/5/45/10"), LOADED)
    check_inside("w", Area.parse("50.1/4.9/44.9/10.1"), LOADED)  # the edge points' cells reach 0.125 further


@pytest.mark.parametrize(("text", "message"), [
    ("51/5/45/10", "the area 51/5/45/10 reaches outside the area w holds: 50/5/45/10 (N/W/S/E"),
    ("50/4/45/10", "reaches outside"),
    ("50/5/44/10", "reaches outside"),
    ("50/5/45/11", "reaches outside"),
    ("-10/5/-20/10", "reaches outside"),
    ("47.3/6.3/47.3/6.3", "the area 47.3/6.3/47.3/6.3 holds no grid point of the 0.25 degree grid: widen it "
                          "(for example 47.5/6.25/47.25/6.5)"),
])
def test_an_area_outside_the_loaded_box_or_between_grid_points_is_refused(text: str, message: str) -> None:
    with pytest.raises(ReadError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_inside("w", Area.parse(text), LOADED)


def test_the_statement_binds_every_value_and_quotes_every_name() -> None:
    statement = area_statement("w_daily", "bucket", "day", ["temperature_2m_min", "total_precipitation_sum"])
    text = repr(statement)
    assert "%(south)s" in text and "%(start)s" in text and "%(end)s" in text
    assert "Identifier('temperature_2m_min')" in text and "Identifier('total_precipitation_sum')" in text
    open_ended = repr(area_statement("w", "time", "hour", ["wind_speed_10m_mean"], (False, False)))
    assert "%(start)s" not in open_ended and "zonal_wind_10m" in open_ended  # hourly: the speed from its components
    params = area_params(Area.parse("50/5/45/10"), None, None)
    # The ids of the south-west and north-east corners bound the box's points.
    assert (params["first_id"], params["last_id"]) == (int(location_ids(45, 5)), int(location_ids(50, 10)))


def test_the_longitude_test_is_left_out_only_where_the_table_holds_no_other_longitude() -> None:
    params = area_params(Area.parse("50/5/45/10"), None, None)
    assert not holds_other_longitudes(LOADED, params, ERA5_GRID)  # the table's own box
    assert not holds_other_longitudes(Bounds(50.0, 6.0, 45.0, 9.0), params, ERA5_GRID)  # a narrower table
    assert holds_other_longitudes(Bounds(50.0, 4.75, 45.0, 10.0), params, ERA5_GRID)  # one column west more
    assert holds_other_longitudes(Bounds(50.0, 5.0, 45.0, 10.25), params, ERA5_GRID)  # one column east more
    narrower = area_params(Area.parse("50/6/45/9"), None, None)
    assert holds_other_longitudes(LOADED, narrower, ERA5_GRID)
    kept = repr(area_statement("w", "time", "hour", ["temperature_2m_mean"]))
    left_out = repr(area_statement("w", "time", "hour", ["temperature_2m_mean"], other_longitudes=False))
    assert "%(col0)s" in kept and "%(col0)s" not in left_out
    assert "%(south)s" in left_out and "%(first_id)s" in left_out


def _series() -> AreaSeries:
    time = np.array(["2024-03-01", "2024-03-02", "2024-03-05"], dtype="datetime64[us]")
    return AreaSeries("w", Area.parse("46/7/45/8"), "day", ["temperature_2m_mean", "total_precipitation_sum"], time,
                      np.array([25, 25, 24]), np.array([600, 600, 570]),
                      {"temperature_2m_mean": np.array([1.25, np.nan, -3.5]),
                       "total_precipitation_sum": np.array([0.0, 2.5, np.nan])})


def test_csv_and_json_carry_points_hours_units_and_gaps() -> None:
    s = _series()
    assert area_csv(s).splitlines() == ["time,points,hours,temperature_2m_mean,total_precipitation_sum",
                                        "2024-03-01T00:00:00Z,25,600,1.25,0", "2024-03-02T00:00:00Z,25,600,,2.5",
                                        "2024-03-05T00:00:00Z,24,570,-3.5,"]
    data = json.loads(json.dumps(area_json(s)))
    assert data["area"] == "46/7/45/8" and data["weighting"] == "cos(latitude)"
    assert data["units"] == {"temperature_2m_mean": "degC", "total_precipitation_sum": "mm"}
    assert data["points"] == [25, 25, 24] and data["hours"] == [600, 600, 570]
    assert data["values"]["temperature_2m_mean"] == [1.25, None, -3.5]
    assert data["gaps"] == ["2024-03-03 to 2024-03-04"]


def test_the_columns_asked_for_at_any_step() -> None:
    from era5etl.read.area import area_columns

    data = ["temperature_2m", "total_precipitation", "dewpoint_2m"]
    assert area_columns(None, data) == ["temperature_2m_min", "temperature_2m_max", "temperature_2m_mean",
                                        "total_precipitation_sum", "dewpoint_2m_min", "dewpoint_2m_max",
                                        "dewpoint_2m_mean"]
    assert area_columns(["total_precipitation", "dewpoint_2m_max"], data) == ["total_precipitation_sum",
                                                                             "dewpoint_2m_max"]
    with pytest.raises(ReadError, match=r"^unknown variable\(s\) 'rain', 'hours' for an area's series; the known "
                                        r"ones are temperature_2m_min, "):
        area_columns(["rain", "hours"], data)
    with pytest.raises(ReadError, match="no variable named for an area's series"):
        area_columns([" "], data)
