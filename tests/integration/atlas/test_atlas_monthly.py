"""The atlas of a table of monthly means (the real new-CDS download of 2005-2024, t2m and tp, 63 x 35
points, loaded once): every point's yearly values and trend equal ``climate --json`` at that point,
and scipy's linregress and theilslopes; the CLI ranks, says which years it used and refuses what it
cannot answer."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from scipy import stats

from era5etl.db import connect
from era5etl.read.atlas import atlas, atlas_answer, atlas_request
from era5etl.read.atlas_place import place_changes
from era5etl.read.climate_read import area_climate, climate_request
from era5etl.read.errors import ReadError
from era5etl.read.places import find_place
from era5etl.read.regions import region_from_geojson, resolve_region
from era5etl.read.where import Where
from era5etl.read.yearly import yearly_field, yearly_fields

from ..helpers import cli, forget, same_numbers

FILES = ("era5mm_newcds_nc_t2m_avgua_2005-2024_63x35.nc", "era5mm_newcds_nc_tp_avgad_2005-2024_63x35.nc")


@pytest.fixture(scope="module")
def mm_table(db_url: str, samples: Path) -> Iterator[str]:
    table = f"atm_{uuid.uuid4().hex[:8]}"
    code, out, err, _ = cli("load-file", *(str(samples / f) for f in FILES), "--table", table, "--json")
    assert code == 0, out + err
    yield table
    forget(db_url, table)


@pytest.mark.parametrize("variable", ["temperature_2m", "total_precipitation"])
def test_a_points_atlas_values_are_its_climate(db_url: str, mm_table: str, variable: str) -> None:
    with connect(db_url) as conn:
        field = yearly_field(conn, mm_table, variable)
        assert field.values.shape == (63 * 35, 20) and field.years.tolist() == list(range(2005, 2025))
        data = atlas(field, top=3, baseline=(2006, 2015))
        for r in data["ranking"]:
            p = r["grid_point"]
            got = climate_request(conn, mm_table, Where(p["latitude"], p["longitude"]), variable, (2006, 2015))
            assert got["point"]["grid_point"]["location_id"] == p["location_id"]
            row = int(np.flatnonzero(field.location_id == p["location_id"])[0])
            want = {y["year"]: y["value"] for y in got["years"]}
            assert field.values[row].tolist() == pytest.approx([want[y] for y in range(2005, 2025)], rel=1e-12)
            same_numbers(r["trend_per_decade"], got["trend_per_decade"])
            assert r["baseline_value"] == pytest.approx(got["baseline_value"], rel=1e-12)
            assert r["highest_year"] == got["highest"][0]["year"]
            fit = stats.linregress(field.years, field.values[row])
            assert r["trend_per_decade"]["ols"] == pytest.approx(fit.slope * 10, rel=1e-9)
            assert r["trend_per_decade"]["theil_sen"] == pytest.approx(
                stats.theilslopes(field.values[row], field.years).slope * 10, rel=1e-9)
    assert data["complete_years"] == list(range(2005, 2025)) and data["ranked"] == 63 * 35
    slopes = [r["trend_per_decade"]["ols"] for r in data["ranking"]]
    assert slopes == sorted(slopes, reverse=True)


def test_a_countrys_atlas_values_are_its_region_climate(db_url: str, mm_table: str) -> None:
    """The box holds Vietnam and Cambodia whole and most of Laos; Thailand and China are mostly outside."""
    with connect(db_url) as conn:
        data = atlas_request(conn, mm_table, "temperature_2m", by="country", baseline="2006-2015", top=10)
        named = {r["country"]["name"]: r for r in data["ranking"]}
        assert {"Vietnam", "Cambodia", "Laos"} <= set(named) and "China" not in named
        assert any("left out" in n and "China" in n and "Thailand" in n for n in data["notes"])
        for name in ("Vietnam", "Laos"):
            got = area_climate(conn, mm_table, resolve_region(name), "temperature_2m", (2006, 2015))
            r = named[name]
            assert r["country"]["points"] == got["region"]["points"]
            same_numbers(r["trend_per_decade"], got["trend_per_decade"])
            assert r["baseline_value"] == pytest.approx(got["baseline_value"], rel=1e-9)
            assert r["highest_year"] == got["highest"][0]["year"]
    slopes = [r["trend_per_decade"]["ols"] for r in data["ranking"]]
    assert slopes == sorted(slopes, reverse=True) and data["by"] == "country"
    code, out, err, _ = cli("atlas", "--table", mm_table, "--by", "country", "--csv")
    assert code == 0, out + err
    assert out.splitlines()[0].startswith("rank,name,") and '"Vietnam"' in out


def _box(west: float, south: float, east: float, north: float) -> dict[str, object]:
    return {"type": "Polygon", "coordinates": [[[west, south], [east, south], [east, north], [west, north],
                                                [west, south]]]}


def test_a_files_outlines_are_ranked_each_as_its_region_climate(db_url: str, mm_table: str, tmp_path: Path) -> None:
    features = [{"type": "Feature", "properties": {"name": "North"}, "geometry": _box(103.1, 18.2, 107.9, 22.9)},
                {"type": "Feature", "properties": {"NAME": "South"}, "geometry": _box(103.1, 9.1, 107.9, 13.8)},
                {"type": "Feature", "properties": {}, "geometry": _box(5.0, 45.0, 10.0, 50.0)}]  # not loaded
    path = tmp_path / "outlines.geojson"
    path.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    code, out, err, data = cli("atlas", "--table", mm_table, "--by", "region-file", "--region-file", str(path),
                               "--baseline", "2006-2015", "--json")
    assert code == 0, out + err
    assert data is not None and {r["region"]["name"] for r in data["ranking"]} == {"North", "South"}
    assert any("regions left out" in n and "feature 3" in n for n in data["notes"])
    with connect(db_url) as conn:
        for r in data["ranking"]:
            feature = next(f for f in features if r["region"]["name"] in f["properties"].values())
            got = area_climate(conn, mm_table, region_from_geojson(feature["geometry"], r["region"]["name"]),
                               "temperature_2m", (2006, 2015))
            assert r["region"]["points"] == got["region"]["points"]
            same_numbers(r["trend_per_decade"], got["trend_per_decade"])
    code, out, err, _ = cli("atlas", "--table", mm_table, "--by", "region-file")
    assert code == 2 and "--by region-file ranks the outlines of --region-file F" in err
    code, out, err, _ = cli("atlas", "--table", mm_table, "--by", "region-file", "--region-file", str(tmp_path))
    assert code == 2 and "not a regular file" in err


def test_what_kind_of_change_a_place_has_seen_is_its_points_climate_and_rank(db_url: str, mm_table: str) -> None:
    hanoi = find_place("Hanoi", None)
    with connect(db_url) as conn:
        data = place_changes(conn, mm_table, Where(hanoi.latitude, hanoi.longitude, hanoi), baseline="2006-2015")
        p = data["where"]["grid_point"]
        assert [c["variable"] for c in data["changes"]] == ["temperature_2m", "total_precipitation"]  # p 0.003, 0.1
        for c in data["changes"]:
            got = climate_request(conn, mm_table, Where(p["latitude"], p["longitude"]), c["variable"], (2006, 2015))
            same_numbers(c["trend_per_decade"], got["trend_per_decade"])
            assert c["baseline_value"] == pytest.approx(got["baseline_value"], rel=1e-12)
            # The rank is the place's position among the cities the atlas ranks by that trend.
            cities = atlas_answer(yearly_field(conn, mm_table, c["variable"]), by="city", top=10_000)["ranking"]
            greater = sum(r["trend_per_decade"]["ols"] > c["trend_per_decade"]["ols"] for r in cities)
            assert c["among_cities"] == {"rank": greater + 1, "of": len(cities)}
    assert data["where"]["place"]["name"] == "Hanoi" and data["baseline"] == [2006, 2015]
    # The table's other columns were never loaded: named, not ranked.
    assert data["notes"] == ["no complete year at any grid point: total_cloud_cover, snowfall"]
    code, out, err, _ = cli("atlas", "--table", mm_table, "--place", "Hanoi")
    assert code == 0, out + err
    assert out.startswith("What kind of change at Hanoi, VN") and "rank " in out and "cities" in out
    code, out, err, _ = cli("atlas", "--table", mm_table, "--place", "Hanoi", "--top", "3")
    assert code == 2 and "--place answers one place; --top rank many places" in err
    code, out, err, _ = cli("atlas", "--table", mm_table, "--place", "Paris")
    assert code == 2 and "--country" in err


def test_the_cli_ranks_a_span_and_refuses_what_it_cannot(mm_table: str) -> None:
    code, out, err, data = cli("atlas", "--table", mm_table, "--from", "2010", "--to", "2019", "--top", "4",
                               "--band", "10,20", "--baseline", "2010-2019", "--json")
    assert code == 0, out + err
    assert data is not None and data["years"] == [2010, 2019] and len(data["ranking"]) == 4
    assert all(r["trend_per_decade"]["years"] == 10 for r in data["ranking"])
    band = data["zonal"]["10 to 20"]
    assert band["band"] == [10, 20] and band["points"] > 0 and band["mean"] is not None
    code, out, err, _ = cli("atlas", "--table", mm_table, "--variable", "total_precipitation", "--bottom", "2")
    assert code == 0, out + err
    assert "lowest trends:" in out and "mm" in out
    code, out, err, _ = cli("atlas", "--table", mm_table, "--variable", "zonal_wind_10m")
    assert code == 2 and "unknown variable 'zonal_wind_10m'" in err and "temperature_2m" in err
    code, out, err, _ = cli("atlas", "--table", mm_table, "--from", "1950", "--to", "1960")
    assert code == 2 and "holds no complete year of temperature_2m in 1950-1960" in err
    code, out, err, _ = cli("atlas", "--table", mm_table, "--band", "30,10")
    assert code == 2 and "S < N" in err


def test_variables_read_together_are_each_read_alone(db_url: str, mm_table: str) -> None:
    with connect(db_url) as conn:
        together = yearly_fields(conn, mm_table, ["temperature_2m", "total_precipitation", "total_cloud_cover"])
        assert together["total_cloud_cover"] is None  # a column never loaded: no complete year
        for variable in ("temperature_2m", "total_precipitation"):
            alone, both = yearly_field(conn, mm_table, variable), together[variable]
            assert both is not None and both.statistic == alone.statistic and both.unit == alone.unit
            assert np.array_equal(both.location_id, alone.location_id) and np.array_equal(both.years, alone.years)
            assert np.array_equal(both.values, alone.values, equal_nan=True)
        with pytest.raises(ReadError, match="unknown variable 'snow'"):
            yearly_fields(conn, mm_table, ["temperature_2m", "snow"])


def test_a_year_not_whole_is_not_ranked(db_url: str, mm_table: str) -> None:
    with connect(db_url) as conn:
        # Rows in a transaction rolled back: the table stays as the other tests expect.
        with conn.transaction(force_rollback=True):
            conn.execute(f"DELETE FROM {mm_table} WHERE time = '2024-06-01T00:00Z' AND location_id IN "
                         f"(SELECT location_id FROM {mm_table} WHERE time = '2024-06-01T00:00Z' LIMIT 5)")
            field = yearly_field(conn, mm_table, "temperature_2m")
            data = atlas(field, top=1)
        with pytest.raises(ReadError, match="the last year 2010 is before the first 2020"):
            yearly_field(conn, mm_table, "temperature_2m", 2020, 2010)
    assert int(np.isnan(field.values[:, -1]).sum()) == 5
    assert data["complete_years"] == list(range(2005, 2024))
    assert any("complete at some points only" in n and "2024" in n for n in data["notes"])


def test_a_reloaded_month_changes_its_years_atlas_values_and_only_those(db_url: str, samples: Path,
                                                                        tmp_path: Path) -> None:
    """July 2010 loaded again 1 K warmer: 2010's mean moves by 31/365 K at every point, no other year
    moves, and the ranking follows."""
    table = f"atr_{uuid.uuid4().hex[:8]}"
    try:
        code, out, err, _ = cli("load-file", str(samples / FILES[0]), "--table", table)
        assert code == 0, out + err
        with connect(db_url) as conn:
            before = yearly_field(conn, table, "temperature_2m")
        with xr.open_dataset(samples / FILES[0]) as ds:
            july = ds.sel(valid_time=slice("2010-07-01", "2010-07-31")).load()
        july["t2m"] = july["t2m"] + np.float32(1.0)
        for name in july.variables:
            july[name].encoding = {}
        warmer = tmp_path / "july-2010-warmer.nc"
        july.to_netcdf(warmer)
        code, out, err, _ = cli("load-file", str(warmer), "--table", table, "--dataset", "monthly-means")
        assert code == 0, out + err
        assert "replaced 2,205" in out  # the month's rows, replaced
        with connect(db_url) as conn:
            after = yearly_field(conn, table, "temperature_2m")
            data = atlas(after, top=3)
        moved = after.values - before.values
        j = int(np.flatnonzero(after.years == 2010)[0])
        assert np.allclose(moved[:, j], 31 / 365, atol=2e-5)
        assert np.allclose(np.delete(moved, j, axis=1), 0.0, atol=0)
        assert data["complete_years"] == list(range(2005, 2025))
    finally:
        forget(db_url, table)
