"""A month asked for in GRIB is refused before its fetch: no stager reads GRIB yet (README, Formats)."""

from __future__ import annotations

import pytest

from era5etl import settings
from era5etl.core.errors import InputError
from era5etl.core.months import Month
from era5etl.fetch import Credentials
from era5etl.pipeline.job import MonthJob
from era5etl.pipeline.steps import fetch_step


def test_a_grib_month_is_refused_before_anything_is_fetched_or_recorded() -> None:
    job = MonthJob.create(settings.load({}), Month(2024, 1), run_id="t", data_format="grib")
    # An unreachable database and CDS: the refusal comes first, or this would fail to connect instead.
    with pytest.raises(InputError, match="not yet staged and loaded; use ERA5_DATA_FORMAT=netcdf"):
        fetch_step("postgresql://nobody@127.0.0.1:1/none", job, Credentials("http://127.0.0.1:1", "k"))
