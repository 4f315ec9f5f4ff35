"""Reads of a table of monthly means, each against SQL over its rows: a place's series by month, the map
of a month, and the climate's yearly values, anomalies and trend (a month weighs its days; an
accumulation's mean daily total x its days is the month's total). Days are refused: the table has
none. The table: the real new-CDS download of 2005-2024 (t2m and tp, 63 x 35 points), loaded once."""

from __future__ import annotations

import json
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


AREA = "16/104/14/106"  # 9 x 9 of the sample's points
# A region across partial cells inside the sample's box (23.5..8 N, 102..110.5 E).
TRIANGLE = [[103.61, 11.37], [107.2, 12.1], [104.9, 14.93], [103.61, 11.37]]


def _months(db_url: str, table: str, where: str, params: tuple[Any, ...] = ()) -> dict[str, np.ndarray]:
    with connect(db_url) as conn:
        rows = conn.execute(f"SELECT time, location_id, latitude::float8, longitude::float8, temperature_2m::float8,"
                            f" total_precipitation::float8 FROM {table} WHERE {where} ORDER BY time, location_id",
                            params).fetchall()
    names = ("time", "id", "lat", "lon", "temperature_2m", "total_precipitation")
    out = {k: np.array([r[i] for r in rows]) for i, k in enumerate(names)}
    out["time"] = np.array([r[0].replace(tzinfo=None) for r in rows], dtype="datetime64[s]")
    return out


def _weighted(rows: dict[str, np.ndarray], weights: dict[int, float], variable: str) -> dict[str, list[float]]:
    """Per month the points' weighted mean, least and greatest value of ``variable``, and the points."""
    out: dict[str, list[float]] = {"time": [], "mean": [], "min": [], "max": [], "points": []}
    for t in np.unique(rows["time"]):
        mine = (rows["time"] == t) & np.isin(rows["id"], list(weights))
        v, w = rows[variable][mine], np.array([weights[int(i)] for i in rows["id"][mine]])
        out["time"].append(t)
        out["mean"].append(float(np.sum(v * w) / np.sum(w)))
        out["min"].append(float(v.min()))
        out["max"].append(float(v.max()))
        out["points"].append(int(mine.sum()))
    return out


def _month_hours(times: list[Any]) -> np.ndarray:
    months = np.array(times, dtype="datetime64[M]")
    return ((months + 1).astype("datetime64[D]") - months.astype("datetime64[D]")).astype(np.int64) * 24


@pytest.mark.parametrize("how", ["area", "region"])
def test_an_areas_and_a_regions_months_are_their_points_weighted_months(
    db_url: str, mm_table: str, tmp_path: Path, how: str
) -> None:
    from ...region_reference import shapely_weights

    rows = _months(db_url, mm_table, "time >= '2010-01-01' AND time < '2011-01-01'")
    if how == "area":
        inside = (rows["lat"] >= 14) & (rows["lat"] <= 16) & (rows["lon"] >= 104) & (rows["lon"] <= 106)
        weights = {int(i): float(np.cos(np.radians(lat))) for i, lat in zip(rows["id"][inside], rows["lat"][inside],
                                                                               strict=True)}
        where = ["--area", AREA]
    else:
        import shapely

        path = tmp_path / "triangle.geojson"
        path.write_text(json.dumps({"type": "Polygon", "coordinates": [TRIANGLE]}))
        weights = shapely_weights(shapely.geometry.shape({"type": "Polygon", "coordinates": [TRIANGLE]}), rows, 0.25)
        where = ["--region-file", str(path)]
    code, out, err, got = cli("series", *where, "--monthly", "--variables", "temperature_2m,total_precipitation",
                              "--from", "2010-01-01", "--to", "2010-12-31", "--table", mm_table, "--json")
    assert code == 0, out + err
    assert got is not None and got["step"] == "month"
    for variable in ("temperature_2m", "total_precipitation"):
        want = _weighted(rows, weights, variable)
        assert got["time"] == [f"{t}Z" for t in np.array(want["time"], dtype="datetime64[s]").astype(str)]
        assert got["points"] == want["points"] == [len(weights)] * 12
        assert got["hours"] == (np.array(want["points"]) * _month_hours(want["time"])).tolist()
        for agg in ("mean", "min", "max"):
            np.testing.assert_allclose(got["values"][f"{variable}_{agg}"], want[agg], rtol=1e-9, atol=1e-9)
    assert got["units"]["total_precipitation_mean"] == "mm/day"  # a mean daily total
    assert got["units"]["temperature_2m_mean"] == "degC"


def test_an_areas_climate_is_made_of_its_weighted_months(db_url: str, mm_table: str) -> None:
    from era5etl.read.climate_read import area_climate

    rows = _months(db_url, mm_table, "latitude BETWEEN 14 AND 16 AND longitude BETWEEN 104 AND 106")
    weights = {int(i): float(np.cos(np.radians(lat))) for i, lat in zip(rows["id"], rows["lat"], strict=True)}
    months = _weighted(rows, weights, "total_precipitation")
    days = _month_hours(months["time"]) // 24
    years = np.array(months["time"], dtype="datetime64[Y]").astype(int) + 1970
    with connect(db_url) as conn:
        data = area_climate(conn, mm_table, AREA, "total_precipitation", (2006, 2015))
        with pytest.raises(ReadError, match="no days"):
            area_climate(conn, mm_table, AREA, "temperature_2m", (2006, 2015), tz="+7")
    # A year's total: its months' mean daily totals x their days.
    want = {int(y): float(np.sum(np.array(months["mean"])[years == y] * days[years == y])) for y in np.unique(years)}
    got = {r["year"]: r["value"] for r in data["years"]}
    assert sorted(got) == list(range(2005, 2025))
    for year, value in want.items():
        assert got[year] == pytest.approx(value, rel=1e-9)
    assert "months of monthly-means" in data["area"]["described"] and data["area"]["points"] == 81


def test_an_areas_days_are_refused_on_a_table_of_months(mm_table: str) -> None:
    for extra in (["--daily"], ["--daily", "--tz", "+7"]):
        code, _, err, _ = cli("series", "--area", AREA, *extra, "--table", mm_table)
        assert code == 2 and "no days" in err, err
