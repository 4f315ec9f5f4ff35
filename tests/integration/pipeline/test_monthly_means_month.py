"""A month of each monthly-means dataset end to end: `run-month --dataset monthly-means|monthly-means-by-hour|
land-monthly-means` asks the local CDS for its collection through the real cdsapi client (a product type,
no days, one time or 24), stages the download (NetCDF: a ZIP of one file per step type, the
accumulation stamped at 06 UTC or at the end of its hour; GRIB: stream moda or mnth), loads it into the
dataset's own table with its own ledger row, validates months x points (x 24 by hour of day), and a rerun
replaces every row with itself. NetCDF and GRIB load the same rows. The NetCDF month runs through the
CLI; the GRIB month and the rerun through the same pipeline in-process (``run_month``, what the CLI and
the DAG call), which saves two interpreter starts a dataset."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from era5etl import settings
from era5etl.core.months import Month
from era5etl.db import connect
from era5etl.fetch import Credentials
from era5etl.pipeline.job import MonthJob
from era5etl.pipeline.steps import run_month

from ..helpers import cli, forget

MONTH = "2020-01"
AREA = "46/8/45/9.25"  # 5 x 6 points at 0.25 degree; at 0.1 degree 11 x 13, part sea in the local CDS's mask
COLUMNS = "temperature_2m, total_precipitation"


def _rows(url: str, table: str) -> list[tuple[Any, ...]]:
    with connect(url) as conn:
        return conn.execute(f"SELECT time, location_id, latitude, longitude, {COLUMNS} FROM {table} "
                            "ORDER BY time, location_id").fetchall()


@pytest.mark.parametrize(("dataset", "times"), [("monthly-means", 1), ("monthly-means-by-hour", 24),
                                                ("land-monthly-means", 1)])
def test_a_month_of_monthly_means_in_netcdf_and_grib(db_url: str, cds: Any, tmp_path: Path, dataset: str,
                                                     times: int, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(tmp_path),
           "ERA5_KEEP_DOWNLOADS": "all"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)

    def in_process(table: str, data_format: str) -> dict[str, Any]:
        job = MonthJob.create(settings.load(), Month.parse(MONTH), run_id=f"test-{uuid.uuid4().hex[:6]}",
                              area=AREA, variables="2m_temperature,total_precipitation", table=table,
                              data_format=data_format, dataset=dataset)
        return run_month(db_url, job, Credentials(cds.url, cds.key))

    args = ("run-month", MONTH, "--dataset", dataset, "--area", AREA, "--variables",
            "2m_temperature,total_precipitation", "--json")
    nc_table, grib_table = f"mm_{uuid.uuid4().hex[:8]}", f"mm_{uuid.uuid4().hex[:8]}"
    try:
        code, out, err, nc = cli(*args, "--table", nc_table, env=env)
        assert code == 0, out + err
        assert nc is not None and nc["success"], nc
        with connect(db_url) as conn:
            ledger = conn.execute("SELECT state, rows, dataset, expected_rows FROM era5_months"
                                  " WHERE table_name = %s", (nc_table,)).fetchone()
            job = conn.execute("SELECT dataset, request FROM era5_cds_jobs WHERE month_hash ="
                               " (SELECT detail->>'request_hash' FROM era5_metrics WHERE table_name = %s"
                               " AND task = 'fetch') LIMIT 1", (nc_table,)).fetchone()
        assert ledger is not None and ledger[0] == "validated" and ledger[2] == dataset
        points = 5 * 6 if dataset != "land-monthly-means" else ledger[1] // times
        assert 0 < points <= 11 * 13
        assert ledger[1] == nc["rows"] == nc["expected_rows"] == times * points
        # One CDS job of the monthly collection: a product type, the month, no days.
        assert job is not None and job[0].endswith("-monthly-means")
        request = job[1]
        assert "day" not in request and request["month"] == ["01"]
        assert request["product_type"] == [("monthly_averaged_reanalysis_by_hour_of_day" if times == 24
                                             else "monthly_averaged_reanalysis")]
        assert len(request["time"]) == times
        from_nc = _rows(db_url, nc_table)
        assert len(from_nc) == times * points
        # The row times: the month's start, or its first day's 24 hours (the accumulation's stamps at
        # 06 UTC, or at the end of its hour, read back as the row they mean).
        stamps = sorted({r[0].isoformat() for r in from_nc})
        assert stamps == [f"2020-01-01T{h:02d}:00:00+00:00" for h in range(times)]
        assert all(r[4] is not None and r[5] is not None for r in from_nc), "every row has both columns"

        grib = in_process(grib_table, "grib")
        assert (grib["rows"], grib["success"]) == (times * points, True)
        assert _rows(db_url, grib_table) == from_nc

        # A rerun: the same download, every row replaced by itself; still validated.
        again = in_process(nc_table, "netcdf")
        assert again["rows"] == times * points and again["success"]
        assert _rows(db_url, nc_table) == from_nc
    finally:
        forget(db_url, nc_table)
        forget(db_url, grib_table)
