"""Monthly means read as rows of months: the files' time stamps mapped to the month (or the month's hour
of the day) they mean, checked on hand-made times and on the new CDS's real pair of files, whose
accumulation is stamped 06 UTC and whose instantaneous field 00 UTC for the same month."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from era5etl.core.datasets import MONTHLY_MEANS, MONTHLY_MEANS_BY_HOUR, SINGLE_LEVELS
from era5etl.stage import open_download
from era5etl.stage.monthly import row_times

INSTANT = "era5mm_newcds_nc_t2m_avgua_2005-2024_63x35.nc"
ACCUM = "era5mm_newcds_nc_tp_avgad_2005-2024_63x35.nc"


def times(*iso: str) -> np.ndarray:
    return np.array(iso, dtype="datetime64[s]")


def test_a_monthly_mean_is_its_month_at_00_utc_on_the_1st() -> None:
    got = row_times(times("2005-01-01T06:00", "2005-01-01T00:00", "2024-12-01T06:00"), MONTHLY_MEANS)
    assert got.tolist() == times("2005-01-01", "2005-01-01", "2024-12-01").tolist()


def test_by_hour_of_day_keeps_the_hour_and_takes_the_month_it_falls_in() -> None:
    # An accumulation by hour is stamped at the end of its hour, up to 06 UTC on the 2nd.
    got = row_times(times("2005-01-01T07:00", "2005-01-02T06:00", "2005-01-01T23:00"), MONTHLY_MEANS_BY_HOUR)
    assert got.tolist() == times("2005-01-01T07:00", "2005-01-01T06:00", "2005-01-01T23:00").tolist()


def test_a_dataset_that_is_not_monthly_is_refused() -> None:
    with pytest.raises(ValueError, match="not a monthly dataset"):
        row_times(times("2005-01-01"), SINGLE_LEVELS)


def test_the_new_cds_pair_joins_into_one_row_a_month(samples: Path) -> None:
    with xr.open_dataset(samples / INSTANT) as ds:
        instant = ds["valid_time"].values.astype("datetime64[s]")
        t2m_first = ds["t2m"].values[0].astype(np.float64).ravel()
    with xr.open_dataset(samples / ACCUM) as ds:
        accum = ds["valid_time"].values.astype("datetime64[s]")
    assert not np.array_equal(instant, accum)  # the files disagree on the stamps: that is the point
    months = np.unique(instant.astype("datetime64[M]")).astype("datetime64[s]")

    with open_download([samples / INSTANT, samples / ACCUM], variables=MONTHLY_MEANS.catalogue,
                       dataset=MONTHLY_MEANS) as staged:
        assert staged.valid_time.tolist() == months.tolist()
        assert any("stamped off the row" in note for note in staged.notes), staged.notes
        first = next(iter(staged.blocks(hours=1)))
    assert first.valid_time.tolist() == [months[0]]
    # Both files' variables are in the one row of the month, and the instantaneous one is the file's value.
    columns = {c for c, v in first.values.items() if np.isfinite(v).any()}
    assert {"temperature_2m", "total_precipitation"} <= columns, columns
    kelvin = first.values["temperature_2m"].astype(np.float64).ravel() + 273.15
    np.testing.assert_allclose(kelvin, t2m_first, rtol=1e-6)
