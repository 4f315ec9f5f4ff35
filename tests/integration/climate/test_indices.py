"""The climate indices equal xclim's, computed here with xclim from Los Angeles' daily series over 30
years (1991-2020): the local days (UTC-8) made in pandas from the hourly rows, not by the product."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from era5etl.db import connect
from era5etl.read.places import find_place
from era5etl.read.points import nearest_point

from ...index_reference import xclim_indices
from ..helpers import cli, forget
from .conftest import download

NAMES = ["frost_days", "summer_days", "tropical_nights", "tx90p", "warm_spell_days", "rx1day", "rx5day",
         "consecutive_dry_days", "heating_degree_days", "cooling_degree_days", "icing_days"]


def _daily(db_url: str, table: str) -> pd.DataFrame:
    la = find_place("Los Angeles", "US")
    with connect(db_url) as conn:
        point = nearest_point(conn, table, la.latitude, la.longitude)
        rows = conn.execute(f"SELECT time, temperature_2m::float8, total_precipitation::float8 FROM {table}"
                            " WHERE location_id = %s ORDER BY time", (point.location_id,)).fetchall()
    frame = pd.DataFrame(rows, columns=["time", "t", "pr"])
    frame["day"] = (pd.to_datetime(frame["time"], utc=True).dt.tz_localize(None) - pd.Timedelta(hours=8)).dt.floor("D")
    daily = frame.groupby("day").agg(tn=("t", "min"), tx=("t", "max"), tg=("t", "mean"), pr=("pr", "sum"),
                                     hours=("t", "size"))
    daily = daily.loc["1991-01-01":"2020-12-31"]
    assert len(daily) == 10958 and (daily["hours"] == 24).all()
    return daily


def _array(daily: pd.DataFrame, column: str, units: str) -> xr.DataArray:
    # The values as the product keeps them: a day's min, max, mean and total as float4.
    values = daily[column].to_numpy().astype(np.float32).astype(np.float64)
    return xr.DataArray(values, coords={"time": daily.index.to_numpy()}, dims="time", attrs={"units": units})


def _xclim(daily: pd.DataFrame) -> dict[str, np.ndarray]:
    tn, tx, tg = (_array(daily, c, "degC") for c in ("tn", "tx", "tg"))
    return xclim_indices(tn, tx, tg, _array(daily, "pr", "mm/d"))


@pytest.fixture(scope="module")
def ours(places_table: str) -> dict[str, Any]:
    code, out, err, data = cli("climate", "--place", "Los Angeles", "--country", "US", "--from", "1991", "--to",
                               "2020", "--baseline", "1991-2020", "--index", *NAMES, "--table", places_table,
                               "--json")
    assert code == 0, out + err
    assert data is not None and data["utc_offset_hours"] == -8
    return data


def test_the_indices_equal_xclims_on_thirty_years(db_url: str, places_table: str, ours: dict[str, Any]) -> None:
    want = _xclim(_daily(db_url, places_table))
    indices = ours["indices"]
    assert list(indices) == NAMES
    for name in NAMES:
        years = indices[name]["years"]
        assert [r["year"] for r in years] == list(range(1991, 2021)) and not any(r["partial"] for r in years)
        got = np.array([r["value"] for r in years], dtype=np.float64)
        assert got == pytest.approx(want[name], abs=1e-3), name
    # Each index means something here: not a column of zeros that any code would match.
    for name in ("frost_days", "summer_days", "tropical_nights", "tx90p", "rx1day", "heating_degree_days"):
        assert want[name].sum() > 0, name


def test_each_index_has_its_trend(ours: dict[str, Any]) -> None:
    from scipy import stats

    years = ours["indices"]["summer_days"]["years"]
    x = np.array([r["year"] for r in years], dtype=float)
    y = np.array([r["value"] for r in years], dtype=float)
    trend = ours["indices"]["summer_days"]["trend_per_decade"]
    assert trend["ols"] == pytest.approx(stats.linregress(x, y).slope * 10)
    assert trend["theil_sen"] == pytest.approx(stats.theilslopes(y, x).slope * 10)


@pytest.fixture
def wet_new_year(db_url: str) -> Iterator[str]:
    """Jakarta's 85 years in a table of their own, with a planted downpour (20 mm an hour) over the local
    days (UTC+7) of 30 December 1960 to 1 January 1961: the wettest five days of 1961 are then the
    windows ending on 1-3 January, which reach back into 1960."""
    table = f"c_{uuid.uuid4().hex[:10]}"
    code, out, err, _ = cli("load-file", str(download("jakarta")), "--table", table)
    assert code == 0, out + err
    try:
        with connect(db_url, autocommit=True) as conn:
            conn.execute(f"UPDATE {table} SET total_precipitation = 20 WHERE time >= '1960-12-29T17:00Z'"
                         " AND time < '1961-01-01T17:00Z'")
        yield table
    finally:
        forget(db_url, table)


def test_a_years_index_does_not_depend_on_from_or_the_baseline(wet_new_year: str) -> None:
    """rx5day of 1961 is the same read from 1961 with a baseline starting in 1961 or in 1960, or read
    from 1950: its first windows reach back into the days before the first year read, which the reader
    fetches whatever that year is (it dropped them when 1961 was the first year read)."""
    answers = []
    for first, baseline in (("1961", "1961-1990"), ("1961", "1960-1990"), ("1950", "1961-1990")):
        code, out, err, data = cli("climate", "--place", "Jakarta", "--variable", "total_precipitation",
                                   "--from", first, "--to", "1962", "--baseline", baseline, "--index", "rx5day",
                                   "--table", wet_new_year, "--json")
        assert code == 0 and data is not None, out + err
        answers.append({r["year"]: r["value"] for r in data["indices"]["rx5day"]["years"] if r["year"] >= 1961})
    assert answers[0] == answers[1] == answers[2]
    assert answers[0][1961] > 3 * 24 * 20 - 1  # the planted days' windows: at least their 3 x 24 hours
