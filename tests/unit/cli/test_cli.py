"""The CLI explains itself: help for every command and option, exit codes and settings in the epilog,
--version, -v."""

from __future__ import annotations

import argparse

import pytest

from era5etl.cli import COMMANDS, build_parser, command_of
from era5etl.db.image import TIMESCALEDB_VERSION


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_command_and_option_has_help() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert all(choice.help for choice in sub._choices_actions)
    for name, command in _commands(parser).items():
        for action in command._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help, f"{name} {action.option_strings or action.dest} has no help"


def test_a_command_line_builds_its_own_commands_parser_alone() -> None:
    """``main`` builds the parser of the command it is given from that command's module only; the
    table saying which module that is matches what each module adds, so every command is found."""
    whole = _commands(build_parser())
    assert list(whole) == list(COMMANDS)
    for name, module in COMMANDS.items():
        own = _commands(build_parser(name))
        assert name in own and set(own) == {n for n, m in COMMANDS.items() if m == module}
        assert own[name].format_help() == whole[name].format_help()
    assert command_of(["-vv", "climate", "--place", "Jakarta"]) == "climate"
    assert command_of(["--version"]) is None and set(_commands(build_parser("nonsense"))) == set(COMMANDS)


def test_epilog_names_exit_codes_and_settings() -> None:
    text = build_parser().format_help()
    assert "exit status: 0" in text and "2 bad input" in text
    for name in ("ERA5_DATABASE_URL", "CDSAPI_KEY", "ERA5_CHUNK_ROWS", "ERA5_TIMESCALEDB_LICENSE"):
        assert name in text


def test_version_and_verbosity(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        build_parser().parse_args(["--version"])
    assert done.value.code == 0
    assert f"TimescaleDB {TIMESCALEDB_VERSION}" in capsys.readouterr().out
    assert build_parser().parse_args(["-vv", "status"]).verbose == 2


def test_run_ids_of_two_runs_in_one_second_differ() -> None:
    # Issue 31: two CLI runs started in the same second shared `cli__20261127T035701` in era5_metrics.
    from era5etl.cli.months import cli_run_id

    ids = {cli_run_id() for _ in range(50)}  # within a second or two
    assert len(ids) == 50 and all(i.startswith("cli__") for i in ids)


def test_a_month_that_has_not_begun_is_refused_before_the_cds(capsys: pytest.CaptureFixture[str]) -> None:
    from era5etl.cli import main

    assert main(["run-month", "2999-01", "--table", "never_made"]) == 2
    assert "2999-01 has not begun" in capsys.readouterr().err


def test_counts_and_output_files_refuse_what_they_cannot_use(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 47: `reads --runs 0` ended in a traceback and `--png ""` was ignored: argparse's refusal
    (exit 2) for a count under 1, an `error:` line (exit 2) for an empty file name."""
    from era5etl.cli import main

    for runs in ("0", "-3", "many"):
        with pytest.raises(SystemExit) as exited:
            main(["reads", "--runs", runs])
        assert exited.value.code == 2 and "argument --runs" in capsys.readouterr().err
    assert main(["series", "45.5", "7.5", "--png", ""]) == 2
    assert capsys.readouterr().err.startswith("error: --png needs a file name")
    assert main(["climate", "--place", "Jakarta", "--png", " "]) == 2
    assert capsys.readouterr().err.startswith("error: --png needs a file name")
