"""climate --place Jakarta: per-year values, anomalies against 1961-1990 and the trend per decade equal
what numpy and scipy make here of the hourly rows themselves (the days of UTC+7, Jakarta's standard
offset); partial years are marked, a baseline not loaded is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from era5etl.db import connect
from era5etl.read.places import find_place
from era5etl.read.points import nearest_point

from ..helpers import cli

TOL = 2e-4  # degC: the days' means pass through float4, as the table holds values


def _hourly(db_url: str, table: str, location_id: int) -> tuple[np.ndarray, np.ndarray]:
    with connect(db_url) as conn:
        rows = conn.execute(f"SELECT time, temperature_2m::float8 FROM {table} WHERE location_id = %s ORDER BY time",
                            (location_id,)).fetchall()
    times = np.array([r[0].replace(tzinfo=None) for r in rows], dtype="datetime64[h]")
    return times, np.array([r[1] for r in rows])


def _expected(times: np.ndarray, values: np.ndarray) -> dict[int, float]:
    """Each whole local year's mean of its hours (UTC+7); a year short of an hour is left out."""
    local = times + np.timedelta64(7, "h")
    years = local.astype("datetime64[Y]").astype(int) + 1970
    out = {}
    for year in np.unique(years):
        hours = (np.datetime64(f"{year + 1}-01-01") - np.datetime64(f"{year}-01-01")).astype(int) * 24
        mine = years == year
        if mine.sum() == hours:
            out[int(year)] = float(values[mine].mean())
    return out


@pytest.fixture(scope="module")
def jakarta(places_table: str) -> dict[str, Any]:
    code, out, err, data = cli("climate", "--place", "Jakarta", "--variable", "temperature_2m", "--baseline",
                               "1961-1990", "--table", places_table, "--json")
    assert code == 0, out + err
    assert data is not None
    return data


def test_yearly_anomalies_and_trend_equal_numpy_and_scipy_on_the_hourly_rows(
    db_url: str, places_table: str, jakarta: dict[str, Any]
) -> None:
    place = find_place("Jakarta")
    with connect(db_url) as conn:
        point = nearest_point(conn, places_table, place.latitude, place.longitude)
    want = _expected(*_hourly(db_url, places_table, point.location_id))
    assert sorted(want) == list(range(1941, 2025))  # 1940 starts at 07:00 local; 2025 holds 7 hours
    assert [r["year"] for r in jakarta["years"]] == list(range(1940, 2025))  # no year of 7 hours
    normal = np.mean([want[y] for y in range(1961, 1991)])

    data = jakarta
    assert data["place"]["name"] == "Jakarta" and data["place"]["grid_point"]["location_id"] == point.location_id
    assert (data["variable"], data["unit"], data["utc_offset_hours"], data["baseline"]) == (
        "temperature_2m", "degC", 7.0, [1961, 1990])
    got = {r["year"]: r for r in data["years"]}
    assert [y for y, r in got.items() if not r["partial"]] == sorted(want)
    assert got[1940]["partial"] and got[1940]["value"] is None and got[1940]["anomaly"] is None
    for year, value in want.items():
        assert got[year]["value"] == pytest.approx(value, abs=TOL)
        assert got[year]["anomaly"] == pytest.approx(value - normal, abs=TOL)
    assert data["baseline_value"] == pytest.approx(normal, abs=TOL)

    x = np.array(sorted(want), dtype=float)
    y = np.array([want[int(v)] for v in x])
    slope, intercept = np.polyfit(x, y, 1)
    resid = y - (slope * x + intercept)
    se = np.sqrt(resid @ resid / (x.size - 2) / ((x - x.mean()) @ (x - x.mean())))
    half = stats.t.ppf(0.975, x.size - 2) * se
    trend = data["trend_per_decade"]
    assert trend["ols"] == pytest.approx(slope * 10, abs=1e-4)
    assert trend["ci95"] == pytest.approx([(slope - half) * 10, (slope + half) * 10], abs=1e-4)
    assert trend["theil_sen"] == pytest.approx(stats.theilslopes(y, x).slope * 10, abs=1e-4)
    assert trend["years"] == 84
    warmest = max(want, key=lambda k: want[k])
    assert data["highest"][0]["year"] == warmest and data["lowest"][0]["year"] == min(want, key=lambda k: want[k])
    assert any("partial years" in n and "1940" in n for n in data["notes"])


def test_the_months_hold_the_baselines_climatology(jakarta: dict[str, Any]) -> None:
    months = jakarta["months"]
    assert [m["month"] for m in months] == list(range(1, 13)) and all(m["years"] == 30 for m in months)
    january = [r["value"] for r in jakarta["monthly"] if r["month"] == 1 and 1961 <= r["year"] <= 1990]
    assert months[0]["climatology"] == pytest.approx(np.mean(january), abs=1e-9)
    assert set(jakarta["indices"]) >= {"tropical_nights", "summer_days", "tx90p", "warm_spell_days"}


def test_a_baseline_not_loaded_is_refused_and_a_partial_one_said(places_table: str) -> None:
    code, _, err, _ = cli("climate", "--place", "Jakarta", "--baseline", "1900-1930", "--table", places_table)
    assert code == 2 and "the baseline 1900-1930 has no complete year loaded (complete years: 1941-2024)" in err
    code, _out, err, data = cli("climate", "--place", "Jakarta", "--baseline", "1931-1960", "--from", "1990",
                               "--table", places_table, "--json")
    assert code == 0, err
    assert data is not None and "baseline 1931-1960: 20 of 30 years complete" in " ".join(data["notes"])
    assert data["years"][0]["year"] == 1990


def test_png_draws_the_anomalies(places_table: str, tmp_path: Path) -> None:
    target = tmp_path / "jakarta.png"
    code, _out, err, _ = cli("climate", "--place", "Jakarta", "--png", str(target), "--table", places_table)
    assert code == 0, err
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and target.stat().st_size > 10_000
