"""An area's series (``series --area``) against SQL over the hourly rows: per step the points' mean
weighted by cos(latitude), their min and max, and an accumulation's mean total, daily and monthly (read
from the rollups) and hourly (from the hypertable); a column a load added and one NULL over land; and
what an area's series refuses."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import xarray as xr

from era5etl.cli import main
from era5etl.core.grid import Area, Grid
from era5etl.db import connect
from era5etl.read.area import area_series
from era5etl.read.errors import ReadError

from ..helpers import cli
from .conftest import drop

NEW_INSTANT = "newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc"
NEW_ACCUM = "newcds_accum_tp_2025-05_hourly_expver0005.nc"
RTOL, ATOL = 1e-6, 1e-6  # a rollup's mean or sum is a float4 of a float8


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    data: dict[str, Any] = json.loads(out.splitlines()[-1])
    return data


def _refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    _, err = capsys.readouterr()
    assert code == 2, err
    return err


def _expected(db_url: str, table: str, area: str, step: str, variable: str, start: str,
              end: str, level: int | None = None) -> list[tuple[Any, ...]]:
    """(step, points, hours, weighted mean, min, max, weighted mean of totals) of ``variable`` in the
    area from the hourly rows alone: each point's step first (mean, min, max, sum of its hours), then
    the points' cos(latitude)-weighted mean over those with a value (of ``level``'s rows only)."""
    box = Area.parse(area)
    value = ("sqrt(zonal_wind_10m::float8 ^ 2 + meridional_wind_10m::float8 ^ 2)" if variable == "wind_speed_10m"
             else f"{variable}::float8")
    bucket = "time" if step == "hour" else f"date_trunc('{step}', time AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'"
    statement = (
        f"WITH p AS (SELECT {bucket} AS b, location_id, cos(radians(latitude::float8)) AS w, count(*) AS n,"
        f" avg({value}) AS m, min({value}) AS lo, max({value}) AS hi, sum({value}) AS s FROM {table}"
        " WHERE time >= %(start)s AND time < %(end)s AND latitude BETWEEN %(south)s AND %(north)s"
        f" AND longitude BETWEEN %(west)s AND %(east)s{'' if level is None else ' AND level = %(level)s'}"
        " GROUP BY 1, 2, 3)"
        " SELECT b, count(*), sum(n), sum(m * w) / sum(w) FILTER (WHERE m IS NOT NULL), min(lo), max(hi),"
        " sum(s * w) / sum(w) FILTER (WHERE s IS NOT NULL) FROM p GROUP BY b ORDER BY b")
    # The box's lattice points, edges included: the rows' float4 coordinates within 1e-4 of an edge
    # (44.3 is 44.2999992 as a float4; on the 0.25 degree lattice every edge is exact).
    params = {"start": start, "end": end, "south": float(box.south) - 1e-4, "north": float(box.north) + 1e-4,
              "west": float(box.west) - 1e-4, "east": float(box.east) + 1e-4, "level": level}
    with connect(db_url) as conn:
        return conn.execute(statement, params).fetchall()


def _close(got: list[float | None], want: list[float | None]) -> bool:
    a = np.array([np.nan if v is None else v for v in got], dtype=np.float64)
    b = np.array([np.nan if v is None else v for v in want], dtype=np.float64)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True))


def _check(capsys: pytest.CaptureFixture[str], db_url: str, table: str, area: str, step: str,
           variables: dict[str, tuple[str, ...]], start: str, last: str, end: str,
           level: int | None = None) -> dict[str, Any]:
    """``series --area`` at ``step`` over [start, last] (at ``level``) equals the hourly rows' figures,
    per variable and aggregate; returns the answer."""
    flag = {"hour": [], "day": ["--daily"], "month": ["--monthly"]}[step]
    at = [] if level is None else ["--level", str(level)]
    got = _json(capsys, "series", "--area", area, "--table", table, *flag, "--variables", ",".join(variables),
                "--from", start, "--to", last, *at, "--json")
    assert got["step"] == step and got["area"] == str(Area.parse(area)) and got["weighting"] == "cos(latitude)"
    assert got["columns"] == [f"{v}_{a}" for v, aggs in variables.items() for a in aggs]
    for variable, aggs in variables.items():
        want = _expected(db_url, table, area, step, variable, start, end, level)
        assert len(want) > 0, variable
        assert got["time"] == [t.strftime("%Y-%m-%dT%H:%M:%SZ") for t, *_ in want], variable
        assert got["points"] == [r[1] for r in want], variable
        assert got["hours"] == [r[2] for r in want], variable
        where = {"mean": 3, "min": 4, "max": 5, "sum": 6}
        for agg in aggs:
            column = f"{variable}_{agg}"
            assert _close(got["values"][column], [r[where[agg]] for r in want]), (step, column)
    return got


SIX = {"temperature_2m": ("min", "max", "mean"), "wind_speed_10m": ("min", "max", "mean"),
       "total_cloud_cover": ("mean",), "total_precipitation": ("sum",), "snowfall": ("sum",)}


@pytest.mark.parametrize("area", ["46/7/45/8", "45.75/7.25/45.25/7.75"])
def test_an_areas_daily_monthly_and_hourly_series_are_the_hourly_rows_weighted_means(
    capsys: pytest.CaptureFixture[str], db_url: str, month_table: str, area: str
) -> None:
    daily = _check(capsys, db_url, month_table, area, "day", SIX, "2024-03-01", "2024-03-31", "2024-04-01")
    assert len(daily["time"]) == 31 and daily["gaps"] == []
    points = Area.parse(area).points(Grid())
    assert set(daily["points"]) == {points} and set(daily["hours"]) == {24 * points}
    _check(capsys, db_url, month_table, area, "day", SIX, "2024-03-10", "2024-03-12", "2024-03-13")
    _check(capsys, db_url, month_table, area, "month", SIX, "2024-03-01", "2024-03-31", "2024-04-01")
    hourly = _check(capsys, db_url, month_table, area, "hour", SIX, "2024-03-15", "2024-03-15", "2024-03-16")
    assert len(hourly["time"]) == 24 and set(hourly["hours"]) == {points}
    # The weights matter: the unweighted mean of the points' daily means is not the area's.
    if area == "46/7/45/8":
        with connect(db_url) as conn:
            row = conn.execute(f"SELECT avg(temperature_2m_mean::float8) FROM {month_table}_daily"
                               " WHERE bucket = '2024-03-01'").fetchone()
        assert row is not None and not math.isclose(row[0], daily["values"]["temperature_2m_mean"][0], rel_tol=1e-9)


PL = {"temperature": ("min", "max", "mean"), "geopotential": ("min", "max", "mean")}


@pytest.mark.parametrize("step", ["hour", "day", "month"])
def test_an_areas_series_at_a_pressure_level_is_that_levels_hourly_rows_weighted_means(
    capsys: pytest.CaptureFixture[str], db_url: str, pl_table: str, step: str
) -> None:
    # The sample's 270 hours are a day in late May of each year 2016-2025: days loaded in part, months of
    # a few days; 3x5 of its 9x9 points.
    got = _check(capsys, db_url, pl_table, "35.5/-117.5/35/-116.5", step, PL, "2016-05-01", "2025-06-30",
                 "2025-07-01", level=500)
    assert set(got["points"]) == {15}
    other = _check(capsys, db_url, pl_table, "35.5/-117.5/35/-116.5", step, PL, "2016-05-01", "2025-06-30",
                   "2025-07-01", level=875)
    assert other["values"]["temperature_mean"] != got["values"]["temperature_mean"]


LAND = {"temperature_2m": ("min", "max", "mean"), "total_precipitation": ("sum",)}


@pytest.mark.parametrize("step", ["hour", "day", "month"])
def test_an_areas_series_on_era5_land_is_its_hourly_rows_weighted_means_on_its_lattice(
    capsys: pytest.CaptureFixture[str], db_url: str, land_table: str, step: str
) -> None:
    # 6 x 8 points of the 0.1 degree lattice (a 0.25 degree one has 2 x 3 there).
    area = "44.3/19.7/43.8/20.4"
    last = "2020-01-02" if step == "hour" else "2020-01-31"
    got = _check(capsys, db_url, land_table, area, step, LAND, "2020-01-01", last,
                 "2020-01-03" if step == "hour" else "2020-02-01")
    # Every one of the box's 48 lattice points is land there (edges included: 44.3 N and 20.4 E are
    # not exact in float4).
    assert set(got["points"]) == {48} == {Area.parse(area).points(Grid(Decimal("0.1")))}


@pytest.mark.parametrize("which", ["land", "level"])
def test_an_areas_local_days_on_land_and_at_a_level_read_the_same_points(
    capsys: pytest.CaptureFixture[str], land_table: str, pl_table: str, which: str
) -> None:
    """Days of UTC+0 from the hourly rows (--tz) are the UTC days the rollups hold, checked above
    against SQL: the same lattice's points (0.1 degree on land), the same level."""
    table, area, span, at = ((land_table, "44.3/19.7/43.8/20.4", ("2020-01-01", "2020-01-31"), [])
                             if which == "land" else
                             (pl_table, "35.5/-117.5/35/-116.5", ("2016-05-01", "2025-06-30"), ["--level", "500"]))
    variables = "temperature_2m" if which == "land" else "temperature"
    args = ["series", "--area", area, "--table", table, "--daily", "--variables", variables, "--from", span[0],
            "--to", span[1], *at, "--json"]
    utc = _json(capsys, *args)
    local = _json(capsys, *args, "--tz", "+0")
    assert local["points"] == utc["points"] and local["hours"] == utc["hours"] and len(utc["time"]) > 1
    for column in utc["columns"]:
        assert _close(local["values"][column], utc["values"][column]), column


