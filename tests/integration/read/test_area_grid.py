"""An area's rows as a gridded xarray.Dataset (read.area_grid), against the real download they were
loaded from: every hour of a box inside the sample equals xarray's own decoding of the file in table
units (kelvin to degC as float32), on the same latitudes (north to south) and longitudes."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from era5etl.core.grid import Area
from era5etl.core.variables import BY_SHORT_NAME
from era5etl.db import connect
from era5etl.load import load
from era5etl.read.area_grid import area_grid
from era5etl.read.errors import ReadError
from era5etl.stage import open_download

pytestmark = pytest.mark.integration

SAMPLE = "newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc"
START, END = datetime(2025, 5, 3, tzinfo=UTC), datetime(2025, 5, 3, 6, tzinfo=UTC)


def test_an_areas_hours_are_the_files_values_on_its_grid(db_url: str, table: str, samples: Path) -> None:
    with open_download([samples / SAMPLE]) as staged:
        load(db_url, table, staged)
    area = Area.parse("40.25/-8.25/39.75/-7.75")  # 3 x 3 of the sample's 5 x 5 points
    with connect(db_url) as conn:
        got = area_grid(conn, table, area, START, END, ["temperature_2m"], "hour", 10_000)
        with pytest.raises(ReadError, match="at most 10"):
            area_grid(conn, table, area, START, END, ["temperature_2m"], "hour", 10)
        with pytest.raises(ReadError, match="not after the start"):
            area_grid(conn, table, area, END, START, ["temperature_2m"], "hour", 10_000)

    t2m = BY_SHORT_NAME["t2m"]
    with xr.open_dataset(samples / SAMPLE) as ds:
        ref = ds["t2m"].sel(valid_time=slice("2025-05-03T00:00", "2025-05-03T05:00"),
                            latitude=[40.25, 40.0, 39.75], longitude=[-8.25, -8.0, -7.75])
        want = (ref.values.astype(np.float64) * t2m.scale + t2m.offset).astype(np.float32)
    assert got["latitude"].values.tolist() == [40.25, 40.0, 39.75]
    assert got["longitude"].values.tolist() == [-8.25, -8.0, -7.75]
    assert got.sizes["time"] == 6
    np.testing.assert_array_equal(got["temperature_2m"].values, want)
