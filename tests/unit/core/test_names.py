"""A table name is checked once (core.names) and every entry point uses that check: the CLI's --table
of every command, ERA5_TABLE, the DAG's table param, the HTTP table parameter and MonthJob.

Issue 31's names: ``/tmp/x``, ``a; b``, ``pg_class``, ``information_schema.x`` and a 64-character
name, each refused with the reason; the longest name whose rollups fit PostgreSQL's 63 bytes accepted.
"""

from __future__ import annotations

import argparse
import re

import pytest

from era5etl import settings
from era5etl.cli import build_parser, main
from era5etl.core.errors import InputError
from era5etl.core.names import MAX_TABLE, check_table, table_problem

HOSTILE = ["/tmp/x", "a; b", "pg_class", "information_schema.x", "x" * 64, "x" * 56, "public.weather",
           "era5_months", "era5_tables", "PG_catalog", "information_schema", "1weather", "", "we ather",
           'weather"; drop table x; --', "wé", "_timescaledb_catalog", "a.b.c", "x" * 5000]
FINE = ["weather", "_w", "W2", "x" * MAX_TABLE, "probe_user2", "weather_pressure_levels"]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_name_is_refused_with_its_reason(name: str) -> None:
    assert table_problem(name) is not None
    with pytest.raises(InputError, match="table"):
        check_table(name)


@pytest.mark.parametrize("name", FINE)
def test_a_plain_name_whose_rollups_fit_is_taken(name: str) -> None:
    assert check_table(name) == name
    assert all(len((name + s).encode()) <= 63 for s in ("_daily", "_monthly"))


def test_the_reasons_say_what_is_wrong() -> None:
    assert "schema-qualified" in str(table_problem("information_schema.x"))
    assert "system name" in str(table_problem("pg_class"))
    assert "at most 55" in str(table_problem("x" * 64))
    assert "bookkeeping" in str(table_problem("era5_metrics"))
    assert "not a table name" in str(table_problem("/tmp/x"))


def _table_commands() -> list[list[str]]:
    """Every command (with its required arguments) that has a --table option, found from the parser."""
    required = {"run-month": ["2024-01"], "validate": ["2024-01"], "load-file": ["f.nc"], "series": ["45", "7"],
                "map": ["2024-01-01T00:00"], "rollups": ["rebuild"]}
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    found = []
    for name, command in sub.choices.items():
        options = {o for a in command._actions for o in a.option_strings}
        nested = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
        if "--table" in options:
            found.append([name, *required.get(name, [])])
        for group in nested:
            for action, inner in group.choices.items():
                if "--table" in {o for a in inner._actions for o in a.option_strings}:
                    found.append([name, action])
    return found


def test_every_command_with_a_table_is_found() -> None:
    names = {c[0] for c in _table_commands()}
    assert {"run-month", "validate", "status", "finalize", "load-file", "series", "map", "reads",
            "rollups"} <= names


@pytest.mark.parametrize("command", _table_commands(), ids=lambda c: " ".join(c))
@pytest.mark.parametrize("name", ["/tmp/x", "a; b", "pg_class", "information_schema.x", "x" * 64])
def test_every_command_refuses_a_hostile_table_before_it_runs(
        command: list[str], name: str, capsys: pytest.CaptureFixture[str]) -> None:
    # argparse refuses it: exit status 2, `error: ...`, and the command's function never runs (so
    # nothing is connected to, created or written).
    with pytest.raises(SystemExit) as exited:
        main([*command, "--table", name])
    err = capsys.readouterr().err
    assert exited.value.code == 2
    assert re.search(r"error: argument --table: table ", err) and "Traceback" not in err, err


