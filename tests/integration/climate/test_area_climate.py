"""climate --area: an area's yearly means and anomalies are the cos(latitude)-weighted means of its
grid points' yearly means, computed here with numpy from the hourly rows (UTC days, all complete)."""

from __future__ import annotations

import numpy as np
import pytest

from era5etl.db import connect

from ..helpers import cli

BOX = "60/20/59.75/20.25"


def _expected(db_url: str, table: str) -> dict[int, float]:
    with connect(db_url) as conn:
        rows = conn.execute(
            f"SELECT extract(year FROM time AT TIME ZONE 'UTC')::int, location_id, latitude::float8,"
            f" temperature_2m::float8 FROM {table} WHERE latitude BETWEEN 59.7 AND 60.05"
            " AND longitude BETWEEN 19.9 AND 20.3").fetchall()
    years = np.array([r[0] for r in rows])
    ids = np.array([r[1] for r in rows])
    lats = np.array([r[2] for r in rows])
    values = np.array([r[3] for r in rows])
    assert np.unique(ids).size == 4
    out = {}
    for year in np.unique(years):
        means, weights = [], []
        for point in np.unique(ids):
            mine = (years == year) & (ids == point)
            means.append(values[mine].mean())
            weights.append(np.cos(np.radians(lats[mine][0])))
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


def test_an_area_has_no_indices_nor_local_days(places_table: str) -> None:
    code, _, err, _ = cli("climate", "--area", BOX, "--index", "frost_days", "--table", places_table)
    assert code == 2 and "indices are computed for a place" in err
    code, _, err, _ = cli("climate", "--area", BOX, "--tz", "+3", "--table", places_table)
    assert code == 2 and "UTC days" in err
    code, _, err, _ = cli("climate", "--area", BOX, "--place", "Jakarta", "--table", places_table)
    assert code == 2 and "--area" in err
