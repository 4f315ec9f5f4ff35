"""One question, three front ends (read.question): the same series questions - a place, an area, a region;
hours, days and months; UTC days and a fixed offset's; a level; a table of monthly means - asked of the
CLI (``series --json``), of HTTP (``/era5/series``, the endpoint the Data view calls, in-process) and of
the Python API (``api.series``) give equal values, and the same refusals give the same message."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from era5etl import api
from era5etl.db import session
from era5etl.read.errors import ReadError
from era5etl.read.question import DAYS_ONLY, MORE_THAN_ONE, NO_TARGET

from ..helpers import cli, forget, http_reads
from .common import AREA

PLACE = (45.5, 7.5)  # inside the read tests' 25-point area (46/7/45/8)
SQUARE = [[7.1, 45.1], [7.9, 45.1], [7.9, 45.9], [7.1, 45.9], [7.1, 45.1]]  # an outline inside it
MONTHLY_MEANS = "era5mm_newcds_nc_t2m_avgua_2005-2024_63x35.nc"
LEVEL_TRIANGLE = [[-117.61, 34.68], [-116.42, 34.9], [-117.1, 35.62], [-117.61, 34.68]]


def flags(q: dict[str, Any], outline: Path | None) -> list[str]:
    """The CLI's arguments for a question written as HTTP's parameters."""
    args: list[str] = []
    if "lat" in q:
        args += [str(q["lat"]), str(q["lon"])]
    for key in ("place", "country", "area", "tz", "level"):
        if key in q:
            args += [f"--{key}", str(q[key])]
    if "region" in q:
        args += ["--region-file", str(outline)]
    if "step" in q:
        args.append({"hour": "--hourly", "day": "--daily", "month": "--monthly"}[q["step"]])
    if "from" in q:
        args += ["--from", q["from"], "--to", q["to"]]
    if "variables" in q:
        args += ["--variables", q["variables"]]
    return args


def api_kwargs(q: dict[str, Any], outline: Path | None) -> dict[str, Any]:
    """The Python API's arguments for the same question (``end`` exclusive: the day after ``to``)."""
    kw: dict[str, Any] = {k: q[k] for k in ("lat", "lon", "place", "country", "area", "tz", "level", "step") if k in q}
    if "region" in q:
        kw["region_file"] = str(outline)
    if "from" in q:
        kw["start"], kw["end"] = q["from"], str(pd.Timestamp(q["to"]) + pd.Timedelta(days=1))[:10]
    if "variables" in q:
        kw["variables"] = q["variables"].split(",")
    return kw


def floats(values: Any) -> np.ndarray:
    return np.array([math.nan if v is None else v for v in values], dtype=np.float64)


def ask_all(client: Any, table: str, q: dict[str, Any], outline: Path | None, db_url: str
            ) -> tuple[dict[str, Any], dict[str, Any], pd.DataFrame]:
    code, out, err, by_cli = cli("series", *flags(q, outline), "--table", table, "--json")
    assert code == 0 and by_cli is not None, out + err
    params = {**q, "table": table}
    if "region" in q:
        reply = client.post("/series", params=params, json=json.loads(outline.read_text()))  # type: ignore[union-attr]
    else:
        reply = client.get("/series", params=params)
    assert reply.status_code == 200, reply.text
    frame = api.series(**api_kwargs(q, outline), table=table, url=db_url)
    return by_cli, reply.json(), frame


def assert_same(by_cli: dict[str, Any], by_http: dict[str, Any], frame: pd.DataFrame) -> None:
    assert by_http["time"] == by_cli["time"] and len(frame) == len(by_cli["time"]) > 0
    assert by_http["values"].keys() == by_cli["values"].keys()
    for column, values in by_cli["values"].items():
        np.testing.assert_array_equal(floats(by_http["values"][column]), floats(values), err_msg=column)
        # The API's values are the rows' own (float4, float8); the JSON's their shortest decimals.
        np.testing.assert_allclose(frame[column].to_numpy(dtype=np.float64), floats(values), rtol=1e-6,
                                   equal_nan=True, err_msg=column)
    for key in ("points", "hours"):
        if key in by_cli:
            assert by_http[key] == by_cli[key] == frame[key].tolist(), key


@pytest.fixture(scope="module")
def outline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("outline") / "square.geojson"
    path.write_text(json.dumps({"type": "Polygon", "coordinates": [SQUARE]}))
    return path


@pytest.fixture(scope="module")
def client(db_url: str, month_table: str) -> Iterator[Any]:
    with http_reads(db_url, month_table, AREA, "test_question") as reads:
        yield reads
    session.close()


