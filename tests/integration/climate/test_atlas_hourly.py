"""The atlas of an hourly table (the places' table: Jakarta 1940-2024, Los Angeles 1990-2021, boxes of
a month or three years): a point's yearly values and trend equal ``climate --json``'s on UTC days from
the daily rollup, and a point with no complete year is not ranked; a country's (Singapore's four cells
over 1991-2000, a table of their own) equal ``climate --region``'s."""

from __future__ import annotations

import numpy as np
import pytest

from era5etl.db import connect
from era5etl.read.atlas import atlas, atlas_request
from era5etl.read.climate_read import area_climate, climate_request
from era5etl.read.regions import resolve_region
from era5etl.read.where import Where
from era5etl.read.yearly import yearly_field, yearly_fields

from ..helpers import cli, http_reads, same_numbers

JAKARTA, LOS_ANGELES = (-6.25, 106.75), (34.0, -118.25)


@pytest.mark.parametrize("variable", ["temperature_2m", "total_precipitation"])
def test_a_points_atlas_values_are_its_climate(db_url: str, places_table: str, variable: str) -> None:
    with connect(db_url) as conn:
        field = yearly_field(conn, places_table, variable)
        data = atlas(field, top=50)
        ranked = {r["grid_point"]["location_id"]: r for r in data["ranking"]}
        for lat, lon in (JAKARTA, LOS_ANGELES):
            got = climate_request(conn, places_table, Where(lat, lon), variable)
            r = ranked[got["point"]["grid_point"]["location_id"]]
            row = int(np.flatnonzero(field.location_id == r["grid_point"]["location_id"])[0])
            values = dict(zip(field.years.tolist(), field.values[row].tolist(), strict=True))
            for y in got["years"]:
                if y["value"] is None:
                    assert np.isnan(values[y["year"]]), y
                else:
                    assert values[y["year"]] == pytest.approx(y["value"], rel=1e-12), y
            same_numbers(r["trend_per_decade"], got["trend_per_decade"])
            assert r["baseline_value"] == pytest.approx(got["baseline_value"], rel=1e-12)
    # The month-long boxes hold no complete year: they are not ranked; the 3-year box and the two places are.
    assert data["points"] > data["ranked"] == 2 + 4
    assert field.years.tolist() == list(range(1940, 2025))


def test_variables_read_together_from_the_daily_rollup_are_each_read_alone(db_url: str, places_table: str) -> None:
    names = ["temperature_2m", "total_precipitation"]
    with connect(db_url) as conn:
        together = yearly_fields(conn, places_table, [*names, "wind_speed_10m"], 1990, 2000)
        assert together["wind_speed_10m"] is None  # the download has no wind: no complete year
        for variable in names:
            both = together[variable]
            assert both is not None, variable
            alone = yearly_field(conn, places_table, variable, 1990, 2000)
            assert np.array_equal(both.location_id, alone.location_id)
            assert np.array_equal(both.values, alone.values, equal_nan=True), variable


def test_the_cli_ranks_the_places(places_table: str) -> None:
    code, out, err, data = cli("atlas", "--table", places_table, "--from", "1994", "--to", "2020", "--json")
    assert code == 0, out + err
    # Only the two places have rows in those years: the boxes' points are not in the field at all.
    assert data is not None and data["ranked"] == data["points"] == 2
    assert data["complete_years"] == list(range(1994, 2021))
    assert {r["grid_point"]["latitude"] for r in data["ranking"]} == {JAKARTA[0], LOS_ANGELES[0]}


def test_http_answers_the_clis_object(db_url: str, places_table: str) -> None:
    code, out, err, want = cli("atlas", "--table", places_table, "--top", "3", "--json")
    assert code == 0, out + err
    with http_reads(db_url, places_table, "-6.25/106.75/-6.25/106.75", "test_atlas_hourly") as reads:
        got = reads.get("/atlas", params={"table": places_table, "top": 3})
        assert got.status_code == 200, got.text
        assert got.json() == want
        refused = reads.get("/atlas", params={"table": places_table, "top": 3, "bottom": 2})
        assert refused.status_code == 400 and "one or the other" in refused.text
        empty = reads.get("/atlas", params={"table": places_table, "variable": "wind_speed_10m"})
        assert empty.status_code == 400 and "holds no complete year of wind_speed_10m" in empty.text
        unknown = reads.get("/atlas", params={"table": places_table, "variable": "snow"})
        assert unknown.status_code == 400 and "unknown variable 'snow'" in unknown.text
        code, out, err, countries = cli("atlas", "--table", places_table, "--by", "country", "--json")
        assert code == 0, out + err
        by_country = reads.get("/atlas", params={"table": places_table, "by": "country"})
        assert by_country.status_code == 200, by_country.text
        assert by_country.json() == countries and countries["by"] == "country"
        code, out, err, jakarta = cli("atlas", "--table", places_table, "--place", "Jakarta", "--json")
        assert code == 0, out + err
        place = reads.get("/atlas", params={"table": places_table, "place": "Jakarta"})
        assert place.status_code == 200, place.text
        assert place.json() == jakarta and jakarta["where"]["place"]["name"] == "Jakarta"
        ranked = jakarta["changes"][0]["among_cities"]
        assert 1 <= ranked["rank"] <= ranked["of"]
        both = reads.get("/atlas", params={"table": places_table, "place": "Jakarta", "top": 3})
        assert both.status_code == 400 and "place answers one place" in both.text
        drawn = reads.get("/atlas.png", params={"table": places_table})
        assert drawn.status_code == 200 and drawn.headers["content-type"] == "image/png"
        assert drawn.content[:8] == b"\x89PNG\r\n\x1a\n" and len(drawn.content) > 10_000
        no_place = reads.get("/atlas.png", params={"table": places_table, "place": "Jakarta"})
        assert no_place.status_code == 400 and "give no place" in no_place.text
        schema = reads.get("/openapi.json").json()
        assert "/atlas" in schema["paths"] and "min_population" in str(schema["paths"]["/atlas"])


@pytest.mark.parametrize("variable", ["temperature_2m", "total_precipitation"])
def test_a_countrys_atlas_values_on_an_hourly_table_are_its_region_climate(db_url: str, singapore_table: str,
                                                                          variable: str) -> None:
    with connect(db_url) as conn:
        data = atlas_request(conn, singapore_table, variable, by="country", baseline="1991-2000")
        (singapore,) = [r for r in data["ranking"] if r["country"]["name"] == "Singapore"]
        got = area_climate(conn, singapore_table, resolve_region("Singapore"), variable, (1991, 2000))
    assert singapore["country"]["points"] == got["region"]["points"] == 4
    assert singapore["complete_years"] == [y["year"] for y in got["years"] if y["value"] is not None]
    same_numbers(singapore["trend_per_decade"], got["trend_per_decade"])
    assert singapore["baseline_value"] == pytest.approx(got["baseline_value"], rel=1e-12)
    assert singapore["highest_year"] == got["highest"][0]["year"]
