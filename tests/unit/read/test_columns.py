"""What a read may ask for at each step: the rollup contract, the units, the refusals."""

from __future__ import annotations

import pytest

from era5etl.core.errors import InputError
from era5etl.core.variables import DATA_COLUMNS
from era5etl.read.columns import (
    ROLLUP_COLUMNS,
    ROLLUP_VALUES,
    UNITS,
    check_step,
    default_columns,
    known,
    resolve,
)
from era5etl.read.errors import ReadError


def test_the_rollup_contract_is_exactly_these_columns() -> None:
    # The HTTP API reads <table>_daily and <table>_monthly by these names: an instantaneous column's
    # min, max and mean, an accumulation's sum, a fraction's mean, the wind as its speed; no longitude
    # (the point's id fixes it).
    assert ROLLUP_COLUMNS == (
        "bucket", "location_id", "latitude", "hours",
        "temperature_2m_min", "temperature_2m_max", "temperature_2m_mean",
        "wind_speed_10m_min", "wind_speed_10m_max", "wind_speed_10m_mean",
        "total_cloud_cover_mean", "total_precipitation_sum", "snowfall_sum")


def test_any_catalogued_column_is_rolled_up_by_its_kind() -> None:
    from era5etl.core.rollups import rolled_up, value_columns

    rolled = rolled_up((*DATA_COLUMNS, "dewpoint_2m", "surface_solar_radiation_downwards", "zonal_wind_100m",
                        "meridional_wind_100m", "sea_ice_cover"))
    assert rolled["dewpoint_2m"] == ("min", "max", "mean")
    assert rolled["surface_solar_radiation_downwards"] == ("sum",)
    assert rolled["wind_speed_100m"] == ("min", "max", "mean") and "zonal_wind_100m" not in rolled
    assert rolled["sea_ice_cover"] == ("mean",)
    # The wind speed needs both its components.
    assert "wind_speed_10m" not in rolled_up(("temperature_2m", "zonal_wind_10m"))
    assert value_columns(("snowfall",)) == ("snowfall_sum",)
    assert UNITS["dewpoint_2m_mean"] == "degC" and UNITS["surface_solar_radiation_downwards_sum"] == "J m-2"


def test_every_column_a_read_answers_with_has_the_tables_unit() -> None:
    for step in ("hour", "day", "month"):
        for column in resolve(step, None) + [c for c in known(step) if c in UNITS]:
            assert column in UNITS
    assert UNITS["temperature_2m"] == UNITS["temperature_2m_mean"] == "degC"
    assert UNITS["total_precipitation"] == UNITS["total_precipitation_sum"] == UNITS["snowfall_sum"] == "mm"
    assert UNITS["wind_speed_10m_max"] == UNITS["zonal_wind_10m"] == "m/s"
    assert UNITS["total_cloud_cover_mean"] == "0-1"


def test_defaults_and_names_standing_for_their_aggregates() -> None:
    assert default_columns("hour") == DATA_COLUMNS
    assert default_columns("day") == default_columns("month") == ROLLUP_VALUES
    assert resolve("day", ["temperature_2m", "hours", "total_precipitation_sum"]) == [
        "temperature_2m_min", "temperature_2m_max", "temperature_2m_mean", "hours", "total_precipitation_sum"]
    assert resolve("month", ["snowfall", "snowfall_sum"]) == ["snowfall_sum"]  # each column once
    assert resolve("hour", ["wind_speed_10m", " snowfall "]) == ["wind_speed_10m", "snowfall"]


def test_refusals_name_what_is_known() -> None:
    with pytest.raises(ReadError, match=r"'zonal_wind_10m' at step=day.*temperature_2m_min") as refused:
        resolve("day", ["zonal_wind_10m"])
    assert isinstance(refused.value, InputError)  # exit status 2 on the CLI, a 400 on the HTTP API
    with pytest.raises(ReadError, match=r"'temperature_2m_max' at step=hour.*wind_speed_10m"):
        resolve("hour", ["temperature_2m_max"])
    with pytest.raises(ReadError, match="no variable named"):
        resolve("hour", [" "])
    with pytest.raises(ReadError, match="step 'week' is not one of hour, day, month"):
        check_step("week")
