"""A place's series from a month loaded through the pipeline: the nearest grid point, the exact rows of
the range (start included, end excluded) hourly from the hypertable and daily or monthly from the
rollups, and what a read refuses."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from era5etl.core.grid import Area, Grid, location_ids
from era5etl.core.variables import DATA_COLUMNS
from era5etl.db import connect
from era5etl.read.columns import ROLLUP_VALUES
from era5etl.read.errors import ReadError
from era5etl.read.points import Point, coordinates, distance_km
from era5etl.read.rollup_check import area_ids
from era5etl.read.series import nearest_point, series, series_csv, series_json
from localcds.server import LocalCDS

from .common import AREA, run_month


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _rows(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with connect(url) as conn:
        return conn.execute(sql, params).fetchall()


def _f32(values: list[Any]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=np.float32)


def _brute_force(ids: np.ndarray, lat: float, lon: float) -> int:
    lats, lons = coordinates(ids)
    d = distance_km(lat, lon, lats, lons)
    return int(ids[np.lexsort((ids, d))[0]])


def test_the_nearest_loaded_grid_point_is_chosen(db_url: str, month_table: str) -> None:
    ids = area_ids(Area.parse(AREA), Grid())
    rng = np.random.default_rng(5)
    places = [(45.5, 7.5), (45.61, 7.39), (46.1, 8.1), (44.9, 6.9), (45.125, 7.125)]
    places += [(float(a), float(o)) for a, o in zip(rng.uniform(44.9, 46.1, 20), rng.uniform(6.9, 8.1, 20),
                                                    strict=True)]
    with connect(db_url) as conn:
        for lat, lon in places:
            point = nearest_point(conn, month_table, lat, lon)
            assert point.location_id == _brute_force(ids, lat, lon), (lat, lon)
            assert (point.latitude, point.longitude) == tuple(float(c[0]) for c in coordinates(
                np.array([point.location_id])))
            assert point.distance_km == pytest.approx(distance_km(lat, lon, np.array([point.latitude]),
                                                                  np.array([point.longitude]))[0])
        assert nearest_point(conn, month_table, 45.5, 7.5) == Point(int(location_ids(45.5, 7.5)), 45.5, 7.5, 0.0)
        assert nearest_point(conn, month_table, 45.5, 367.5).location_id == int(location_ids(45.5, 7.5))
        # Outside the loaded area, past half a cell: refused with the area's bounds.
        for lat, lon in ((44.8, 7.5), (45.5, 8.2), (-33.9, 18.4)):
            with pytest.raises(ReadError, match=f"{lat:g}, {lon:g} is outside the area {month_table} holds: "
                                                "46/7/45/8 "):
                nearest_point(conn, month_table, lat, lon)
        with pytest.raises(ReadError, match=r"latitude 91 is outside -90\.\.90"):
            nearest_point(conn, month_table, 91, 0)
        with pytest.raises(ReadError, match="table 'no_such_table' does not exist"):
            nearest_point(conn, "no_such_table", 45, 7)


def test_on_a_coarser_grid_the_nearest_loaded_point_is_found(
    db_url: str, table: str, read_cds: LocalCDS, tmp_path: Path
) -> None:
    # A 0.5 degree grid: the 0.25 degree lattice point nearest a place is often not loaded.
    run_month(read_cds, table, "2024-03", tmp_path, extra=("--grid", "0.5"))
    ids = area_ids(Area.parse(AREA), Grid.parse("0.5"))
    assert ids.size == 9
    rng = np.random.default_rng(6)
    with connect(db_url) as conn:
        # (45.25, 7.25), the nearest 0.25 degree point, is not loaded; (45.5, 7.5) is the nearest that is.
        assert nearest_point(conn, table, 45.3, 7.3).location_id == int(location_ids(45.5, 7.5))
        for lat, lon in zip(rng.uniform(44.9, 46.1, 30), rng.uniform(6.9, 8.1, 30), strict=True):
            assert nearest_point(conn, table, float(lat), float(lon)).location_id == _brute_force(ids, lat, lon)
        s = series(conn, table, nearest_point(conn, table, 45.3, 7.3), None, None, ["temperature_2m"], "day")
    assert len(s.time) == 31


def test_hourly_series_is_the_points_rows_exactly(db_url: str, month_table: str) -> None:
    with connect(db_url) as conn:
        point = nearest_point(conn, month_table, 45.61, 7.39)
        s = series(conn, month_table, point, None, None, None, "hour")
        wind = series(conn, month_table, point, None, None, ["wind_speed_10m", "temperature_2m"], "hour")
    rows = _rows(db_url, f"SELECT time, {', '.join(DATA_COLUMNS)} FROM {month_table} WHERE location_id = %s"
                         " ORDER BY time", point.location_id)
    assert len(rows) == 744 and s.step == "hour" and s.columns == list(DATA_COLUMNS)
    assert [t.replace(tzinfo=None) for t in s.time.astype(datetime)] == [r[0].replace(tzinfo=None) for r in rows]
    for i, column in enumerate(DATA_COLUMNS, start=1):
        assert s.values[column].dtype == np.float32
        assert np.array_equal(s.values[column], _f32([r[i] for r in rows]), equal_nan=True), column
    u, v = (_f32([r[i] for r in rows]).astype(np.float64) for i in (2, 3))
    assert np.array_equal(wind.values["wind_speed_10m"], np.sqrt(u * u + v * v).astype(np.float32))
    assert wind.columns == ["wind_speed_10m", "temperature_2m"]


def test_the_edges_of_the_range(db_url: str, month_table: str) -> None:
    with connect(db_url) as conn:
        point = nearest_point(conn, month_table, 45.5, 7.5)

        def times(start: datetime | None, end: datetime | None, step: str = "hour") -> list[str]:
            s = series(conn, month_table, point, start, end, ["temperature_2m"], step)  # type: ignore[arg-type]
            return [str(t) for t in s.time.astype("datetime64[s]")]

        day = times(_at("2024-03-05T00:00"), _at("2024-03-06T00:00"))
        assert len(day) == 24 and day[0] == "2024-03-05T00:00:00" and day[-1] == "2024-03-05T23:00:00"
        assert times(_at("2024-03-05T07:00"), _at("2024-03-05T08:00")) == ["2024-03-05T07:00:00"]
        assert times(datetime(2024, 3, 31, 23), None) == ["2024-03-31T23:00:00"]  # naive is UTC; None: to the end
        assert len(times(None, _at("2024-03-01T02:00"))) == 2
        assert times(_at("2024-03-05T00:00"), _at("2024-03-07T00:00"), "day") == [
            "2024-03-05T00:00:00", "2024-03-06T00:00:00"]
        assert times(_at("2024-02-01T00:00"), _at("2024-04-01T00:00"), "month") == ["2024-03-01T00:00:00"]
        for start, end, step in ((_at("2024-03-05T00:00"), _at("2024-03-05T00:00"), "hour"),
                                 (_at("2024-04-01T00:00"), None, "hour"),
                                 (_at("2024-03-02T00:00"), None, "month")):
            with pytest.raises(ReadError, match=f"point {point.location_id} .* loaded there: 2024-03-01T00:00:00Z "
                                                f"to 2024-03-{'01' if step == 'month' else '31'}"):
                times(start, end, step)


def test_daily_and_monthly_series_are_the_rollups_rows(db_url: str, month_table: str) -> None:
    with connect(db_url) as conn:
        point = nearest_point(conn, month_table, 45.75, 7.25)
        daily = series(conn, month_table, point, None, None, None, "day")
        monthly = series(conn, month_table, point, None, None, ["temperature_2m", "hours"], "month")
    for s, relation in ((daily, f"{month_table}_daily"), (monthly, f"{month_table}_monthly")):
        rows = _rows(db_url, f"SELECT bucket, hours, {', '.join(ROLLUP_VALUES)} FROM {relation}"
                             " WHERE location_id = %s ORDER BY bucket", point.location_id)
        assert [str(t) for t in s.time.astype("datetime64[s]")] == [
            f"{r[0]:%Y-%m-%dT%H:%M:%S}" for r in rows]
        for column in s.columns:
            i = 1 if column == "hours" else 2 + ROLLUP_VALUES.index(column)
            expected = np.array([r[i] for r in rows]) if column == "hours" else _f32([r[i] for r in rows])
            assert np.array_equal(s.values[column], expected, equal_nan=True), column
    assert len(daily.time) == 31 and daily.columns == list(ROLLUP_VALUES)
    assert monthly.columns == ["temperature_2m_min", "temperature_2m_max", "temperature_2m_mean", "hours"]
    assert monthly.values["hours"].tolist() == [744]


def test_as_json_and_csv(db_url: str, month_table: str) -> None:
    with connect(db_url) as conn:
        point = nearest_point(conn, month_table, 45.6, 7.4)
        s = series(conn, month_table, point, _at("2024-03-10T00:00"), _at("2024-03-12T00:00"),
                   ["temperature_2m", "total_precipitation"], "day")
    data = series_json(s)
    assert data["point"] == {"location_id": point.location_id, "latitude": 45.5, "longitude": 7.5,
                             "distance_km": point.distance_km}
    assert (data["step"], data["columns"]) == ("day", ["temperature_2m_min", "temperature_2m_max",
                                                       "temperature_2m_mean", "total_precipitation_sum"])
    assert data["units"] == {"temperature_2m_min": "degC", "temperature_2m_max": "degC",
                             "temperature_2m_mean": "degC", "total_precipitation_sum": "mm"}
    assert data["time"] == ["2024-03-10T00:00:00Z", "2024-03-11T00:00:00Z"]
    for column in s.columns:
        assert np.array_equal(np.array(data["values"][column], dtype=np.float32), s.values[column])
    table = list(csv.DictReader(io.StringIO(series_csv(s))))
    assert [r["time"] for r in table] == data["time"]
    for column in s.columns:
        assert np.array_equal(np.array([float(r[column]) for r in table], dtype=np.float32), s.values[column])


def test_what_a_series_refuses(db_url: str, month_table: str) -> None:
    with connect(db_url) as conn:
        point = nearest_point(conn, month_table, 45.5, 7.5)
        with pytest.raises(ReadError, match=r"unknown variable\(s\) 'rain' at step=hour; the known ones are "
                                            "temperature_2m, zonal_wind_10m"):
            series(conn, month_table, point, None, None, ["rain"], "hour")
        with pytest.raises(ReadError, match="'zonal_wind_10m' at step=month"):
            series(conn, month_table, point, None, None, ["zonal_wind_10m"], "month")
        with pytest.raises(ReadError, match="step 'week'"):
            series(conn, month_table, point, None, None, None, "week")  # type: ignore[arg-type]
        elsewhere = Point(1, -90.0, -179.75, 0.0)
        with pytest.raises(ReadError, match=r"no rows in .*_daily at point 1 .*rollups are written by the load with"):
            series(conn, month_table, elsewhere, None, None, None, "day")
