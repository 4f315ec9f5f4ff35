"""Places and the climate over HTTP: /era5/series?place=&country=&tz= and /era5/climate answer what the
CLI answers, an unknown place is 404 and an ambiguous one 400, and both are in the OpenAPI schema. The
plugin's FastAPI app is called in-process (TestClient) with its login dependency lifted; the table is
put in the ledger, as the HTTP reads answer for the pipeline's tables only."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from era5etl.read.question import NO_TARGET

from ..helpers import cli, http_reads, same_numbers


@pytest.fixture(scope="module")
def client(db_url: str, places_table: str) -> Iterator[TestClient]:
    with http_reads(db_url, places_table, "-6.25/106.75/-6.25/106.75", "test_http") as client:
        yield client


def _get(client: TestClient, path: str, **params: Any) -> Any:
    return client.get(f"/{path}", params=params)


def test_series_by_place_with_local_days_is_the_clis(client: TestClient, places_table: str) -> None:
    reply = _get(client, "series", place="Los Angeles", country="US", step="day", tz="local", table=places_table,
                 variables="temperature_2m_max", **{"from": "2000-03-01", "to": "2000-03-31"})
    assert reply.status_code == 200, reply.text
    data = reply.json()
    assert data["place"]["name"] == "Los Angeles" and data["utc_offset_hours"] == -8
    code, _, err, want = cli("series", "--place", "Los Angeles", "--country", "US", "--daily", "--tz", "local",
                             "--from", "2000-03-01", "--to", "2000-03-31", "--variables", "temperature_2m_max",
                             "--table", places_table, "--json")
    assert code == 0, err
    assert want is not None
    assert (data["time"], data["values"]) == (want["time"], want["values"])
    assert len(data["time"]) == 31


def test_unknown_and_ambiguous_places(client: TestClient, places_table: str) -> None:
    reply = _get(client, "series", place="Jakrta", table=places_table)
    assert reply.status_code == 404 and "closest names" in reply.json()["detail"]
    reply = _get(client, "climate", place="Santiago", table=places_table)
    assert reply.status_code == 400 and "--country" in reply.json()["detail"]
    reply = _get(client, "series", place="Jakarta", lat="1", lon="2", table=places_table)
    assert reply.status_code == 400 and "not both" in reply.json()["detail"]
    reply = _get(client, "climate", table=places_table)
    assert reply.status_code == 400 and reply.json()["detail"] == NO_TARGET  # a series' words


def test_climate_is_the_clis_json(client: TestClient, places_table: str) -> None:
    reply = _get(client, "climate", place="Santiago", country="CL", table=places_table, baseline="2024-2024")
    # One January loaded: no complete year, so no baseline.
    assert reply.status_code == 400 and "has no complete year loaded" in reply.json()["detail"]
    reply = _get(client, "climate", place="Jakarta", baseline="1961-1990", index="tropical_nights,rx1day",
                 table=places_table, **{"from": "1980", "to": "2024"})
    assert reply.status_code == 200, reply.text
    code, _, err, want = cli("climate", "--place", "Jakarta", "--baseline", "1961-1990", "--index", "tropical_nights",
                             "rx1day", "--from", "1980", "--to", "2024", "--table", places_table, "--json")
    assert code == 0, err
    assert reply.json() == want
    assert list(want["indices"]) == ["tropical_nights", "rx1day"]
    reply = _get(client, "climate", area="60/20/59.75/20.25", baseline="1991-1992", table=places_table)
    assert reply.status_code == 200, reply.text
    code, _, err, want = cli("climate", "--area", "60/20/59.75/20.25", "--baseline", "1991-1992", "--table",
                             places_table, "--json")
    assert code == 0, err
    same_numbers(reply.json(), want)
    assert want["area"]["points"] == 4


def test_the_schema_has_the_place_and_the_climate(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    series = {p["name"] for p in schema["paths"]["/series"]["get"]["parameters"]}
    assert {"place", "country", "tz"} <= series
    climate = schema["paths"]["/climate"]["get"]
    assert {p["name"] for p in climate["parameters"]} >= {"place", "country", "lat", "lon", "area", "variable",
                                                          "baseline", "from", "to", "index", "tz", "table"}
    assert "trend_per_decade" in climate["responses"]["200"]["description"]
    assert {"400", "404"} <= set(climate["responses"])