@pytest.mark.parametrize("name", ["/tmp/x", "a; b", "pg_class", "information_schema.x", "x" * 64])
def test_settings_the_dag_param_and_http_refuse_the_same_names(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from era5etl.core.months import Month
    from era5etl.pipeline.job import MonthJob
    from era5etl.serve.params import parse_table

    monkeypatch.setenv("ERA5_TABLE", name)
    with pytest.raises(InputError, match="ERA5_TABLE"):
        settings.load()
    monkeypatch.delenv("ERA5_TABLE")
    with pytest.raises(InputError):
        parse_table(name)  # HTTP: a 400 (serve.http_status of an InputError)
    with pytest.raises(InputError):
        MonthJob.create(settings.load(), Month.parse("2024-01"), run_id="r", table=name)  # the DAG's params
    monkeypatch.setenv("ERA5_TABLE", name)
    with pytest.raises(InputError):
        settings.table_for("pressure-levels")


def test_the_dag_param_pattern_is_the_checks() -> None:
    from era5etl.airflow.tasks import default_params

    schema = default_params(settings.load())["table"].schema
    pattern = re.compile(schema["pattern"])
    for name in ["/tmp/x", "a; b", "information_schema.x"]:
        assert not pattern.search(name)
    assert schema["maxLength"] == MAX_TABLE


def test_validate_with_a_path_for_a_table_makes_no_folder(tmp_path: object, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 31: `validate 2025-05 --table /tmp/probe/abs` made /tmp/probe/abs/2025-05/50_5_45_10.
    from pathlib import Path

    base = Path(str(tmp_path))
    monkeypatch.setenv("ERA5_VALIDATION_DIR", str(base / "validation"))
    with pytest.raises(SystemExit) as exited:
        main(["validate", "2025-05", "--table", str(base / "probe" / "abs")])
    assert exited.value.code == 2 and "error: argument --table" in capsys.readouterr().err
    assert list(base.iterdir()) == []


def test_a_derived_name_past_63_bytes_is_fitted_whole_and_distinct() -> None:
    """The copy of years of the longest table's daily rollup, and its copy's yearly chunks: PostgreSQL
    would cut them at 63 bytes, and two years' chunks would then share a name."""
    from era5etl.core.names import MAX_CHUNK_NAME, MAX_IDENTIFIER, fitted
    from era5etl.db.years import copy_name, copy_sources

    longest = "x" * MAX_TABLE
    assert fitted("weather_daily_years") == "weather_daily_years"
    assert copy_name("weather_daily") == "weather_daily_years" and copy_name("weather") == "weather_years"
    assert copy_sources("weather") == [("weather", "time"), ("weather_daily", "bucket")]
    daily_copy = copy_name(longest + "_daily")
    chunks = {fitted(f"{daily_copy}_{year}") for year in (2023, 2024)} | {fitted(f"{copy_name(longest)}_2023")}
    assert all(len(n.encode()) <= MAX_IDENTIFIER for n in (daily_copy, *chunks)) and len(chunks) == 3
    assert daily_copy != copy_name(longest) and daily_copy.startswith(longest[:54] + "_")
    assert fitted(longest + "_daily_years") == daily_copy  # the same name each time it is asked
    # A chunk's name leaves room for TimescaleDB's "_compressed" twin.
    chunk = fitted(f"{daily_copy}_2023", MAX_CHUNK_NAME)
    assert len(chunk) == MAX_CHUNK_NAME == 52 and len(chunk + "_compressed") == MAX_IDENTIFIER
    assert fitted("weather_years_2023", MAX_CHUNK_NAME) == "weather_years_2023"


def test_a_stored_name_is_printed_without_its_control_characters() -> None:
    """Issue 47: a region named over HTTP with terminal escapes had `regions list` retitle the operator's
    terminal (`\\033]0;pwned\\a`); a 30,000-character name filled it."""
    from era5etl.core.names import printable

    assert printable("\x1b]0;pwned\x07") == "\\x1b]0;pwned\\x07"
    assert printable("Zürich") == "Zürich"
    assert printable("x" * 30_000) == "x" * 77 + "..." and len(printable("y" * 100, 32)) == 32
