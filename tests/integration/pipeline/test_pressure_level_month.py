"""A month of ERA5 on pressure levels end to end: the real cdsapi client asks the local CDS for
reanalysis-era5-pressure-levels (pressure_level in the request), the stager reads its NetCDF
(pressure_level, descending floats) or GRIB1 (isobaricInhPa messages), the loader writes one row per
hour, level and point, validation passes on hours x levels x points; NetCDF and GRIB load the same
rows, and a rerun replaces every row with itself."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from era5etl.core.grid import Area, Grid, expected_rows
from era5etl.core.months import Month
from era5etl.db import connect

from ..helpers import assert_level_rollups_match, cli, forget

AREA = "46/7/45.5/7.5"  # 3 x 3 points
MONTH = "2024-02"
LEVELS = "850,500,250"
COLUMNS = "temperature, zonal_wind, meridional_wind, geopotential, relative_humidity, specific_humidity"


def _rows(url: str, table: str) -> list[tuple[Any, ...]]:
    with connect(url) as conn:
        return conn.execute(f"SELECT time, level, location_id, latitude, longitude, {COLUMNS} FROM {table} "
                            "ORDER BY time, level, location_id").fetchall()


def test_a_pressure_level_month_in_netcdf_and_grib(db_url: str, cds: Any, tmp_path: Path) -> None:
    env = {"CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(tmp_path),
           "ERA5_KEEP_DOWNLOADS": "all"}
    expected = expected_rows(Month.parse(MONTH), Area.parse(AREA), Grid()) * 3
    nc_table, grib_table = f"pl_{uuid.uuid4().hex[:8]}", f"pl_{uuid.uuid4().hex[:8]}"
    try:
        code, out, err, nc = cli("run-month", MONTH, "--dataset", "pressure-levels", "--levels", LEVELS,
                                 "--area", AREA, "--table", nc_table, "--json", env=env)
        assert code == 0, out + err
        assert nc is not None and (nc["rows"], nc["expected_rows"], nc["success"]) == (expected, expected, True)
        assert (nc["dataset"], nc["levels"]) == ("pressure-levels", [250, 500, 850])
        with connect(db_url) as conn:
            ledger = conn.execute("SELECT state, rows, dataset, levels FROM era5_months WHERE table_name = %s",
                                  (nc_table,)).fetchone()
            stage = conn.execute("SELECT detail FROM era5_metrics WHERE table_name = %s AND task = 'stage'",
                                 (nc_table,)).fetchone()
        assert ledger == ("validated", expected, "pressure-levels", [250, 500, 850])
        assert stage is not None and (stage[0]["dataset"], stage[0]["levels"]) == ("pressure-levels", [250, 500, 850])
        from_nc = _rows(db_url, nc_table)
        assert len(from_nc) == expected
        assert {r[1] for r in from_nc} == {250, 500, 850}
        # The load wrote the rollups, a row per (bucket, level, point); validation checked them level by level.
        with connect(db_url) as conn:
            checked = conn.execute("SELECT detail->'rollups' FROM era5_metrics WHERE table_name = %s"
                                   " AND task = 'validate'", (nc_table,)).fetchone()
        assert checked is not None and checked[0]["mismatches"] == []
        assert (checked[0]["daily_rows"], checked[0]["monthly_rows"]) == (9 * 29 * 3, 9 * 3)
        assert assert_level_rollups_match(db_url, nc_table) == 9 * 29 * 3

        code, out, err, grib = cli("run-month", MONTH, "--dataset", "pressure-levels", "--levels", LEVELS,
                                   "--area", AREA, "--table", grib_table, "--data-format", "grib", "--json", env=env)
        assert code == 0, out + err
        assert grib is not None and (grib["rows"], grib["success"]) == (expected, True)
        assert _rows(db_url, grib_table) == from_nc

        # Validated on demand: the ledger says it is pressure levels, on which levels.
        code, out, err, verdict = cli("validate", MONTH, "--area", AREA, "--table", nc_table, "--json", env=env)
        assert code == 0, out + err
        assert verdict is not None and verdict["success"]
        assert verdict["expected_rows"] == verdict["observed_rows"] == expected
        # Told other levels than were loaded, the rows are too few: the verdict fails, naming the count.
        code, out, err, verdict = cli("validate", MONTH, "--area", AREA, "--table", nc_table, "--levels",
                                      "850,500,250,100", "--json", env=env)
        assert code == 1 and verdict is not None and "row_count_month" in verdict["failed"]

        # A rerun: the same download, every row replaced by itself.
        code, out, err, again = cli("run-month", MONTH, "--dataset", "pressure-levels", "--levels", LEVELS,
                                    "--area", AREA, "--table", nc_table, "--json", env=env)
        assert code == 0, out + err
        assert again is not None and again["rows"] == expected
        assert _rows(db_url, nc_table) == from_nc
        assert assert_level_rollups_match(db_url, nc_table) == 9 * 29 * 3
        # A daily row wrong at one level: the check names that level, the day and the column.
        from era5etl.read import rollup_check

        with connect(db_url, autocommit=True) as conn:
            conn.execute(f"UPDATE {nc_table}_daily SET temperature_max = temperature_max + 1"
                         " WHERE level = 500 AND bucket = '2024-02-01'")
        found = rollup_check.check(db_url, nc_table, Month.parse(MONTH), Area.parse(AREA), Grid(),
                                   levels=(250, 500, 850))
        assert not found.ok and all(m.startswith("at 500 hPa: ") for m in found.mismatches)
        assert any("temperature_max on 2024-02-01 differs from the hourly rows at 9 point(s)" in m
                   for m in found.mismatches)
    finally:
        forget(db_url, nc_table)
        forget(db_url, grib_table)


def test_the_cds_jobs_ask_the_pressure_level_collection(db_url: str, cds: Any, tmp_path: Path) -> None:
    env = {"CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(tmp_path)}
    table = f"pl_{uuid.uuid4().hex[:8]}"
    try:
        code, out, err, summary = cli("run-month", MONTH, "--dataset", "pressure-levels", "--levels", "500",
                                      "--variables", "temperature", "--area", AREA, "--table", table, "--json",
                                      env=env)
        assert code == 0, out + err
        assert summary is not None and summary["success"]
        with connect(db_url) as conn:
            jobs = conn.execute("SELECT dataset, request FROM era5_cds_jobs WHERE month_hash IN"
                                " (SELECT detail->>'request_hash' FROM era5_metrics WHERE table_name = %s"
                                " AND task = 'fetch')", (table,)).fetchall()
        assert jobs, "the fetch recorded no CDS job"
        for dataset, request in jobs:
            assert dataset == "reanalysis-era5-pressure-levels"
            assert request["pressure_level"] == ["500"] and request["variable"] == ["temperature"]
    finally:
        forget(db_url, table)
