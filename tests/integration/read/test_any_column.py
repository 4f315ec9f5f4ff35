"""Reads of a column a load added (any catalogued variable, not only the six): ``series`` hourly,
daily and monthly from the rollups, and ``map``, each with the column's unit from the catalogue; a
sea-surface temperature's NULL over land stays NULL through the rollups."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
import xarray as xr

from era5etl.cli import main
from era5etl.db import connect

from ..helpers import cli
from .conftest import drop, loaded_file

NEW_INSTANT = "newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc"


@pytest.fixture(scope="module")
def added_table(db_url: str, samples: Path) -> Iterator[str]:
    table, summary = loaded_file(samples / NEW_INSTANT, "c")
    assert "dewpoint_2m" in summary["added_columns"]
    yield table
    drop(db_url, table)


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:  # type: ignore[type-arg]
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    data: dict = json.loads(out.splitlines()[-1])  # type: ignore[type-arg]
    return data


def test_series_and_map_read_an_added_column_with_its_unit(
    capsys: pytest.CaptureFixture[str], db_url: str, added_table: str
) -> None:
    hourly = _json(capsys, "series", "40", "-8", "--table", added_table, "--variables", "dewpoint_2m,surface_pressure",
                   "--to", "2025-05-01", "--json")
    assert hourly["columns"] == ["dewpoint_2m", "surface_pressure"]
    assert hourly["units"] == {"dewpoint_2m": "degC", "surface_pressure": "hPa"}
    with connect(db_url) as conn:
        want = conn.execute(f"SELECT dewpoint_2m::float8 FROM {added_table} WHERE time = '2025-05-01T00:00Z'"
                            " AND location_id = %s", (hourly["point"]["location_id"],)).fetchone()
        day = conn.execute(f"SELECT min(dewpoint_2m)::float8, max(dewpoint_2m)::float8 FROM {added_table}"
                           " WHERE time >= '2025-05-01' AND time < '2025-05-02' AND location_id = %s",
                           (hourly["point"]["location_id"],)).fetchone()
    assert want is not None and math.isclose(hourly["values"]["dewpoint_2m"][0], want[0], rel_tol=1e-6)

    daily = _json(capsys, "series", "40", "-8", "--table", added_table, "--daily", "--variables", "dewpoint_2m",
                  "--to", "2025-05-01", "--json")
    assert daily["columns"] == ["dewpoint_2m_min", "dewpoint_2m_max", "dewpoint_2m_mean"]
    assert set(daily["units"].values()) == {"degC"}
    assert day is not None
    assert math.isclose(daily["values"]["dewpoint_2m_min"][0], day[0], rel_tol=1e-6)
    assert math.isclose(daily["values"]["dewpoint_2m_max"][0], day[1], rel_tol=1e-6)

    monthly = _json(capsys, "series", "40", "-8", "--table", added_table, "--monthly", "--variables",
                    "surface_pressure_mean", "--json")
    assert monthly["units"] == {"surface_pressure_mean": "hPa"} and len(monthly["time"]) == 1

    field = _json(capsys, "map", "2025-05-01T00:00", "--table", added_table, "--variable", "dewpoint_2m", "--json")
    assert field["variable"] == "dewpoint_2m" and field["unit"] == "degC", field.keys()
    # A column the table lacks is refused, naming the table's.
    code = main(["series", "40", "-8", "--table", added_table, "--variables", "sea_surface_temperature"])
    _, err = capsys.readouterr()
    assert code == 2 and "dewpoint_2m" in err


def test_a_column_null_over_land_stays_null_in_its_rollups(
    capsys: pytest.CaptureFixture[str], db_url: str, table: str, samples: Path, tmp_path: Path
) -> None:
    # The new CDS's 5x5 file (on the 0.25 degree lattice, so its points have rollups) with a
    # sea-surface temperature beside its variables: the 2 m temperature's values over the eastern
    # points, NaN over the western ones as ERA5 delivers land points. (The one real file holding sst,
    # the old CDS's all-variables one, is off the lattice: no location ids, so no rollups.)
    with xr.open_dataset(samples / NEW_INSTANT) as ds:
        coast = ds.load()
    coast["sst"] = coast["t2m"].where(coast["longitude"] > coast["longitude"].values[1])
    coast["sst"].attrs.update(units="K", long_name="Sea surface temperature")
    path = tmp_path / "coast.nc"
    coast.to_netcdf(path)
    code, _, err, summary = cli("load-file", str(path), "--table", table, "--json")
    assert code == 0, err
    assert summary is not None and "sea_surface_temperature" in summary["added_columns"]
    with connect(db_url) as conn:
        counts = conn.execute(f"SELECT count(*) FILTER (WHERE sea_surface_temperature IS NULL),"
                              f" count(sea_surface_temperature) FROM {table}").fetchone()
        rolled = conn.execute(f"SELECT count(*) FILTER (WHERE sea_surface_temperature_mean IS NULL),"
                              f" count(sea_surface_temperature_mean) FROM {table}_daily").fetchone()
        land = conn.execute(f"SELECT latitude, longitude FROM {table} WHERE sea_surface_temperature IS NULL"
                            " LIMIT 1").fetchone()
    assert counts == (12 * 24 * 10, 12 * 24 * 15)  # land (2 of 5 longitudes) and sea
    assert rolled == (12 * 10, 12 * 15)  # the land points' rollups: NULL, never 0 or NaN
    assert land is not None
    point = _json(capsys, "series", str(land[0]), str(land[1]), "--table", table, "--daily", "--variables",
                  "sea_surface_temperature_mean", "--json")
    assert point["values"]["sea_surface_temperature_mean"] == [None] * 12
    assert point["units"] == {"sea_surface_temperature_mean": "degC"}
