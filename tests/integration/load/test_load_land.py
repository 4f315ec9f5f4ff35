"""ERA5-Land samples staged with ``dataset=LAND`` and loaded by the real loader into a real TimescaleDB
hypertable: exactly the land (time, point) pairs, values equal to the files' own decoding with the
hourly amounts written out independently (tests/land_reference.py), a rerun replacing them exactly,
and the daily rollup summing the hourly amounts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from era5etl.core.datasets import LAND
from era5etl.core.variables import load_variables
from era5etl.db import connect
from era5etl.db.columns import ensure_columns
from era5etl.load import load
from era5etl.stage import open_download

from ...land_reference import expected_land_frame
from .test_load_file import table_frame

GRIB_MONTH = "era5land_newcds_grib_9vars-2t-2d-sp-snowc-rsn-tp-e-ro-smlt_GRIB1+GRIB2_2020-01_744h_11x14.grib"
NC_HOUR = "era5land_newcds_nc_data_1-9vars-accum+instant_2025-10-17_1h_11x11_seaNaN.nc"
NC_SSRD = "era5land_newcds_nc_ssrd-accum_2023-10-10_4h_171x471_seaNaN.nc"
GRIB_OLD = "era5land_oldcds_grib1_2t-ssr-ssrd-stl1_2016-10-16_24h_1x1.grib"


def load_land(url: str, table: str, path: Path) -> tuple[int, int]:
    with open_download([path], dataset=LAND) as staged:
        ensure_columns(url, table, load_variables(staged.variables, LAND))
        result = load(url, table, staged)
    return result.rows, result.deleted


def assert_holds(url: str, table: str, expected: pd.DataFrame) -> None:
    got = table_frame(url, table).sort_values(["time", "location_id"], ignore_index=True)
    expected = expected.sort_values(["time", "location_id"], ignore_index=True)
    assert len(got) == len(expected)
    for column in expected.columns:
        want = expected[column].to_numpy()
        have = got[column].to_numpy()
        if column not in ("time",):
            want = want.astype(np.float64) if column != "location_id" else want.astype(np.int64)
            have = have.astype(np.float64) if column != "location_id" else have.astype(np.int64)
        np.testing.assert_array_equal(have, want, err_msg=column)
    # The six's columns ERA5-Land does not have are NULL (cloud cover; snowfall when not asked).
    for column in set(got.columns) - set(expected.columns):
        assert got[column].isna().all(), column


@pytest.mark.parametrize("name", [GRIB_MONTH, NC_HOUR, NC_SSRD, GRIB_OLD])
def test_each_land_sample_loads_exactly(db_url: str, table: str, samples: Path, name: str) -> None:
    expected = expected_land_frame(samples / name)
    rows, deleted = load_land(db_url, table, samples / name)
    assert (rows, deleted) == (len(expected), 0)
    assert_holds(db_url, table, expected)
    rows, deleted = load_land(db_url, table, samples / name)  # a rerun replaces, never doubles
    assert (rows, deleted) == (len(expected), len(expected))
    assert_holds(db_url, table, expected)


def test_daily_rollup_sums_the_hourly_amounts(db_url: str, table: str, samples: Path) -> None:
    expected = expected_land_frame(samples / GRIB_MONTH)
    load_land(db_url, table, samples / GRIB_MONTH)
    day = expected[(expected.time >= pd.Timestamp("2020-01-10")) & (expected.time < pd.Timestamp("2020-01-11"))]
    want = day.groupby("location_id")["total_precipitation"].apply(lambda s: s.astype(np.float64).sum())
    with connect(db_url) as conn:
        rows = conn.execute(f"SELECT location_id, hours, total_precipitation_sum::float8 FROM {table}_daily"
                            " WHERE bucket = '2020-01-10' ORDER BY location_id").fetchall()
    assert len(rows) == 154 and {r[1] for r in rows} == {24}
    np.testing.assert_allclose([r[2] for r in rows], want.sort_index().to_numpy(), rtol=1e-6, atol=1e-6)
