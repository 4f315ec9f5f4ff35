"""A region's series on ERA5-Land's 0.1 degree lattice and at one level of a pressure-level table
(``series --region-file``): per step the mean of the points' values weighted by each cell's overlap
with the outline x cos(latitude), equal to a reference computed here with shapely cell by cell on the
table's own lattice from the hourly rows (a land table's sea points hold no row and weigh nothing);
PostGIS's weights on the 0.1 degree lattice are shapely's (read.regions.cell_weights); a region on a
table on levels needs a level."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import shapely

from era5etl.core.datasets import LAND_GRID
from era5etl.db import connect
from era5etl.read.region_weights import GRIDS, digest, weighed
from era5etl.read.regions import cell_weights, region_from_geojson

from ...region_reference import shapely_weights
from ..helpers import cli, http_reads, same_numbers

pytestmark = pytest.mark.integration

# Partial cells on both lattices: inside the land sample's box (44.5..43.5 N, 19.5..20.8 E) and the
# pressure-level sample's (9 x 9 points around 35 N, 117 W).
LAND_TRIANGLE = [[19.62, 43.63], [20.55, 43.71], [20.03, 44.38], [19.62, 43.63]]
LEVEL_TRIANGLE = [[-117.61, 34.68], [-116.42, 34.9], [-117.1, 35.62], [-117.61, 34.68]]


def _outline_file(tmp_path: Path, ring: list[list[float]]) -> Path:
    path = tmp_path / "triangle.geojson"
    path.write_text(json.dumps({"type": "Polygon", "coordinates": [ring]}))
    return path


def _hours(db_url: str, table: str, variable: str, level: int | None) -> dict[str, np.ndarray]:
    """The table's hourly rows (at ``level``): time (datetime64[h], UTC), id, latitude, longitude, value."""
    at = "" if level is None else f" WHERE level = {int(level)}"
    with connect(db_url) as conn:
        rows = conn.execute(f"SELECT time, location_id, latitude::float8, longitude::float8, {variable}::float8"
                            f" FROM {table}{at}").fetchall()
    return {"time": np.array([r[0].replace(tzinfo=None) for r in rows], dtype="datetime64[h]"),
            **{k: np.array([r[i] for r in rows]) for i, k in enumerate(("id", "lat", "lon", "value"), start=1)}}


def _reference(rows: dict[str, np.ndarray], weights: dict[int, float], unit: str) -> dict[str, list[Any]]:
    """Per step (``unit``: "h", "D" or "M") the points holding rows, the weighted mean of their means
    over the step, the least of their minima and the greatest of their maxima."""
    steps = rows["time"].astype(f"datetime64[{unit}]")
    out: dict[str, list[Any]] = {"time": [], "points": [], "mean": [], "min": [], "max": []}
    for step in np.unique(steps):
        mine = steps == step
        held = [p for p in weights if (mine & (rows["id"] == p)).any()]
        values = [rows["value"][mine & (rows["id"] == p)] for p in held]
        out["time"].append(np.datetime64(step, "s").astype(str) + "Z")
        out["points"].append(len(held))
        out["mean"].append(float(np.average([v.mean() for v in values], weights=[weights[p] for p in held])))
        out["min"].append(float(min(v.min() for v in values)))
        out["max"].append(float(max(v.max() for v in values)))
    return out


def _series(table: str, path: Path, variable: str, flag: list[str], *more: str) -> dict[str, Any]:
    code, _, err, got = cli("series", "--region-file", str(path), "--table", table, *flag, "--variables", variable,
                            *more, "--json")
    assert code == 0, err
    assert got is not None
    return got


def _check(got: dict[str, Any], want: dict[str, list[Any]], variable: str) -> None:
    assert got["time"] == want["time"]
    assert got["points"] == want["points"]
    for agg in ("mean", "min", "max"):
        np.testing.assert_allclose(got["values"][f"{variable}_{agg}"], want[agg], rtol=1e-6, atol=1e-5,
                                   err_msg=agg)


