"""Reads of real CDS downloads (``tests/data/era5-samples``: 2025-05-01..12 hourly, 5x5 points, ERA5T;
the instant and the accumulated file loaded as one download): series and maps equal what xarray
decodes from the files, and the rollups what pandas computes from them, no database in between."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from era5etl.core.variables import DATA_COLUMNS
from era5etl.db import connect
from era5etl.read.columns import ROLLUP_VALUES
from era5etl.read.maps import hour_map, map_json
from era5etl.read.series import nearest_point, series, series_json

from ..helpers import cli, expected_frame
from .common import RTOL, recompute
from .conftest import drop

INSTANT = "newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc"
ACCUM = "newcds_accum_tp_2025-05_hourly_expver0005.nc"
MAY, JUNE = datetime(2025, 5, 1, tzinfo=UTC), datetime(2025, 6, 1, tzinfo=UTC)
LAT, LON = 40.0, -8.0  # the middle of the 5x5 grid (39.5..40.5 N, 8.5..7.5 W)


@pytest.fixture(scope="module")
def expected(samples: Path) -> pd.DataFrame:
    keys = ["time", "location_id", "latitude", "longitude"]
    frame = pd.merge(expected_frame(samples / INSTANT), expected_frame(samples / ACCUM), on=keys)
    for column in DATA_COLUMNS:
        if column not in frame:
            frame[column] = np.float32(np.nan)  # not in the files: NULL in the table
    return frame


@pytest.fixture(scope="module")
def sample_table(db_url: str, samples: Path) -> Iterator[str]:
    table = f"s_{uuid.uuid4().hex[:10]}"
    code, _, err, summary = cli("load-file", str(samples / INSTANT), str(samples / ACCUM), "--table", table, "--json")
    assert code == 0, err
    assert summary is not None and summary["rows"] == 12 * 24 * 25
    yield table
    drop(db_url, table)


def test_samples_read_back_as_xarray_decodes_them_and_their_rollups_as_pandas_computes_them(
    db_url: str, sample_table: str, expected: pd.DataFrame
) -> None:
    with connect(db_url) as conn:
        # load-file wrote the rollups of the month its files touch: 12 days x 25 points, 25 months.
        point = nearest_point(conn, sample_table, LAT + 0.1, LON - 0.05)
        assert (point.latitude, point.longitude) == (LAT, LON)
        filled = conn.execute(f"SELECT (SELECT count(*) FROM {sample_table}_daily),"
                              f" (SELECT count(*) FROM {sample_table}_monthly)").fetchone()
        assert filled == (12 * 25, 25)

    mine = expected[expected["location_id"] == point.location_id].sort_values("time")
    with connect(db_url) as conn:
        assert nearest_point(conn, sample_table, LAT + 0.1, LON - 0.05) == point
        hourly = series(conn, sample_table, point, None, None, None, "hour")
        daily = series(conn, sample_table, point, None, None, None, "day")
        monthly = series(conn, sample_table, point, MAY, JUNE, None, "month")
        at = datetime(2025, 5, 7, 13, tzinfo=UTC)
        m = hour_map(conn, sample_table, at, "temperature_2m", None)

    # Hourly: bit for bit what xarray decodes (after the unit change), NULL where the files hold nothing.
    assert np.array_equal(hourly.time, mine["time"].to_numpy().astype("datetime64[us]"))
    for column in DATA_COLUMNS:
        assert np.array_equal(hourly.values[column], mine[column].to_numpy(np.float32), equal_nan=True), column
    assert np.isnan(hourly.values["snowfall"]).all() and np.isnan(hourly.values["total_cloud_cover"]).all()

    # Daily and monthly: pandas' aggregation of the files' values.
    frame = expected.assign(time=pd.to_datetime(expected["time"]).dt.tz_localize("UTC"))
    for s, step, rows in ((daily, "day", 12), (monthly, "month", 1)):
        want = recompute(frame.astype({c: "float64" for c in DATA_COLUMNS}), step).xs(point.location_id,
                                                                                    level="location_id")
        assert len(s.time) == rows
        assert np.array_equal(s.time, want.index.to_numpy().astype("datetime64[us]"))
        for column in ROLLUP_VALUES:
            assert np.allclose(s.values[column], want[column].to_numpy(), rtol=RTOL, atol=1e-9, equal_nan=True), column
    assert monthly.values["temperature_2m_max"][0] == mine["temperature_2m"].max()  # exact, a float4 of the file's
    data = series_json(monthly)
    assert data["values"]["snowfall_sum"] == [None] and data["values"]["total_cloud_cover_mean"] == [None]

    # The map: every point of that hour, as the file holds it.
    hour = expected[expected["time"] == np.datetime64(at.replace(tzinfo=None))].sort_values("location_id")
    assert np.array_equal(m.values, hour["temperature_2m"].to_numpy(np.float32))
    assert np.array_equal(m.latitude, hour["latitude"].to_numpy(np.float32))
    assert map_json(m)["unit"] == "degC"