@pytest.fixture(scope="module")
def coast_table(db_url: str, samples: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The new CDS's 5x5 files of May 2025 (2 m temperature and dewpoint, wind, pressure; then
    precipitation into the same table), with a sea-surface temperature NULL over the two western
    longitudes as ERA5 delivers land points: added columns, one with NULLs."""
    with xr.open_dataset(samples / NEW_INSTANT) as ds:
        coast = ds.load()
    coast["sst"] = coast["t2m"].where(coast["longitude"] > coast["longitude"].values[1])
    coast["sst"].attrs.update(units="K", long_name="Sea surface temperature")
    path = tmp_path_factory.mktemp("coast") / "coast.nc"
    coast.to_netcdf(path)
    table = f"a_{uuid.uuid4().hex[:10]}"
    # One download's two files in one load (a second load of the same hours would replace the first's rows).
    code, _, err, summary = cli("load-file", str(path), str(samples / NEW_ACCUM), "--table", table, "--json")
    assert code == 0, err
    assert summary is not None and {"dewpoint_2m", "sea_surface_temperature"} <= set(summary["added_columns"])
    yield table
    drop(db_url, table)


ADDED = {"dewpoint_2m": ("min", "max", "mean"), "sea_surface_temperature": ("min", "max", "mean"),
         "surface_pressure": ("min", "max", "mean"), "total_precipitation": ("sum",)}


def test_added_columns_and_a_column_null_over_land(
    capsys: pytest.CaptureFixture[str], db_url: str, coast_table: str
) -> None:
    for area in ("40.5/-8.5/39.5/-7.5", "40.25/-8.5/39.75/-8"):  # the whole file; then a box with land and sea
        daily = _check(capsys, db_url, coast_table, area, "day", ADDED, "2025-05-01", "2025-05-12", "2025-05-13")
        assert all(None not in daily["values"][c] for c in daily["columns"]), area  # sea points in both
        _check(capsys, db_url, coast_table, area, "month", ADDED, "2025-05-01", "2025-05-31", "2025-06-01")
        _check(capsys, db_url, coast_table, area, "hour", ADDED, "2025-05-03", "2025-05-03", "2025-05-04")
    # Only land points: no point has a sea-surface temperature, so every step's value is missing.
    land = _json(capsys, "series", "--area", "40.5/-8.5/39.5/-8.25", "--table", coast_table, "--daily",
                 "--variables", "sea_surface_temperature_mean,dewpoint_2m_mean", "--json")
    assert land["values"]["sea_surface_temperature_mean"] == [None] * 12
    assert None not in land["values"]["dewpoint_2m_mean"] and set(land["points"]) == {10}
    assert land["units"] == {"sea_surface_temperature_mean": "degC", "dewpoint_2m_mean": "degC"}


def test_csv_and_the_table_print_the_same_steps(capsys: pytest.CaptureFixture[str], month_table: str) -> None:
    assert main(["series", "--area", "46/7/45/8", "--table", month_table, "--monthly", "--variables",
                 "total_precipitation", "--csv"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("# area 46/7/45/8: 25 grid points")
    assert out[1] == "time,points,hours,total_precipitation_sum"
    assert out[2].startswith("2024-03-01T00:00:00Z,25,18600,") and len(out) == 3
    assert main(["series", "--area", "46/7/45/8", "--table", month_table, "--daily", "--to", "2024-03-02"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert "temperature_2m_mean (degC)" in text[1] and len(text) == 4  # the line above, the header, two days


def test_what_an_areas_series_refuses(capsys: pytest.CaptureFixture[str], db_url: str, month_table: str) -> None:
    t = ("--table", month_table)
    err = _refused(capsys, "series", "--area", "50/5/45/10", *t, "--daily")
    assert f"the area 50/5/45/10 reaches outside the area {month_table} holds: 46/7/45/8" in err
    err = _refused(capsys, "series", "--area", "45.6/7.3/45.55/7.4", *t)
    assert "holds no grid point of the 0.25 degree grid: widen it (for example 45.75/7.25/45.5/7.5)" in err
    assert "need -90 <= south <= north <= 90" in _refused(capsys, "series", "--area", "45/7/46/8", *t)
    assert "is not of the form N/W/S/E" in _refused(capsys, "series", "--area", "46/7/45", *t)
    err = _refused(capsys, "series", "--area", "46/7/45/8", *t, "--daily", "--from", "2023-01-01", "--to", "2023-01-31")
    assert ("no daily rollup rows of " + month_table + " in the area 46/7/45/8 from 2023-01-01T00:00:00Z to "
            "2023-02-01T00:00:00Z (exclusive); its 25 grid points have months from 2024-03 to 2024-03 loaded") in err
    assert "not more" in _refused(capsys, "series", "45.5", "7.5", "--area", "46/7/45/8", *t)
    assert "an area (N/W/S/E, for example 50/5/45/10)" in _refused(capsys, "series", *t)
    assert "unknown variable(s) 'rain'" in _refused(capsys, "series", "--area", "46/7/45/8", *t, "--variables", "rain")
    assert "an area's or a region's comes as a table, --csv or --json" in _refused(
        capsys, "series", "--area", "46/7/45/8", *t, "--png", "/tmp/x.png")
    with connect(db_url) as conn, pytest.raises(ReadError, match="table 'no_such_table' does not exist"):
        area_series(conn, "no_such_table", Area.parse("46/7/45/8"), None, None, None, "day")
