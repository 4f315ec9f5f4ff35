"""read.regions without a database: the countries by name and code, the cells' weights (whole cells,
a part of a cell, the antimeridian, ERA5-Land's 0.1 degree cells), GeoJSON shapes refused or read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import shapely

from era5etl.core.datasets import LAND_GRID
from era5etl.core.grid import location_ids
from era5etl.read.errors import ReadError
from era5etl.read.regions import (
    cell_weights,
    country,
    country_names,
    geojson_outline,
    region_from_file,
    regions_from_file,
    resolve_region,
)


def test_countries_by_name_and_code() -> None:
    for text in ("Chile", "chile", "CL", "chl", " Chile "):
        assert country(text)[:2] == ("Chile", "CL")
    assert country("Côte d'Ivoire")[1] == "CI"
    assert "Chile" in country_names() and len(country_names()) > 200
    with pytest.raises(ReadError, match="closest names: Chile"):
        country("Chille")


def test_whole_cells_weigh_their_area_times_cos_latitude() -> None:
    # Four whole cells around 60 N, 20 E (the cells of 60/20/59.75/20.25).
    ids, weights, lats, lons = cell_weights(shapely.box(19.875, 59.625, 20.375, 60.125))
    assert sorted(zip(lats.tolist(), lons.tolist(), strict=True)) == [(59.75, 20.0), (59.75, 20.25), (60.0, 20.0),
                                                                      (60.0, 20.25)]
    assert np.allclose(weights, 0.0625 * np.cos(np.radians(lats)))
    assert ids.tolist() == sorted(location_ids(lats, lons).tolist())


def test_a_part_of_a_cell_weighs_its_part() -> None:
    # A quarter of the cell of (10, 10), and a sliver of its eastern neighbour.
    ids, weights, lats, lons = cell_weights(shapely.box(10.0, 10.0, 10.135, 10.125))
    got = dict(zip(lons.tolist(), weights.tolist(), strict=True))
    assert got[10.0] == pytest.approx(0.125 * 0.125 * np.cos(np.radians(10)))
    assert got[10.25] == pytest.approx(0.01 * 0.125 * np.cos(np.radians(10)))
    assert set(lats.tolist()) == {10.0} and ids.size == 2


def test_era5_lands_cells_are_a_tenth_of_a_degree_with_its_own_ids() -> None:
    # Six whole 0.1 degree cells around 44 N, 20 E (where ERA5's 0.25 degree lattice has parts of four).
    ids, weights, lats, lons = cell_weights(shapely.box(19.95, 43.95, 20.25, 44.15), LAND_GRID)
    assert sorted(zip(np.round(lats, 6).tolist(), np.round(lons, 6).tolist(), strict=True)) == [
        (44.0, 20.0), (44.0, 20.1), (44.0, 20.2), (44.1, 20.0), (44.1, 20.1), (44.1, 20.2)]
    assert np.allclose(weights, 0.01 * np.cos(np.radians(lats)))
    assert ids.tolist() == sorted(LAND_GRID.location_ids(lats, lons).tolist())
    assert cell_weights(shapely.box(19.95, 43.95, 20.25, 44.15))[0].size == 4


def test_the_antimeridian_cell_gets_both_sides() -> None:
    # 179.9 .. 180.1 E: the cell of 180 (179.875 .. 180.125), whichever way the longitudes are written.
    east = shapely.box(179.9, -0.1, 180.1, 0.1)
    ids, weights, _, lons = cell_weights(east)
    assert lons.tolist() == [180.0] and weights[0] == pytest.approx(0.2 * 0.2)
    split = shapely.MultiPolygon([shapely.box(179.9, -0.1, 180, 0.1), shapely.box(-180, -0.1, -179.9, 0.1)])
    ids2, weights2, _, _ = cell_weights(split)
    assert ids2.tolist() == ids.tolist() and weights2[0] == pytest.approx(weights[0])


def test_geojson_shapes() -> None:
    square = {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]]}
    feature = {"type": "Feature", "properties": {}, "geometry": square}
    collection = {"type": "FeatureCollection", "features": [feature, {"type": "Feature", "geometry": {
        "type": "MultiPolygon", "coordinates": [[[[2, 0], [3, 0], [3, 1], [2, 1], [2, 0]]]]}}]}
    assert geojson_outline(square, "x").area == 1
    assert geojson_outline(feature, "x").area == 1
    assert geojson_outline(collection, "x").area == 2
    for bad, says in (({"type": "LineString", "coordinates": [[0, 0], [1, 1]]}, "LineString"),
                      ({"type": "FeatureCollection", "features": []}, "no polygon"), ([], "not a GeoJSON object"),
                      ({"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [0, 0]]]}, "no polygon with an area")):
        with pytest.raises(ReadError, match=says):
            geojson_outline(bad, "x")


def test_resolve_region_takes_one_of_name_and_file() -> None:
    with pytest.raises(ReadError, match="give a region"):
        resolve_region()
    region = resolve_region("Monaco")
    assert region.iso == "MC" and region.region_id is None and region.points == 0  # weighed by the database
    ids, _, lats, lons = cell_weights(region.outline)
    assert ids.size == 1 and (lats[0], lons[0]) == (43.75, 7.5)


SQUARE = [[6.0, 49.5], [6.5, 49.5], [6.5, 50.0], [6.0, 50.0], [6.0, 49.5]]


def test_geojson_positions_with_altitude_are_read_flat() -> None:
    # RFC 7946 allows a third number a position (altitude): dropped, the outline the same square.
    flat = geojson_outline({"type": "Polygon", "coordinates": [SQUARE]}, "x")
    raised = geojson_outline({"type": "Polygon", "coordinates": [[[*p, 250.0] for p in SQUARE]]}, "x")
    assert not raised.has_z and raised.equals(flat)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_geojson_with_a_coordinate_that_is_no_number_is_refused(bad: float) -> None:
    ring = [list(p) for p in SQUARE]
    ring[2][0] = bad
    with pytest.raises(ReadError, match="not a finite number"):
        geojson_outline({"type": "Polygon", "coordinates": [ring]}, "x")


@pytest.mark.parametrize(("swap", "says"), [((1, 148.0), "latitude 148, beyond the poles"),
                                           ((0, 400.0), "longitude 400, outside -180..360"),
                                           ((0, -181.0), "longitude -181, outside -180..360")])
def test_geojson_beyond_the_globe_is_refused_not_clipped(swap: tuple[int, float], says: str) -> None:
    ring = [list(p) for p in SQUARE]
    ring[2][swap[0]] = swap[1]
    with pytest.raises(ReadError, match=says):
        geojson_outline({"type": "Polygon", "coordinates": [ring]}, "x")
    # Both of ERA5's longitude conventions are positions on the globe.
    assert geojson_outline({"type": "Polygon", "coordinates": [[[p[0] + 180, p[1]] for p in SQUARE]]}, "x").area > 0


def test_a_hole_equal_to_its_shell_leaves_nothing_and_overlapping_parts_join() -> None:
    # shapely's default make_valid ("linework") made this polygon its whole shell.
    with pytest.raises(ReadError, match="holds no polygon with an area"):
        geojson_outline({"type": "Polygon", "coordinates": [SQUARE, SQUARE]}, "x")
    ring = [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]
    shifted = [[x + 5, y + 5] for x, y in ring]
    joined = geojson_outline({"type": "MultiPolygon", "coordinates": [[ring], [shifted]]}, "x")
    assert joined.area == pytest.approx(shapely.union(shapely.Polygon(ring), shapely.Polygon(shifted)).area) == 175
    holed = geojson_outline({"type": "Polygon", "coordinates": [ring, [[2, 2], [4, 2], [4, 4], [2, 4], [2, 2]]]}, "x")
    assert holed.area == 96


def test_geojson_nested_where_geojson_nests_nothing_is_refused() -> None:
    polygon = {"type": "Polygon", "coordinates": [SQUARE]}
    deep: dict = {"type": "Feature", "geometry": polygon}
    for _ in range(10_000):  # a FeatureCollection in a FeatureCollection ... : no recursion past two levels
        deep = {"type": "FeatureCollection", "features": [deep]}
    with pytest.raises(ReadError, match="a FeatureCollection inside a FeatureCollection"):
        geojson_outline(deep, "x")
    with pytest.raises(ReadError, match="a Feature inside a Feature"):
        geojson_outline({"type": "Feature", "geometry": {"type": "Feature", "geometry": polygon}}, "x")
    with pytest.raises(ReadError, match="features are not a list"):
        geojson_outline({"type": "FeatureCollection", "features": {"a": 1}}, "x")


def test_a_region_file_that_is_no_regular_file_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "outline.fifo"
    os.mkfifo(fifo)
    for path in ("/dev/zero", str(fifo), str(tmp_path)):  # would read for ever, wait for ever, or is a folder
        with pytest.raises(ReadError, match="not a regular file"):
            region_from_file(path)
    deep = tmp_path / "deep.geojson"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ReadError, match="nested too deep"):
        region_from_file(deep)
    with pytest.raises(ReadError, match="No such file"):
        region_from_file(tmp_path / "missing.geojson")


def test_a_files_features_are_regions_of_their_own_named_by_their_properties(tmp_path: Path) -> None:
    def box(w: float, s: float) -> dict[str, object]:
        return {"type": "Polygon", "coordinates": [[[w, s], [w + 1, s], [w + 1, s + 1], [w, s + 1], [w, s]]]}

    collection = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"name": "A"}, "geometry": box(0, 0)},
        {"type": "Feature", "properties": {"ADMIN": "B"}, "geometry": box(5, 5)},
        {"type": "Feature", "id": 7, "properties": None, "geometry": box(9, 9)},
        {"type": "Feature", "properties": {"name": " "}, "geometry": box(20, 20)}]}
    path = tmp_path / "many.geojson"
    path.write_text(json.dumps(collection))
    regions = regions_from_file(path)
    assert [r.name for r in regions] == ["A", "B", "7", "feature 4"]
    assert [r.outline.bounds for r in regions][1] == (5.0, 5.0, 6.0, 6.0)
    assert all(r.source == "GeoJSON file many.geojson" for r in regions)
    one = tmp_path / "one.geojson"
    one.write_text(json.dumps(box(0, 0)))
    assert [r.name for r in regions_from_file(one)] == ["one"]
    empty = tmp_path / "empty.geojson"
    empty.write_text(json.dumps({"type": "FeatureCollection", "features": []}))
    with pytest.raises(ReadError, match="without features"):
        regions_from_file(empty)
    nested = tmp_path / "nested.geojson"
    nested.write_text(json.dumps({"type": "FeatureCollection", "features": [collection]}))
    with pytest.raises(ReadError, match="feature 1"):
        regions_from_file(nested)
