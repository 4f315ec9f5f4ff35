"""A month in GRIB end to end: the real cdsapi client fetches GRIB1 from the local CDS, the GRIB
stager reads it with ecCodes, the loader COPYs it, validation passes; and it loads the same rows as
the same month fetched as NetCDF (the local CDS packs both formats on the same 16-bit lattice)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from era5etl.core.grid import Area, Grid, expected_rows
from era5etl.core.months import Month
from era5etl.core.variables import DATA_COLUMNS
from era5etl.db import connect, drop_table

from ..helpers import cli

AREA = "46/7/45/8"  # 5 x 5 points
MONTH = "2024-02"


def _rows(url: str, table: str) -> list[tuple[Any, ...]]:
    with connect(url) as conn:
        return conn.execute(
            f"SELECT time, location_id, latitude, longitude, {', '.join(DATA_COLUMNS)} FROM {table} "
            "ORDER BY time, location_id").fetchall()


def test_a_grib_month_loads_the_same_rows_as_its_netcdf(db_url: str, cds: Any, table: str, tmp_path: Path) -> None:
    # The download is looked at after the run (is it GRIB?), so validation must not remove it.
    env = {"CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(tmp_path),
           "ERA5_KEEP_DOWNLOADS": "all"}
    expected = expected_rows(Month.parse(MONTH), Area.parse(AREA), Grid())
    code, out, err, grib = cli("run-month", MONTH, "--area", AREA, "--table", table, "--data-format", "grib",
                               "--json", env=env)
    assert code == 0, out + err
    assert grib is not None and (grib["rows"], grib["success"]) == (expected, True)
    downloads = sorted(tmp_path.rglob("*.grib")) + sorted(p for p in tmp_path.rglob("download*") if p.is_file())
    assert any(p.read_bytes()[:4] == b"GRIB" for p in downloads), downloads  # GRIB was fetched
    with connect(db_url) as conn:
        stage = conn.execute("SELECT detail FROM era5_metrics WHERE table_name = %s AND task = 'stage'",
                             (table,)).fetchone()
        ledger = conn.execute("SELECT state, rows, expver FROM era5_months WHERE table_name = %s",
                              (table,)).fetchone()
    assert stage is not None and stage[0]["hours"] == 29 * 24 and stage[0]["notes"] == []
    assert ledger == ("validated", expected, ["0001"])
    from_grib = _rows(db_url, table)
    assert len(from_grib) == expected

    other = f"{table}_nc"
    try:
        code, out, err, _ = cli("run-month", MONTH, "--area", AREA, "--table", other, "--data-format", "netcdf",
                                 "--json", env=env)
        assert code == 0, out + err
        assert _rows(db_url, other) == from_grib
    finally:
        with connect(db_url, autocommit=True) as conn:
            drop_table(conn, other)
            for book in ("era5_months", "era5_metrics", "era5_validation_days"):
                conn.execute(f"DELETE FROM {book} WHERE table_name = %s", (other,))