def test_postgis_weighs_the_land_lattices_cells_as_shapely_does(db_url: str) -> None:
    region = region_from_geojson({"type": "Polygon", "coordinates": [LAND_TRIANGLE]}, "land triangle")
    want_ids, want_weights, want_lats, want_lons = cell_weights(region.outline, LAND_GRID)
    with connect(db_url) as conn:
        conn.execute("DELETE FROM era5_regions WHERE digest = %s", (digest(region.outline),))
        conn.commit()
        land = weighed(conn, region, LAND_GRID)
        coarse = weighed(conn, land)  # the same outline on ERA5's lattice: its own rows, its own id
        again = weighed(conn, coarse, LAND_GRID)
        grids = conn.execute("SELECT grid FROM era5_regions WHERE digest = %s ORDER BY grid",
                             (digest(region.outline),)).fetchall()
    assert land.ids.tolist() == want_ids.tolist() and land.grid == GRIDS[LAND_GRID]
    assert np.allclose(land.weights, want_weights, rtol=1e-9, atol=1e-12)
    assert np.array_equal(land.latitudes, want_lats) and np.array_equal(land.longitudes, want_lons)
    assert coarse.region_id != land.region_id and coarse.points < land.points
    assert again.region_id == land.region_id and again.ids.tolist() == land.ids.tolist()
    assert [g for (g,) in grids] == sorted(GRIDS.values())


@pytest.mark.parametrize(("flag", "unit"), [([], "h"), (["--daily"], "D"), (["--monthly"], "M")])
def test_a_regions_series_on_era5_land_weighs_its_0_1_degree_cells(
    db_url: str, land_table: str, tmp_path: Path, flag: list[str], unit: str
) -> None:
    path = _outline_file(tmp_path, LAND_TRIANGLE)
    rows = _hours(db_url, land_table, "temperature_2m", None)
    if unit == "h":  # two days of hours
        keep = rows["time"] < np.datetime64("2020-01-03T00")
        rows = {k: v[keep] for k, v in rows.items()}
    weights = shapely_weights(shapely.geometry.shape({"type": "Polygon", "coordinates": [LAND_TRIANGLE]}), rows, 0.1)
    assert len(weights) > 20  # the triangle's 0.1 degree cells, not the few 0.25 degree ones
    got = _series(land_table, path, "temperature_2m", flag, "--from", "2020-01-01",
                  "--to", "2020-01-02" if unit == "h" else "2020-01-31")
    assert got["region"]["points"] == len(weights)
    _check(got, _reference(rows, weights, unit), "temperature_2m")


@pytest.mark.parametrize(("flag", "unit"), [([], "h"), (["--daily"], "D"), (["--monthly"], "M")])
def test_a_regions_series_at_a_level_is_that_levels_weighted_means(
    db_url: str, pl_table: str, tmp_path: Path, flag: list[str], unit: str
) -> None:
    path = _outline_file(tmp_path, LEVEL_TRIANGLE)
    outline = shapely.geometry.shape({"type": "Polygon", "coordinates": [LEVEL_TRIANGLE]})
    rows = _hours(db_url, pl_table, "temperature", 500)
    weights = shapely_weights(outline, rows, 0.25)
    got = _series(pl_table, path, "temperature", flag, "--from", "2016-05-01", "--to", "2025-06-30", "--level", "500")
    _check(got, _reference(rows, weights, unit), "temperature")
    other = _series(pl_table, path, "temperature", flag, "--from", "2016-05-01", "--to", "2025-06-30",
                    "--level", "875")
    assert other["values"]["temperature_mean"] != got["values"]["temperature_mean"]
    code, _, err, _ = cli("series", "--region-file", str(path), "--table", pl_table, *flag, "--json")
    assert code == 2 and "give a level in hPa" in err, err


def test_over_http_and_from_python_a_region_at_a_level_is_the_clis(db_url: str, pl_table: str,
                                                                    tmp_path: Path) -> None:
    from era5etl import api

    path = _outline_file(tmp_path, LEVEL_TRIANGLE)
    want = _series(pl_table, path, "temperature", ["--daily"], "--level", "700")
    outline = {"type": "Polygon", "coordinates": [LEVEL_TRIANGLE]}
    with http_reads(db_url, pl_table, "36/-118/34/-116", "test_region_lattices") as client:
        reply = client.post("/series", params={"table": pl_table, "region": "triangle", "level": 700, "step": "day",
                                               "variables": "temperature"}, json=outline)
        assert reply.status_code == 200, reply.text
        refused = client.post("/series", params={"table": pl_table, "region": "triangle", "step": "day"},
                              json=outline)
    got = reply.json()
    same_numbers([got["time"], got["points"], got["values"]], [want["time"], want["points"], want["values"]])
    assert refused.status_code == 400 and "give a level" in refused.json()["detail"], refused.text
    frame = api.region_series(region_file=str(path), variables=["temperature"], level=700, table=pl_table, url=db_url)
    same_numbers(frame["temperature_mean"].tolist(), want["values"]["temperature_mean"])
