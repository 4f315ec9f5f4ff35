"""An area's days of a fixed UTC offset (read.area_localday) against the real download they were loaded
from: each local day's least minimum, greatest maximum and cos(latitude)-weighted mean of its points'
daily means, computed here in numpy from xarray's decoding of the file with its times shifted."""

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
from era5etl.read.area_localday import area_local_daily
from era5etl.stage import open_download

pytestmark = pytest.mark.integration

SAMPLE = "newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc"
OFFSET = 120  # UTC+2: a local day is 22:00 to 22:00 UTC
START, END = datetime(2025, 5, 9, 22, tzinfo=UTC), datetime(2025, 5, 11, 22, tzinfo=UTC)


def test_local_days_of_an_area_are_its_shifted_hours_aggregated(db_url: str, table: str, samples: Path) -> None:
    with open_download([samples / SAMPLE]) as staged:
        load(db_url, table, staged)
    area = Area.parse("40.25/-8.25/39.75/-7.75")
    with connect(db_url) as conn:
        got = area_local_daily(conn, table, area, START, END, ["temperature_2m"], OFFSET)

    t2m = BY_SHORT_NAME["t2m"]
    with xr.open_dataset(samples / SAMPLE) as ds:
        ref = ds["t2m"].sel(valid_time=slice("2025-05-09T22:00", "2025-05-11T21:00"),
                            latitude=[40.25, 40.0, 39.75], longitude=[-8.25, -8.0, -7.75])
        hourly = (ref.values.astype(np.float64) * t2m.scale + t2m.offset).astype(np.float32).astype(np.float64)
        lat = ref.latitude.values
    days = hourly.reshape(2, 24, 3, 3)  # two local days of 24 hours on the 3 x 3 points
    weights = np.broadcast_to(np.cos(np.radians(lat))[:, None], (3, 3))
    daily_means = days.mean(axis=1)
    want_mean = (daily_means * weights).sum(axis=(1, 2)) / weights.sum()

    assert got.step == "day" and got.time.tolist() == [np.datetime64("2025-05-09T22:00", "us"),
                                                       np.datetime64("2025-05-10T22:00", "us")]
    assert got.points.tolist() == [9, 9] and got.hours.tolist() == [9 * 24, 9 * 24]  # hours of all its points
    np.testing.assert_allclose(got.values["temperature_2m_mean"], want_mean, rtol=1e-6)
    np.testing.assert_allclose(got.values["temperature_2m_min"], days.min(axis=(1, 2, 3)), rtol=1e-6)
    np.testing.assert_allclose(got.values["temperature_2m_max"], days.max(axis=(1, 2, 3)), rtol=1e-6)
