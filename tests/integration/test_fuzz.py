"""Hostile input, generated: no traceback, no HTTP 500, no change to the database's catalog.

A few hundred values (seeded, so a failure is repeatable): table names, times and months, areas,
coordinates, variables and files a user could type, sent through the CLI (in process, through its
``main``, as ``python -m era5etl`` runs it) and through the HTTP reads (the plugin's FastAPI app, its
login replaced by a yes, over a test client). Every answer must be a refusal or an answer: exit status
0, 1 or 2 with ``error: ...`` and never an exception out of ``main``; an HTTP status other than 500.
The database's catalog (every relation's schema and name) must be the same afterwards.
"""

from __future__ import annotations

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
