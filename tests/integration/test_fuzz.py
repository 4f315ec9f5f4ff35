"""Hostile input, generated: no traceback, no HTTP 500, no change to the database's catalog.

A few hundred values (seeded, so a failure is repeatable): table names, times and months, areas,
coordinates, variables and files a user could type, sent through the CLI (in process, through its
``main``, as ``python -m era5etl`` runs it) and through the HTTP reads (the plugin's FastAPI app, its
login replaced by a yes, over a test client). Every answer must be a refusal or an answer: exit status
0, 1 or 2 with ``error: ...`` and never an exception out of ``main``; an HTTP status other than 500.
The database's catalog (every relation's schema and name) must be the same afterwards.
"""

from __future__ import annotations

import json
import os
import random
import string
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from era5etl.cli import main
from era5etl.db import connect

SEED = 31
CASES = 160  # per channel: CLI and HTTP
ACCUM = "newcds_accum_tp_2025-05_hourly_expver0005.nc"

NAMES = ["/tmp/x", "a; b", "pg_class", "information_schema.x", "x" * 64, "era5_months", "era5_tables",
         "public.weather", "weather\x00", "we'ather", 'we"ather', "WEATHER", "pg_toast", "_timescaledb_catalog",
         "nosuchschema.x", "x" * 5000, "", " ", "..", "../../etc", "weather--", "1x", "ünï", "x.y.z", "%s", "{}"]
TIMES = ["0001-01-01T00:00+14:00", "9999-12-31T23:00-14:00", "9999-12-31", "0000-01-01", "2024-02-30",
         "2024-13-01", "2024-01-01T24:00", "2024-01-01T00:00+99:99", "2024-01-01T00:00Z", "1939-12", "2999-01",
         "yesterday", "", "2024", "2024-01", "1e9", "2024-01-01 00:00", "2024-01-01T00:30", "\x00", "-1"]
AREAS = ["90/-180/-90/180", "91/0/0/1", "0/0/0/0", "nan/0/0/1", "inf/0/0/1", "1/2/3", "a/b/c/d", "50/5/45/10",
         "-90/0/90/1", "1e308/0/0/1", "50/370/45/380", "", "50/5/45/10/1"]
NUMBERS = ["47", "7", "-90", "90.0001", "nan", "inf", "-inf", "1e400", "", "0x10", "47,5", "360", "-181"]
VARIABLES = ["temperature_2m", "rain", "a;b", "temperature_2m,rain", ",", "x" * 300, "pg_class", "'", "%"]


def _files(tmp: Path) -> list[str]:
    text = tmp / "notes.txt"
    text.write_text("not a download\n")
    cut = tmp / "cut.nc"
    sample = Path(__file__).resolve().parents[1] / "data" / "era5-samples" / ACCUM
    cut.write_bytes(sample.read_bytes()[:4096])
    return [str(tmp), "/dev/null", "/proc/version", str(tmp / "missing.nc"), str(text), str(cut), "/"]


def _catalog(url: str) -> set[tuple[str, str]]:
    with connect(url) as conn:
        return {(str(s), str(n)) for s, n in conn.execute(
            "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname NOT LIKE 'pg_temp%%' AND n.nspname NOT LIKE 'pg_toast_temp%%'")}


def _junk(rng: random.Random) -> str:
    alphabet = string.printable + "éü€\u202e"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))


def _cli_cases(rng: random.Random, files: list[str], out: Path) -> Iterator[list[str]]:
    pick: Callable[[list[str]], str] = rng.choice
    makers: list[Callable[[], list[str]]] = [
        lambda: ["series", pick(NUMBERS), pick(NUMBERS), "--table", pick(NAMES)],
        lambda: ["series", "47", "7", "--daily", "--from", pick(TIMES), "--to", pick(TIMES)],
        lambda: ["series", "--area", pick(AREAS), "--monthly", "--variables", pick(VARIABLES)],
        lambda: ["series", "47", "7", "--png", pick([*files, str(out / "s.png")])],
        lambda: ["series", "47", "7", "--parquet", pick(files)],
        lambda: ["map", pick(TIMES), "--variable", pick(VARIABLES), "--area", pick(AREAS)],
        lambda: ["map", pick(TIMES), "--table", pick(NAMES)],
        lambda: ["map", "2024-01-01T00:00", "--png", pick(files)],
        lambda: ["validate", pick(TIMES), "--table", pick(NAMES)],
        lambda: ["validate", pick(TIMES), "--area", pick(AREAS)],
        lambda: ["run-month", pick(TIMES), "--area", pick(AREAS), "--table", pick(NAMES)],
        lambda: ["run-month", "2999-01", "--table", "fuzz_never"],
        lambda: ["run-month", pick(TIMES), "--variables", pick(VARIABLES), "--area", pick(AREAS[:4])],
        lambda: ["load-file", pick(files), "--table", pick(NAMES)],
        lambda: ["load-file", pick(files)],
        lambda: ["status", "--table", pick(NAMES)],
        lambda: ["table", "drop", pick(NAMES)],
        lambda: ["finalize", "--table", pick(NAMES), "--as-of", pick(TIMES)],
        lambda: [pick(["series", "map", "validate", "status", "load-file"]), _junk(rng)],
    ]
    for _ in range(CASES):
        yield rng.choice(makers)()


