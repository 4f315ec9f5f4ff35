"""An hour's map from a month loaded through the pipeline: the hour's rows exactly, an area's part of
them, the wind speed derived, and what a map refuses."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

import numpy as np
import pytest

from era5etl.core.grid import Area
from era5etl.db import connect
from era5etl.read.errors import ReadError
from era5etl.read.maps import hour_map, map_csv, map_json

AT = datetime(2024, 3, 2, 5, tzinfo=UTC)


def _hour_rows(url: str, table: str, column: str, at: datetime = AT) -> list[tuple[float, float, float]]:
    with connect(url) as conn:
        return [(float(a), float(o), float(v)) for a, o, v in conn.execute(
            f"SELECT latitude::float8, longitude::float8, {column}::float8 FROM {table} WHERE time = %s"
            " ORDER BY location_id",
            (at,)).fetchall()]


def test_an_hours_map_is_its_rows(db_url: str, month_table: str) -> None:
    rows = _hour_rows(db_url, month_table, "temperature_2m")
    with connect(db_url) as conn:
        m = hour_map(conn, month_table, AT, "temperature_2m", None)
        naive = hour_map(conn, month_table, AT.replace(tzinfo=None), "temperature_2m", None)  # naive is UTC
        part = hour_map(conn, month_table, AT, "temperature_2m", Area.parse("46/7/45.5/7.5"))
        wind = hour_map(conn, month_table, AT, "wind_speed_10m", None)
    assert len(rows) == 25 and m.time == AT and m.variable == "temperature_2m"
    got = list(zip(m.latitude.tolist(), m.longitude.tolist(), m.values.tolist(), strict=True))
    assert got == rows  # ordered by location_id: south to north, west to east
    assert np.array_equal(naive.values, m.values)
    assert list(zip(part.latitude.tolist(), part.longitude.tolist(), part.values.tolist(), strict=True)) == [
        r for r in rows if r[0] >= 45.5 and r[1] <= 7.5]
    u = np.array([r[2] for r in _hour_rows(db_url, month_table, "zonal_wind_10m")])
    v = np.array([r[2] for r in _hour_rows(db_url, month_table, "meridional_wind_10m")])
    assert np.array_equal(wind.values, np.sqrt(u * u + v * v).astype(np.float32))


def test_as_json_and_csv(db_url: str, month_table: str) -> None:
    with connect(db_url) as conn:
        m = hour_map(conn, month_table, AT, "total_precipitation", Area.parse("45.5/7/45/8"))
    data = map_json(m)
    assert (data["time"], data["variable"], data["unit"]) == ("2024-03-02T05:00:00Z", "total_precipitation", "mm")
    assert len(data["latitude"]) == len(data["longitude"]) == len(data["values"]) == 15
    assert np.array_equal(np.array(data["values"], dtype=np.float32), m.values)
    table = list(csv.DictReader(io.StringIO(map_csv(m))))
    assert list(table[0]) == ["latitude", "longitude", "total_precipitation"]
    assert [(float(r["latitude"]), float(r["longitude"])) for r in table] == list(
        zip(m.latitude.tolist(), m.longitude.tolist(), strict=True))
    assert np.array_equal(np.array([float(r["total_precipitation"]) for r in table], dtype=np.float32), m.values)


def test_what_a_map_refuses(db_url: str, month_table: str) -> None:
    with connect(db_url) as conn:
        with pytest.raises(ReadError, match=f"2023-06-01T00:00:00Z is not loaded in {month_table}: it holds hours "
                                            "from 2024-03-01T00:00:00Z to 2024-03-31T23:00:00Z"):
            hour_map(conn, month_table, datetime(2023, 6, 1, tzinfo=UTC), "temperature_2m", None)
        with pytest.raises(ReadError, match="not on the hour"):
            hour_map(conn, month_table, AT.replace(minute=30), "temperature_2m", None)
        with pytest.raises(ReadError, match="unknown variable 'rain'; a map shows one of temperature_2m"):
            hour_map(conn, month_table, AT, "rain", None)
        with pytest.raises(ReadError, match=f"{month_table} holds no grid point inside 10/0/0/5 at "
                                            "2024-03-02T05:00:00Z; that hour's points lie in 46/7/45/8"):
            hour_map(conn, month_table, AT, "temperature_2m", Area.parse("10/0/0/5"))
        with pytest.raises(ReadError, match="table 'no_such_table' does not exist"):
            hour_map(conn, "no_such_table", AT, "temperature_2m", None)
