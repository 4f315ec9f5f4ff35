"""``python -m era5etl variables`` lists the catalogue: real rows, the defaults marked, JSON on request."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from era5etl.cli import main
from era5etl.core.variables import CATALOGUE, VARIABLES


def _row(out: str, cds_name: str) -> list[str]:
    (line,) = [line for line in out.splitlines() if f" {cds_name} " in line]
    return [cell.strip() for cell in line.split("│")[1:-1]]


def test_the_real_command_prints_the_table() -> None:
    done = subprocess.run([sys.executable, "-m", "era5etl", "variables"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"({len(CATALOGUE)};" in out
    assert _row(out, "2m_temperature") == ["*", "2m_temperature", "t2m", "2t", "167", "instant", "temperature_2m",
                                           "K -> degC", "- 273.15", "-95 .. 65"]
    assert _row(out, "2m_dewpoint_temperature") == ["", "2m_dewpoint_temperature", "d2m", "2d", "168", "instant",
                                                    "dewpoint_2m", "K -> degC", "- 273.15", "-110 .. 45"]
    assert _row(out, "surface_solar_radiation_downwards")[1:] == [
        "surface_solar_radiation_downwards", "ssrd", "ssrd", "169", "accum", "surface_solar_radiation_downwards",
        "J m**-2 -> J m-2", "", "0 .. 6e+06"]
    assert _row(out, "volumetric_soil_water_layer_1")[2:7] == ["swvl1", "swvl1", "39", "instant", "soil_water_layer_1"]
    assert _row(out, "total_precipitation")[0] == "*" and _row(out, "total_precipitation")[-2:] == ["x 1000",
                                                                                                    "0 .. none"]
    assert _row(out, "10m_wind_gust_since_previous_post_processing")[2:6] == ["fg10", "10fg", "49", "max"]
    assert sum(1 for line in out.splitlines() if line.startswith("│ * │")) == len(VARIABLES)


def test_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["variables", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["variables"]
    assert [v["cds_name"] for v in got] == [v.cds_name for v in CATALOGUE]
    assert [v["column"] for v in got if v["default"]] == [v.column for v in VARIABLES]
    sp = next(v for v in got if v["short_name"] == "sp")
    assert (sp["units"], sp["table_unit"], sp["scale"], sp["low"], sp["high"]) == ("Pa", "hPa", 0.01, 300.0, 1100.0)
