"""Variables beyond the table's six, end to end through `run-month` and the local CDS: the columns
are added (and said to be), loaded in both formats, checked against their catalogued bounds, and a
rerun adds nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from era5etl.core.grid import Area, Grid, expected_rows
from era5etl.core.months import Month
from era5etl.core.variables import BY_CDS_NAME, CATALOGUE, DEFAULT_VARIABLES
from era5etl.db import connect
from era5etl.db.columns import table_columns

from ..helpers import cli

AREA = "46/7/45/8"  # 5 x 5 points
MONTH = "2024-02"
# Ten variables: the six, an instant dewpoint and pressure, an accumulated radiation, and a maximum
# (GRIB holds extremes as forecasts; the new CDS's NetCDF puts them in a stepType-max file).
EXTRA = ["2m_dewpoint_temperature", "mean_sea_level_pressure", "surface_solar_radiation_downwards",
         "maximum_2m_temperature_since_previous_post_processing"]
TEN = [*DEFAULT_VARIABLES, *EXTRA]
COLUMNS = [v.column for v in CATALOGUE if v.cds_name in EXTRA]  # a load adds them in catalogue order


def _env(cds: Any, staging: Path) -> dict[str, str]:
    return {"CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(staging)}


def _filled(url: str, table: str, columns: list[str]) -> dict[str, int]:
    """Non-NULL values per added column."""
    with connect(url) as conn:
        row = conn.execute(f"SELECT {', '.join(f'count({c})' for c in columns)} FROM {table}").fetchone()
    assert row is not None
    return dict(zip(columns, map(int, row), strict=True))


@pytest.mark.parametrize("data_format", ["grib", "netcdf"])
def test_ten_variables_add_their_columns_load_and_validate(db_url: str, cds: Any, table: str, tmp_path: Path,
                                                          data_format: str) -> None:
    maximum = BY_CDS_NAME[EXTRA[-1]]  # the local CDS writes no stepType-max NetCDF yet
    variables = TEN if data_format == "grib" else TEN[:-1]
    columns = COLUMNS if data_format == "grib" else [c for c in COLUMNS if c != maximum.column]
    expected = expected_rows(Month.parse(MONTH), Area.parse(AREA), Grid())
    args = ["run-month", MONTH, "--area", AREA, "--table", table, "--data-format", data_format,
            "--variables", ",".join(variables)]
    code, out, err, summary = cli(*args, "--json", env=_env(cds, tmp_path))
    assert code == 0, out + err
    assert summary is not None and (summary["rows"], summary["success"]) == (expected, True)
    assert summary["added_columns"] == columns
    with connect(db_url) as conn:
        assert table_columns(conn, table)[-len(columns):] == columns
        detail = conn.execute("SELECT detail FROM era5_metrics WHERE table_name = %s AND task = 'validate'",
                              (table,)).fetchone()
        result = json.loads(Path(conn.execute("SELECT validation_path FROM era5_months WHERE table_name = %s",
                                              (table,)).fetchone()[0], "result.json").read_text())
    assert detail is not None and detail[0]["success"] is True
    checked = {r["expectation_config"]["meta"]["check"] for r in result["results"]}
    assert {f"{c}_bounds" for c in columns} <= checked, checked  # each added column is bounds-checked
    assert _filled(db_url, table, columns) == dict.fromkeys(columns, expected)

    # Again: nothing to add, said in words when not --json.
    code, out, err, _ = cli(*args, env=_env(cds, tmp_path))
    assert code == 0, out + err
    assert "added column" not in out


def test_an_added_column_out_of_bounds_fails_validation(db_url: str, cds: Any, table: str, tmp_path: Path) -> None:
    args = ["run-month", MONTH, "--area", AREA, "--table", table, "--data-format", "grib",
            "--variables", ",".join(TEN)]
    assert cli(*args, env=_env(cds, tmp_path))[0] == 0
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f"UPDATE {table} SET dewpoint_2m = 80 WHERE time = '2024-02-10 12:00+00'")
    code, out, err, _ = cli("validate", MONTH, "--area", AREA, "--table", table)
    assert code != 0
    assert "failed: dewpoint_2m_bounds on 2024-02-10" in out + err, out + err
