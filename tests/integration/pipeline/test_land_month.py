"""A month of ERA5-Land end to end: `run-month --dataset land` asks the local CDS for
reanalysis-era5-land through the real cdsapi client (no product type, its 0.1 degree grid), in two
CDS jobs: the month and the previous day's 23 UTC, which gives the month's first hour its
accumulations (running totals from 00 UTC made hourly amounts) and is never a row. The stage step
records the month's land points, validation passes on hours x land points, NetCDF and GRIB load the
same rows, and a rerun replaces every row with itself."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from era5etl.core.months import Month
from era5etl.db import connect

from ..helpers import cli, forget

AREA = "46/8/45/9.2"  # 11 x 13 points at 0.1 degree, part sea in the local CDS's synthetic land mask
MONTH = "2020-01"
COLUMNS = "temperature_2m, total_precipitation, surface_solar_radiation_downwards, surface_pressure"


def _rows(url: str, table: str) -> list[tuple[Any, ...]]:
    with connect(url) as conn:
        return conn.execute(f"SELECT time, location_id, latitude, longitude, {COLUMNS} FROM {table} "
                            "ORDER BY time, location_id").fetchall()


def test_an_era5_land_month_in_netcdf_and_grib(db_url: str, cds: Any, tmp_path: Path) -> None:
    env = {"CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(tmp_path),
           "ERA5_KEEP_DOWNLOADS": "all"}
    hours = Month.parse(MONTH).hours
    nc_table, grib_table = f"land_{uuid.uuid4().hex[:8]}", f"land_{uuid.uuid4().hex[:8]}"
    try:
        code, out, err, nc = cli("run-month", MONTH, "--dataset", "land", "--area", AREA, "--table", nc_table,
                                 "--json", env=env)
        assert code == 0, out + err
        assert nc is not None and nc["success"], nc
        with connect(db_url) as conn:
            ledger = conn.execute("SELECT state, rows, dataset, land_points, grid FROM era5_months"
                                  " WHERE table_name = %s", (nc_table,)).fetchone()
            stage = conn.execute("SELECT detail FROM era5_metrics WHERE table_name = %s AND task = 'stage'",
                                 (nc_table,)).fetchone()
            # (once each: the same request asked by an earlier run of this test is the same job)
            jobs = conn.execute("SELECT DISTINCT ON (part) dataset, request FROM era5_cds_jobs WHERE month_hash ="
                                " (SELECT detail->>'request_hash' FROM era5_metrics WHERE table_name = %s"
                                " AND task = 'fetch') ORDER BY part", (nc_table,)).fetchall()
        assert ledger is not None and ledger[0] == "validated" and ledger[2] == "land" and ledger[4] == "0.1"
        land = ledger[3]
        assert 0 < land < 11 * 13, "the area is part land, part sea: sea points are not rows"
        assert ledger[1] == nc["rows"] == nc["expected_rows"] == hours * land
        assert stage is not None and (stage[0]["dataset"], stage[0]["points"]) == ("land", land)
        # Two CDS jobs of the ERA5-Land collection: the month, and the previous day's 23 UTC.
        assert [d for d, _ in jobs] == ["reanalysis-era5-land"] * 2
        assert all("product_type" not in r for _, r in jobs)
        before = jobs[1][1]
        assert (before["year"], before["month"], before["day"], before["time"]) == (["2019"], ["12"], ["31"],
                                                                                    ["23:00"])
        from_nc = _rows(db_url, nc_table)
        assert len(from_nc) == hours * land
        assert min(r[0] for r in from_nc).isoformat() == "2020-01-01T00:00:00+00:00", \
            "the previous day's 23 UTC is not a row"
        first = [r for r in from_nc if r[0] == from_nc[0][0]]
        assert len(first) == land
        # The first hour has its accumulations: the difference from the previous day's 23 UTC.
        assert all(r[5] is not None and r[6] is not None for r in first)
        assert all(r[5] is not None for r in from_nc)

        code, out, err, grib = cli("run-month", MONTH, "--dataset", "land", "--area", AREA, "--table", grib_table,
                                   "--data-format", "grib", "--json", env=env)
        assert code == 0, out + err
        assert grib is not None and (grib["rows"], grib["success"]) == (hours * land, True)
        assert _rows(db_url, grib_table) == from_nc

        # Validated on demand: the ledger says it is ERA5-Land, with its land points.
        code, out, err, verdict = cli("validate", MONTH, "--area", AREA, "--table", nc_table, "--json", env=env)
        assert code == 0, out + err
        assert verdict is not None and verdict["success"]
        assert verdict["expected_rows"] == verdict["observed_rows"] == hours * land

        # Read back: the CLI's series finds the table's dataset in the ledger, so its point is a land
        # point on ERA5-Land's lattice, one of those loaded.
        code, out, err, _ = cli("series", "45.5", "8.6", "--table", nc_table, "--from", "2020-01-01", "--to",
                                "2020-01-01", "--json", env=env)
        assert code == 0, out + err
        said = out.splitlines()[0]
        assert said.startswith("nearest land point ") and "24 hourly rows" in said, said
        assert int(said.split()[3].rstrip(":")) in {r[1] for r in first}

        # A rerun: the same download, every row replaced by itself.
        code, out, err, again = cli("run-month", MONTH, "--dataset", "land", "--area", AREA, "--table", nc_table,
                                    "--json", env=env)
        assert code == 0, out + err
        assert again is not None and again["rows"] == hours * land and again["success"]
        assert _rows(db_url, nc_table) == from_nc
    finally:
        forget(db_url, nc_table)
        forget(db_url, grib_table)


def test_load_file_tells_an_era5_land_file_from_its_grid(db_url: str, cds: Any, tmp_path: Path) -> None:
    import cdsapi

    client = cdsapi.Client(url=cds.url, key=cds.key, quiet=True, progress=False, sleep_max=0.2, retry_max=1,
                           timeout=60)
    table = f"land_{uuid.uuid4().hex[:8]}"
    try:
        for fmt, ext in (("netcdf", "nc"), ("grib", "grib")):
            path = tmp_path / f"day.{ext}"
            client.retrieve("reanalysis-era5-land", {
                "variable": ["2m_temperature", "total_precipitation"], "year": ["2020"], "month": ["01"],
                "day": ["02"], "time": [f"{h:02d}:00" for h in range(24)], "area": [46, 8, 45, 9.2],
                "data_format": fmt, "download_format": "unarchived"}, str(path))
            code, out, err, summary = cli("load-file", str(path), "--table", table, "--json")
            assert code == 0, out + err
            assert summary is not None and summary["rows"] % 24 == 0 and 0 < summary["rows"] < 24 * 11 * 13
            # Named as something else, it is refused before anything is written.
            code, out, err, _ = cli("load-file", str(path), "--table", table, "--dataset", "single-levels")
            assert code != 0 and "use --dataset land" in out + err
    finally:
        forget(db_url, table)
