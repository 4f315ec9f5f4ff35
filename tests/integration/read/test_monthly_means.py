"""Reads of a table of monthly means, each against SQL over its rows: a place's series by month, the map
of a month, and the climate's yearly values, anomalies and trend (a month weighs its days; an
accumulation's mean daily total x its days is the month's total). Days are refused: the table has
none. The table: the real new-CDS download of 2005-2024 (t2m and tp, 63 x 35 points), loaded once."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from era5etl.db import connect
from era5etl.read.climate_read import climate_request
from era5etl.read.errors import ReadError
from era5etl.read.maps import hour_map
from era5etl.read.points import nearest_point
from era5etl.read.series import series, series_json
from era5etl.read.where import Where

from ..helpers import cli, forget

FILES = ("era5mm_newcds_nc_t2m_avgua_2005-2024_63x35.nc", "era5mm_newcds_nc_tp_avgad_2005-2024_63x35.nc")
PLACE = (15.0, 105.0)


@pytest.fixture(scope="module")
def mm_table(db_url: str, samples: Path) -> Iterator[str]:
    table = f"mmr_{uuid.uuid4().hex[:8]}"
    code, out, err, summary = cli("load-file", *(str(samples / f) for f in FILES), "--table", table, "--json")
    assert code == 0, out + err
    assert summary is not None and summary["rows"] == 240 * 63 * 35
    yield table
    forget(db_url, table)


def _place_rows(url: str, table: str, location_id: int) -> list[tuple[Any, ...]]:
    with connect(url) as conn:
        return conn.execute(f"SELECT time, temperature_2m, total_precipitation FROM {table} WHERE location_id = %s"
                            " ORDER BY time", (location_id,)).fetchall()


def test_a_places_series_is_its_monthly_rows(db_url: str, mm_table: str) -> None:
    with connect(db_url) as conn:
        point = nearest_point(conn, mm_table, *PLACE)
        for step in ("hour", "month"):  # --monthly and the plain series read the same rows: they are months
            s = series(conn, mm_table, point, None, None, ["temperature_2m", "total_precipitation"], step)
            data = series_json(s)
            rows = _place_rows(db_url, mm_table, point.location_id)
            assert data["step"] == "month" and len(data["time"]) == len(rows) == 240
            assert [datetime.fromisoformat(t.replace("Z", "+00:00")) for t in data["time"]] == [r[0] for r in rows]
            assert s.values["temperature_2m"].tolist() == [np.float32(r[1]) for r in rows]
            assert s.values["total_precipitation"].tolist() == [np.float32(r[2]) for r in rows]
            assert data["units"] == {"temperature_2m": "degC", "total_precipitation": "mm/day"}
        with pytest.raises(ReadError, match="no days"):
            series(conn, mm_table, point, None, None, None, "day")
        with pytest.raises(ReadError, match="mean speed"):
            series(conn, mm_table, point, None, None, ["wind_speed_10m"], "month")


def test_the_map_of_a_month_is_its_rows(db_url: str, mm_table: str) -> None:
    with connect(db_url) as conn:
        # Any hour of the month names the month's row (00 UTC on the 1st).
        m = hour_map(conn, mm_table, datetime(2010, 7, 15, 12, tzinfo=UTC), "total_precipitation", None)
        want = conn.execute(f"SELECT latitude, longitude, total_precipitation FROM {mm_table}"
                            " WHERE time = '2010-07-01T00:00Z' ORDER BY location_id").fetchall()
    assert m.time == datetime(2010, 7, 1, tzinfo=UTC) and m.unit == "mm/day"
    assert m.values.size == len(want) == 63 * 35
    assert m.values.tolist() == [np.float32(r[2]) for r in want]
    assert m.latitude.tolist() == [np.float32(r[0]) for r in want]
    code, out, err, got = cli("map", "2010-07", "--variable", "total_precipitation", "--table", mm_table, "--json")
    assert code == 0, out + err
    assert got is not None and got["unit"] == "mm/day" and got["time"].startswith("2010-07-01T00:00")
    assert len(got["values"]) == 63 * 35


@pytest.mark.parametrize(("variable", "total"), [("temperature_2m", False), ("total_precipitation", True)])
def test_climate_years_anomalies_and_trend_are_those_of_the_months(db_url: str, mm_table: str, variable: str,
                                                                    total: bool) -> None:
    with connect(db_url) as conn:
        data = climate_request(conn, mm_table, Where(*PLACE), variable, (2006, 2015))
        point = data["point"]["grid_point"]["location_id"]
        days = "extract(day FROM (time + interval '1 month' - interval '1 day') AT TIME ZONE 'UTC')"
        # A year: its months' values weighted by their days (a total: the mean daily total x the days).
        aggregate = f"sum({variable}::float8 * {days})" + ("" if total else f" / sum({days})")
        want = dict(conn.execute(f"SELECT extract(year FROM time AT TIME ZONE 'UTC')::int, {aggregate} FROM {mm_table}"
                                 " WHERE location_id = %s GROUP BY 1 ORDER BY 1", (point,)).fetchall())
    assert data["statistic"] == ("total" if total else "mean") and data["indices"] == {}
    years = {r["year"]: r for r in data["years"]}
    assert sorted(years) == sorted(want) == list(range(2005, 2025))
    for year, value in want.items():
        assert years[year]["value"] == pytest.approx(value, rel=1e-9)
        assert years[year]["days"] == (366 if year % 4 == 0 else 365)
    normal = np.mean([want[y] for y in range(2006, 2016)])
    assert data["baseline_value"] == pytest.approx(normal, rel=1e-9)
    for year, value in want.items():
        assert years[year]["anomaly"] == pytest.approx(value - normal, rel=1e-6, abs=1e-9)
    slope = np.polyfit(list(want), list(want.values()), 1)[0] * 10
    assert data["trend_per_decade"]["ols"] == pytest.approx(slope, rel=1e-6)
    with connect(db_url) as conn, pytest.raises(ReadError, match="daily indices"):
        climate_request(conn, mm_table, Where(*PLACE), "temperature_2m", (2006, 2015), indices=["frost_days"])