def test_the_cli_answers_hostile_input_without_a_traceback_or_a_change(
        db_url: str, table: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # No CDS credentials: a run-month that got past its checks would stop at them (exit 2), never fetch.
    for name in ("CDSAPI_URL", "CDSAPI_KEY", "ERA5_TABLE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.cdsapirc either
    monkeypatch.setenv("ERA5_STAGING_DIR", str(tmp_path / "staging"))
    rng = random.Random(SEED)
    files = _files(tmp_path)
    before = _catalog(db_url)
    for argv in _cli_cases(rng, files, tmp_path):
        try:
            code = main(argv)
        except SystemExit as exited:  # argparse's refusal: usage and `error: ...`
            code = exited.code if isinstance(exited.code, int) else 2
        except Exception as exc:  # a traceback a user would see
            pytest.fail(f"{argv!r} raised {type(exc).__name__}: {exc}")
        out, err = capsys.readouterr()
        assert code in (0, 1, 2), (argv, code, err)
        assert "Traceback" not in err, (argv, err)
        # A refusal or failure says so: `error: ...`, or a validation's verdict (exit 1, `FAILED`).
        assert code == 0 or "error:" in err or (code == 1 and argv[0] == "validate" and "FAILED" in out), \
            (argv, code, out[-500:], err)
    assert _catalog(db_url) == before
    assert not (tmp_path / "tmp").exists()


def _http_cases(rng: random.Random) -> Iterator[tuple[str, dict[str, str]]]:
    pick: Callable[[list[str]], str] = rng.choice
    for _ in range(CASES):
        route = rng.choice(["/series", "/map", "/", "/api/dashboard", "/data"])
        params: dict[str, Any] = {
            "/series": lambda: {"lat": pick(NUMBERS), "lon": pick(NUMBERS), "from": pick(TIMES), "to": pick(TIMES),
                                "step": pick(["hour", "day", "month", "week", ""]), "table": pick(NAMES),
                                "variables": pick(VARIABLES), "area": pick(AREAS),
                                "format": pick(["json", "csv", "parquet", "xml"])},
            "/map": lambda: {"time": pick(TIMES), "variable": pick(VARIABLES), "area": pick(AREAS),
                             "table": pick(NAMES), "level": pick(NUMBERS)},
            "/": lambda: {"table": pick(NAMES), "area": pick(AREAS), "month": pick(TIMES)},
            "/api/dashboard": lambda: {"table": pick(NAMES), "month": pick(TIMES)},
            "/data": lambda: {"table": pick(NAMES), "area": pick(AREAS)},
        }[route]()
        # Not every parameter every time: a missing one is a case of its own.
        yield route, {k: v for k, v in params.items() if rng.random() < 0.7}


def test_the_http_reads_answer_hostile_input_without_a_500_or_a_change(db_url: str, table: str) -> None:
    from fastapi.testclient import TestClient

    from era5etl.airflow.plugins import era5_dashboard

    era5_dashboard.app.dependency_overrides[era5_dashboard.require_reader] = lambda: None
    try:
        client = TestClient(era5_dashboard.app, raise_server_exceptions=False)
        before = _catalog(db_url)
        rng = random.Random(SEED)
        for route, params in _http_cases(rng):
            reply = client.get(route, params=params)
            assert reply.status_code != 500, (route, params, reply.text[:500])
            assert reply.status_code in (200, 400, 404, 422), (route, params, reply.status_code, reply.text[:300])
        assert _catalog(db_url) == before
    finally:
        era5_dashboard.app.dependency_overrides.clear()


def _ring(rng: random.Random, box: tuple[float, float, float, float]) -> list[list[float]]:
    south, west, north, east = box
    points = [[rng.uniform(west, east), rng.uniform(south, north)] for _ in range(rng.randint(3, 8))]
    return [*points, points[0]]


def _bodies(rng: random.Random, box: tuple[float, float, float, float]) -> Iterator[bytes]:
    """GeoJSON a caller could POST, and things that are not: shapes, sizes, numbers, nesting, encodings."""
    def polygon() -> dict[str, Any]:
        return {"type": "Polygon", "coordinates": [_ring(rng, box)]}

    odd = [float("nan"), float("inf"), -float("inf"), 1e308, -1e308, "7", None, [], True]
    makers: list[Callable[[], Any]] = [
        polygon,
        lambda: {"type": "Polygon", "coordinates": [[[*p, rng.uniform(-500, 9000)] for p in _ring(rng, box)]]},
        lambda: {"type": "Polygon", "coordinates": [[[rng.choice(odd), p[1]] for p in _ring(rng, box)]]},
        lambda: {"type": "MultiPolygon", "coordinates": [[_ring(rng, box)], [_ring(rng, box)]]},
        lambda: {"type": "Feature", "properties": {"name": _junk(rng)}, "geometry": polygon()},
        lambda: {"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": polygon()}] * 3},
        lambda: {"type": "FeatureCollection", "features": [polygon()]},
        lambda: {"type": "FeatureCollection", "features": None},
        lambda: {"type": "Feature", "geometry": None},
        lambda: {"type": rng.choice(["Point", "LineString", "GeometryCollection", "Polygon", "polygon", ""]),
                 "coordinates": rng.choice([[], [[]], [[[]]], [1, 2], "x", None, {"a": 1}])},
        lambda: {"type": "Polygon", "coordinates": [[[0, 0], [0, 0], [0, 0], [0, 0]]]},
        lambda: {"type": "Polygon", "coordinates": [_ring(rng, box), _ring(rng, box)]},  # a hole, maybe outside
        lambda: {"type": "Polygon", "coordinates": [[[x * 1000 for x in p] for p in _ring(rng, box)]]},
        lambda: rng.choice([[], 0, "Polygon", None, {}, {"type": None}]),
    ]
    nested = lambda depth: ("[" * depth + "]" * depth).encode()  # noqa: E731
    for _ in range(CASES):
        kind = rng.random()
        if kind < 0.08:
            yield nested(rng.choice([50, 5_000, 100_000]))
        elif kind < 0.14:
            yield json.dumps(rng.choice(makers)()).encode(rng.choice(["utf-16", "utf-32", "latin-1"]))
        elif kind < 0.18:
            yield rng.choice([b"", b"\xff\xfe\x00", b"{", b"null", "{\"type\": \"Polygon\" \u00e9}".encode()])
        else:
            deep = rng.choice(makers)()
            for _ in range(rng.choice([0, 0, 0, 3, 60])):
                deep = {"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": deep}]}
            yield json.dumps(deep).encode()


