"""An area's days (read.daily's area_daily_values, read.area_localday with --tz) through climate --area:
its yearly means and anomalies are the cos(latitude)-weighted means of its
grid points' yearly means, computed here with numpy from the hourly rows (UTC days, all complete);
with --tz, an area's days and years on that offset's clock, from the hourly rows."""

from __future__ import annotations

import numpy as np
import pytest

from era5etl.db import connect
from era5etl.read.question import MORE_THAN_ONE

from ..helpers import cli

BOX = "60/20/59.75/20.25"


def _hourly(db_url: str, table: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(times as datetime64[h] UTC, location ids, latitudes, 2 m temperatures) of the box's hours."""
    with connect(db_url) as conn:
        rows = conn.execute(
            f"SELECT time, location_id, latitude::float8, temperature_2m::float8 FROM {table}"
            " WHERE latitude BETWEEN 59.7 AND 60.05 AND longitude BETWEEN 19.9 AND 20.3").fetchall()
    times = np.array([r[0].replace(tzinfo=None) for r in rows], dtype="datetime64[h]")
    ids, lats, values = (np.array([r[i] for r in rows]) for i in (1, 2, 3))
    assert np.unique(ids).size == 4
    return times, ids, lats, values


def _expected(db_url: str, table: str, shift_hours: int = 0) -> dict[int, float]:
    """Each whole year's (of the offset's clock) weighted mean of the points' yearly means."""
    times, ids, lats, values = _hourly(db_url, table)
    local = times + np.timedelta64(shift_hours, "h")
    years = local.astype("datetime64[Y]").astype(int) + 1970
    out = {}
    for year in np.unique(years):
        hours = (np.datetime64(f"{year + 1}-01-01") - np.datetime64(f"{year}-01-01")).astype(int) * 24
        means, weights = [], []
        for point in np.unique(ids):
            mine = (years == year) & (ids == point)
            if mine.sum() != hours:
                break
            means.append(values[mine].mean())
            weights.append(np.cos(np.radians(lats[mine][0])))
        else:
            out[int(year)] = float(np.average(means, weights=weights))
    return out


def test_an_areas_years_are_its_weighted_point_means(db_url: str, places_table: str) -> None:
    code, out, err, data = cli("climate", "--area", BOX, "--baseline", "1991-1992", "--table", places_table, "--json")
    assert code == 0, out + err
    assert data is not None and out.startswith("area 60/20/59.75/20.25: 4 grid points")
    want = _expected(db_url, places_table)
    assert sorted(want) == [1991, 1992, 1993]
    normal = (want[1991] + want[1992]) / 2
    assert data["area"]["points"] == 4 and data["utc_offset_hours"] == 0.0 and data["indices"] == {}
    got = {r["year"]: r for r in data["years"]}
    assert list(got) == [1991, 1992, 1993] and not any(r["partial"] for r in got.values())
    for year, value in want.items():
        # The rollup's daily means are float4: a few 1e-6 degC of each day's mean.
        assert got[year]["value"] == pytest.approx(value, abs=1e-4)
        assert got[year]["anomaly"] == pytest.approx(value - normal, abs=1e-4)
    assert data["trend_per_decade"]["years"] == 3


def test_an_areas_local_days_and_years(db_url: str, places_table: str) -> None:
    code, out, err, data = cli("series", "--area", BOX, "--daily", "--tz", "+3", "--from", "1992-01-01", "--to",
                               "1992-12-31", "--variables", "temperature_2m", "--table", places_table, "--json")
    assert code == 0, out + err
    assert data is not None and "366 days of UTC+03:00 from the hourly rows" in out.splitlines()[0]
    assert data["time"][0] == "1992-01-01T00:00:00+03:00" and data["utc_offset_hours"] == 3
    times, ids, lats, values = _hourly(db_url, places_table)
    days = (times + np.timedelta64(3, "h")).astype("datetime64[D]")
    weight = np.cos(np.radians(lats))
    for i, day in enumerate(np.arange(np.datetime64("1992-01-01"), np.datetime64("1993-01-01"))):
        mine = days == day
        means = [values[mine & (ids == p)].mean() for p in np.unique(ids)]
        w = [weight[mine & (ids == p)][0] for p in np.unique(ids)]
        assert data["points"][i] == 4 and data["hours"][i] == 96
        assert data["values"]["temperature_2m_mean"][i] == pytest.approx(np.average(means, weights=w), abs=1e-9)
        assert data["values"]["temperature_2m_max"][i] == values[mine].max()
        assert data["values"]["temperature_2m_min"][i] == values[mine].min()
    want = _expected(db_url, places_table, 3)
    assert sorted(want) == [1992, 1993]  # 1991's first local day misses its first 3 hours
    code, _, err, climate = cli("climate", "--area", BOX, "--tz", "+3", "--baseline", "1992-1993", "--table",
                                places_table, "--json")
    assert code == 0, err
    assert climate is not None and climate["utc_offset_hours"] == 3
    got = {r["year"]: r for r in climate["years"]}
    assert got[1991]["partial"] and [y for y, r in got.items() if not r["partial"]] == [1992, 1993]
    for year, value in want.items():
        assert got[year]["value"] == pytest.approx(value, abs=1e-4)


def test_an_area_has_no_indices(places_table: str) -> None:
    code, _, err, _ = cli("climate", "--area", BOX, "--index", "frost_days", "--table", places_table)
    assert code == 2 and "indices are computed for a place" in err
    code, _, err, _ = cli("climate", "--area", BOX, "--place", "Jakarta", "--table", places_table)
    assert code == 2 and err.strip().endswith(f"error: {MORE_THAN_ONE}")  # a series' words (read.question)
