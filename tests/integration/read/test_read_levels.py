"""Reads of a table on pressure levels: `series --level` and `map --level` answer the rows of that
level, exactly what was loaded; a read of such a table without a level, or of a single-level table
with one, is refused saying what to give; the HTTP reads' queries take ``level`` too."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from era5etl import serve
from era5etl.core.errors import InputError
from era5etl.db import connect, drop_table

from ..helpers import cli

NEW_NC = "era5pl_newcds_nc_z-t-u-v_8levels_270h_9x9.nc"


@pytest.fixture(scope="module")
def pl_table(db_url: str, samples: Path) -> Iterator[str]:
    name = f"pl_{uuid.uuid4().hex[:10]}"
    code, _, err, _ = cli("load-file", str(samples / NEW_NC), "--table", name)
    assert code == 0, err
    yield name
    with connect(db_url, autocommit=True) as conn:
        drop_table(conn, name)


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
    code, _, err, _ = cli("series", "35", "-117", "--table", pl_table, "--level", "500", "--daily")
    assert code != 0 and "no daily or monthly rollups" in err
    code, _, err, _ = cli("map", "2016-05-28T07:00", "--table", table, "--level", "500")
    assert code != 0 and "has no pressure levels" in err
    # An area's mean over a table on levels would mix them: refused, pointing at a place's series.
    code, _, err, _ = cli("series", "--area", "36/-118/34/-116", "--table", pl_table, "--hourly")
    assert code != 0 and "is on pressure levels; an area's series" in err


def test_http_queries_take_a_level() -> None:
    assert serve.map_request(time="2016-05-28T07", variable="temperature", level="850").level == 850
    assert serve.series_request(lat="35", lon="-117", level="500").level == 500
    assert serve.map_request(time="2016-05-28T07").level is None
    for bad in ("abc", "0", "1013"):
        with pytest.raises(InputError, match="level"):
            serve.map_request(time="2016-05-28T07", level=bad)
