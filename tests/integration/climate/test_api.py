"""The Python API (era5etl.api) answers what the CLI's JSON answers for the same request: a place's
series as a DataFrame (UTC days and local days), the climate per year as a DataFrame with the whole
object in its attrs, and an area's hours as an xarray Dataset (time, latitude, longitude) whose every
grid point at an hour equals ``map --json``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from era5etl import api
from era5etl.read.errors import ReadError

from ..helpers import cli

BOX = "45.5/7/45/7.5"


def test_a_places_series_is_the_clis(db_url: str, places_table: str) -> None:
    frame = api.series("Jakarta", start="2024-01-01", end="2024-02-01", step="day", table=places_table, url=db_url)
    code, _, err, want = cli("series", "--place", "Jakarta", "--daily", "--from", "2024-01-01", "--to", "2024-01-31",
                             "--table", places_table, "--json")
    assert code == 0, err
    assert want is not None
    assert frame.attrs["point"] == want["point"] and frame.attrs["described"].startswith("Jakarta, ID")
    assert list(frame.columns) == want["columns"] and len(frame) == 31
    assert [t.strftime("%Y-%m-%dT%H:%M:%SZ") for t in frame.index] == want["time"]
    for column in want["columns"]:
        assert frame[column].tolist() == pytest.approx([math.nan if v is None else v for v in want["values"][column]],
                                                       nan_ok=True), column


def test_local_days_are_indexed_in_their_offset(db_url: str, places_table: str) -> None:
    frame = api.series("Los Angeles", country="US", start="2000-07-01", end="2000-07-08", step="day", tz="local",
                       variables=["temperature_2m_max"], table=places_table, url=db_url)
    code, _, err, want = cli("series", "--place", "Los Angeles", "--country", "US", "--daily", "--tz", "local",
                             "--from", "2000-07-01", "--to", "2000-07-07", "--variables", "temperature_2m_max",
                             "--table", places_table, "--json")
    assert code == 0, err
    assert want is not None
    assert [t.isoformat() for t in frame.index] == want["time"]
    assert frame["temperature_2m_max"].tolist() == pytest.approx(want["values"]["temperature_2m_max"])
    assert frame.attrs["utc_offset_hours"] == -8


def test_the_climate_frame_is_the_clis_json(db_url: str, places_table: str) -> None:
    frame = api.climate("Jakarta", baseline=(1961, 1990), first=1970, indices=["tropical_nights", "rx5day"],
                        table=places_table, url=db_url)
    code, _, err, want = cli("climate", "--place", "Jakarta", "--baseline", "1961-1990", "--from", "1970", "--index",
                             "tropical_nights", "rx5day", "--table", places_table, "--json")
    assert code == 0, err
    assert frame.attrs["climate"] == want
    assert list(frame.index) == [r["year"] for r in want["years"]]
    complete = [r for r in want["years"] if not r["partial"]]
    assert frame.loc[[r["year"] for r in complete], "anomaly"].tolist() == [r["anomaly"] for r in complete]
    nights = {r["year"]: r["value"] for r in want["indices"]["tropical_nights"]["years"]}
    assert frame.loc[2000, "tropical_nights"] == nights[2000]


def test_an_areas_hours_are_a_dataset_equal_to_each_hours_map(db_url: str, places_table: str) -> None:
    ds = api.area(BOX, "2024-01-15T00:00", "2024-01-15T06:00", variables=["temperature_2m", "total_precipitation"],
                  table=places_table, url=db_url)
    assert dict(ds.sizes) == {"time": 6, "latitude": 3, "longitude": 3}
    assert ds["latitude"].values.tolist() == [45.5, 45.25, 45.0] and ds["longitude"].values.tolist() == [7.0, 7.25, 7.5]
    assert ds["temperature_2m"].attrs["units"] == "degC"
    for hour in ("2024-01-15T00:00", "2024-01-15T05:00"):
        code, _, err, want = cli("map", hour, "--area", BOX, "--table", places_table, "--json")
        assert code == 0, err
        assert want is not None and len(want["values"]) == 9
        at = ds["temperature_2m"].sel(time=np.datetime64(hour))
        for lat, lon, value in zip(want["latitude"], want["longitude"], want["values"], strict=True):
            assert float(at.sel(latitude=lat, longitude=lon)) == pytest.approx(value, rel=1e-6)
    daily = api.area(BOX, "2024-01-01", "2024-02-01", step="day", variables=["temperature_2m"], table=places_table,
                     url=db_url)
    assert dict(daily.sizes) == {"time": 31, "latitude": 3, "longitude": 3}
    assert float(daily["temperature_2m_max"].max()) == pytest.approx(float(api.area(
        BOX, "2024-01-01", "2024-02-01", variables=["temperature_2m"], table=places_table, url=db_url
    )["temperature_2m"].max()))
    with pytest.raises(ReadError, match="at most"):
        api.area("60/-10/30/40", "2000-01-01", "2024-01-01", table=places_table, url=db_url)