QUESTIONS = [
    {"lat": PLACE[0], "lon": PLACE[1], "step": "hour", "from": "2024-03-02", "to": "2024-03-03"},
    {"lat": PLACE[0], "lon": PLACE[1], "step": "day"},
    {"lat": PLACE[0], "lon": PLACE[1], "step": "day", "tz": "+7", "from": "2024-03-05", "to": "2024-03-20",
     "variables": "temperature_2m_max,total_precipitation_sum"},
    {"lat": PLACE[0], "lon": PLACE[1], "step": "month"},
    {"area": AREA, "step": "day", "from": "2024-03-01", "to": "2024-03-10"},
    {"area": AREA, "step": "day", "tz": "-8", "variables": "temperature_2m_mean"},  # HTTP refused it before
    {"area": AREA, "step": "hour", "from": "2024-03-10", "to": "2024-03-10", "variables": "temperature_2m"},
    {"region": "square", "step": "day"},
    {"region": "square", "step": "day", "tz": "+1", "variables": "temperature_2m_min"},
    {"region": "square", "step": "month"},
]


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: "-".join(f"{k}={v}" for k, v in q.items() if k != "lat"))
def test_the_same_question_has_the_same_answer_everywhere(client: Any, month_table: str, outline: Path,
                                                          db_url: str, q: dict[str, Any]) -> None:
    assert_same(*ask_all(client, month_table, q, outline, db_url))


def test_a_level_and_a_table_of_monthly_means_alike(client: Any, db_url: str, pl_table: str, samples: Path,
                                                    tmp_path: Path) -> None:
    """Tables load-file made: HTTP answers for them as the registry's (era5_tables), with no ledger row."""
    triangle = tmp_path / "triangle.geojson"
    triangle.write_text(json.dumps({"type": "Polygon", "coordinates": [LEVEL_TRIANGLE]}))
    mm_table = f"mmq_{uuid.uuid4().hex[:8]}"
    code, out, err, _ = cli("load-file", str(samples / MONTHLY_MEANS), "--table", mm_table)
    assert code == 0, out + err
    try:
        for q in ({"lat": 35.0, "lon": -117.0, "level": 700, "step": "day", "variables": "temperature_mean"},
                  {"region": "triangle", "level": 875, "step": "day", "variables": "temperature"}):
            assert_same(*ask_all(client, pl_table, q, triangle, db_url))
        assert_same(*ask_all(client, mm_table, {"lat": 15.0, "lon": 105.0, "step": "month"}, None, db_url))
    finally:
        forget(db_url, mm_table)


# The same refusal asked of each front end: (the CLI's arguments, HTTP's parameters, the API's), its words.
REFUSALS = [
    ([], {}, {}, NO_TARGET),
    ([*map(str, PLACE), "--area", AREA], {"lat": PLACE[0], "lon": PLACE[1], "area": AREA},
     {"lat": PLACE[0], "lon": PLACE[1], "area": AREA}, MORE_THAN_ONE),
    (["--place", "Turin", "--area", AREA], {"place": "Turin", "area": AREA}, {"place": "Turin", "area": AREA},
     MORE_THAN_ONE),
    ([*map(str, PLACE), "--hourly", "--tz", "+7"], {"lat": PLACE[0], "lon": PLACE[1], "step": "hour", "tz": "+7"},
     {"lat": PLACE[0], "lon": PLACE[1], "step": "hour", "tz": "+7"}, DAYS_ONLY),
    (["--area", AREA, "--monthly", "--tz", "-8"], {"area": AREA, "step": "month", "tz": "-8"},
     {"area": AREA, "step": "month", "tz": "-8"}, DAYS_ONLY),
    ([*map(str, PLACE), "--place", "Turin"], {"lat": PLACE[0], "lon": PLACE[1], "place": "Turin"},
     {"lat": PLACE[0], "lon": PLACE[1], "place": "Turin"},
     "give a place by name (--place, place=) or by its coordinates (LAT LON), not both"),
    ([*map(str, PLACE), "--country", "IT"], {"lat": PLACE[0], "lon": PLACE[1], "country": "IT"},
     {"lat": PLACE[0], "lon": PLACE[1], "country": "IT"},
     "a country (--country, country=) goes with a place by name"),
]


@pytest.mark.parametrize(("args", "params", "kwargs", "words"), REFUSALS, ids=lambda v: str(v)[:40])
def test_the_same_refusal_has_the_same_words_everywhere(client: Any, month_table: str, args: list[str],
                                                        params: dict[str, Any], kwargs: dict[str, Any],
                                                        words: str, db_url: str) -> None:
    code, _, err, _ = cli("series", *args, "--table", month_table)
    assert code == 2 and err.strip().endswith(f"error: {words}"), err
    reply = client.get("/series", params={**params, "table": month_table})
    assert reply.status_code == 400 and reply.json()["detail"] == words, reply.text
    with pytest.raises(ReadError) as refused:
        api.series(**kwargs, table=month_table, url=db_url)
    assert str(refused.value) == words
