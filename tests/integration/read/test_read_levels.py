"""Reads of a table on pressure levels: `series --level` and `map --level` answer the rows of that
level, exactly what was loaded; a read of such a table without a level, or of a single-level table
with one, is refused saying what to give; the HTTP reads' queries take ``level`` too."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from era5etl import serve
from era5etl.core.errors import InputError
from era5etl.db import connect

from ..helpers import assert_level_rollups_match, cli
from .conftest import NEW_NC


def test_map_at_a_level_is_that_levels_field(pl_table: str, samples: Path) -> None:
    code, _, err, got = cli("map", "2016-05-28T07:00", "--table", pl_table, "--variable", "temperature",
                              "--level", "875", "--json")
    assert code == 0, err
    assert got is not None and got["level"] == 875 and got["unit"] == "degC"
    with xr.open_dataset(samples / NEW_NC) as ds:
        field = ds["t"].isel(valid_time=0).sel(pressure_level=875.0)  # north first
        want = (field.values.astype(np.float64) - 273.15).astype(np.float32)[::-1].ravel()  # south first, as ids
    assert len(got["values"]) == want.size == 81
    np.testing.assert_allclose(np.asarray(got["values"], dtype=np.float64), want, rtol=0, atol=1e-5)


def test_series_at_a_level_is_that_levels_history(pl_table: str, samples: Path) -> None:
    code, _, err, got = cli("series", "35", "-117", "--table", pl_table, "--variables", "geopotential",
                              "--level", "500", "--json")
    assert code == 0, err
    assert got is not None
    with xr.open_dataset(samples / NEW_NC) as ds:
        want = ds["z"].sel(pressure_level=500.0, latitude=35.0, longitude=-117.0).values.astype(np.float32)
    np.testing.assert_array_equal(np.asarray(got["values"]["geopotential"], dtype=np.float32), want)


def test_a_level_is_required_on_levels_and_refused_elsewhere(pl_table: str, table: str) -> None:
    code, _, err, _ = cli("map", "2016-05-28T07:00", "--table", pl_table, "--variable", "temperature")
    assert code != 0 and "is on pressure levels: give a level" in err and "500, 600, 700" in err
    code, _, err, _ = cli("series", "35", "-117", "--table", pl_table, "--level", "1000")
    assert code != 0 and "no rows at 1000 hPa" in err
    code, _, err, _ = cli("map", "2016-05-28T07:00", "--table", table, "--level", "500")
    assert code != 0 and "has no pressure levels" in err
    # An area's mean over a table on levels would mix them: refused without a level.
    code, _, err, _ = cli("series", "--area", "36/-118/34/-116", "--table", pl_table, "--hourly")
    assert code != 0 and "is on pressure levels: give a level in hPa" in err


@pytest.mark.parametrize(("flag", "step"), [("--daily", "day"), ("--monthly", "month")])
def test_daily_and_monthly_series_at_a_level_are_sql_over_its_hours(db_url: str, pl_table: str, flag: str,
                                                                    step: str) -> None:
    code, _, err, got = cli("series", "35", "-117", "--table", pl_table, "--variables",
                            "hours,temperature,geopotential", "--level", "500", flag, "--json")
    assert code == 0, err
    assert got is not None and got["step"] == step
    with connect(db_url) as conn:
        want = conn.execute(
            f"SELECT time_bucket('1 {step}', time), count(*), min(temperature), max(temperature),"
            " avg(temperature::float8), min(geopotential), max(geopotential), avg(geopotential::float8)"
            f" FROM {pl_table} WHERE location_id = %s AND level = 500 GROUP BY 1 ORDER BY 1",
            (got["point"]["location_id"],)).fetchall()
    assert len(want) > 1
    assert [pd.Timestamp(t) for t in got["time"]] == [pd.Timestamp(r[0]) for r in want]
    assert got["values"]["hours"] == [r[1] for r in want]
    for i, column in enumerate(("temperature_min", "temperature_max", "temperature_mean", "geopotential_min",
                                "geopotential_max", "geopotential_mean"), start=2):
        have = np.asarray(got["values"][column], dtype=np.float32)
        sql_side = np.array([r[i] for r in want], dtype=np.float64)
        if column.endswith("_mean"):  # float8 means stored as float4: its last places
            np.testing.assert_allclose(have, sql_side, rtol=1e-6, atol=1e-5, err_msg=column)
        else:
            np.testing.assert_array_equal(have, sql_side.astype(np.float32), err_msg=column)
    # HTTP's /era5/series with level= and step= answers the same rows.
    from era5etl.serve.reads import read_series

    reply = read_series(db_url, serve.series_request(lat="35", lon="-117", level="500", step=step, table=pl_table,
                                                     variables="hours,temperature,geopotential"))
    assert json.loads(reply.body)["values"] == got["values"]
    # Another level's series is that level's: not the same numbers.
    code, _, err, other = cli("series", "35", "-117", "--table", pl_table, "--variables", "temperature",
                              "--level", "875", flag, "--json")
    assert code == 0, err
    assert other is not None and other["values"]["temperature_mean"] != got["values"]["temperature_mean"]


def test_rollups_rebuild_on_levels_gives_sql_over_the_hours(db_url: str, pl_table: str) -> None:
    code, _, err, _ = cli("rollups", "rebuild", "--table", pl_table)
    assert code == 0, err
    assert assert_level_rollups_match(db_url, pl_table) > 0


def test_http_queries_take_a_level() -> None:
    assert serve.map_request(time="2016-05-28T07", variable="temperature", level="850").level == 850
    assert serve.series_request(lat="35", lon="-117", level="500").level == 500
    assert serve.map_request(time="2016-05-28T07").level is None
    for bad in ("abc", "0", "1013"):
        with pytest.raises(InputError, match="level"):
            serve.map_request(time="2016-05-28T07", level=bad)
