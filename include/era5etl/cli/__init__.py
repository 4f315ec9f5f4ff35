"""``python -m era5etl``: the same core the DAG runs, without a scheduler.

One module per group of commands (``COMMANDS`` names each command's), beside the helpers they share
(``common``, ``progress``, ``supervise``); this one builds the parser, sets up logging and turns the
core's errors into exit codes (by ``core.answers``).
"""

# Imports inside functions: `era5etl --help` and each command load only what that command runs (start-
# up time).

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from era5etl import settings
from era5etl.core.answers import answer

log = logging.getLogger("era5etl")


EPILOG = """\
exit status: 0 done; 1 a failure the message explains (database unreachable, CDS refusal, failed
validation); 2 bad input (month, area, variables, a file that cannot be loaded); nothing is loaded
from bad input.

environment (docs/configuration.md): ERA5_DATABASE_URL (else the local TimescaleDB, built once per
machine), CDSAPI_URL and CDSAPI_KEY (or ~/.cdsapirc), ERA5_AREA, ERA5_GRID, ERA5_VARIABLES,
ERA5_TABLE, ERA5_STAGING_DIR, ERA5_CHUNK_ROWS, ERA5_COMPRESSION, ERA5_TIMESCALEDB_LICENSE,
ERA5_LOG_LEVEL; every ERA5_* setting with its value: `python -m era5etl settings`."""


# Each command and the module that adds its parser, in the order ``--help`` lists them. ``main``
# imports only the module its command line names: importing all of them took 0.4 s of every cold
# command (``climate`` needs 2 s in all); the whole parser is built for ``--help`` or no command.
COMMANDS = {"db": "database", "airflow-env": "database", "run-month": "months", "validate": "months",
            "status": "months", "finalize": "months", "load-file": "load_file", "rollups": "rollups",
            "series": "series_map", "map": "series_map", "climate": "climate", "reads": "reads",
            "settings": "config", "airflow": "stack", "table": "table", "variables": "variables",
            "regions": "regions", "atlas": "atlas"}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command``'s module alone when it names one."""
    from importlib import import_module
    from importlib.metadata import version

    from era5etl.db.image import TIMESCALEDB_VERSION

    p = argparse.ArgumentParser(prog="era5etl", description=__doc__.split("\n\n")[0], epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version",
                   version=f"era5etl {version('era5etl')} (local server: TimescaleDB {TIMESCALEDB_VERSION} Community)")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="log what each step does (-v: info, -vv: debug; default from ERA5_LOG_LEVEL, else warnings)")
    sub = p.add_subparsers(dest="command", required=True)
    modules = [COMMANDS[command]] if command in COMMANDS else list(dict.fromkeys(COMMANDS.values()))
    for module in modules:
        import_module(f"era5etl.cli.{module}").add_parsers(sub)
    return p


def command_of(argv: Sequence[str]) -> str | None:
    """The command a command line names: its first word that is not an option (``-v`` takes none)."""
    return next((word for word in argv if not word.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(command_of(words)).parse_args(words)
    try:
        level = {0: settings.load().log_level, 1: "INFO"}.get(args.verbose, "DEBUG")
        logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        return int(args.func(args))
    except Exception as exc:
        code = exit_code(exc)
        if code is None:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return code


def exit_code(exc: Exception) -> int | None:
    """2 for bad input, 1 for a failure the message explains, None for a bug (traceback shown): the
    branch of ``core.errors`` the error is on, as ``core.answers`` gives it to the HTTP reads too."""
    found = answer(exc)
    return found.exit_code if found is not None else None