def test_the_http_bodies_answer_hostile_geojson_without_a_500(db_url: str, samples: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    """POST /series and /climate with generated bodies (seeded): every answer a 200 or a refusal,
    never a 500, and a traceback in no log."""
    from fastapi.testclient import TestClient

    from era5etl.airflow.plugins import era5_dashboard
    from tests.integration.helpers import cli, forget, http_reads

    table = f"fuzz_body_{os.getpid()}"
    forget(db_url, table)
    code, _, err, _ = cli("load-file", str(samples / ACCUM), "--table", table)
    assert code == 0, err
    try:
        with connect(db_url) as conn:
            box = conn.execute(f"SELECT min(latitude), min(longitude), max(latitude), max(longitude) FROM {table}"
                               ).fetchone()
        with http_reads(db_url, table, "0/0/0/0", "fuzz"):
            client = TestClient(era5_dashboard.app, raise_server_exceptions=False)
            rng = random.Random(SEED)
            answered = {}
            for body in _bodies(rng, tuple(map(float, box))):
                route = rng.choice(["/series", "/climate"])
                params = {"region": rng.choice(["mine", "\x1b]0;x\x07", "x" * 300, ""]), "table": table}
                if route == "/series":
                    params["step"] = rng.choice(["hour", "day", "month"])
                reply = client.post(route, params=params, content=body, headers={"Content-Type": "application/json"})
                assert reply.status_code in (200, 400, 404, 413, 422), (route, body[:200], reply.text[:300])
                answered[reply.status_code] = answered.get(reply.status_code, 0) + 1
            assert answered.get(200, 0) > 0 and answered.get(400, 0) > 0, answered  # both kinds were met
            logged = [r.getMessage()[:300] for r in caplog.records if r.exc_info]
            assert not logged, logged
    finally:
        forget(db_url, table)
