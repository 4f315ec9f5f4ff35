"""``rollups rebuild``: a table's daily and monthly rollups made again from its hourly rows."""

# Imports inside functions: `era5etl --help` and each command load only what that command runs (start-
# up time).

from __future__ import annotations

import argparse
from typing import Any

from era5etl import settings
from era5etl.cli.common import emit, table_arg
from era5etl.db import database_url


def add_parsers(sub: Any) -> None:
    ro = sub.add_parser("rollups", help="a table's daily and monthly rollups: rebuild them from its hourly rows")
    ro.add_argument("action", choices=["rebuild"],
                    help="rebuild: drop the rollups and fill them again from the hourly rows, a month at a time "
                         "(once, for a table whose rollups an earlier version made)")
    ro.add_argument("--table", type=table_arg, help="the hypertable (default ERA5_TABLE or weather)")
    ro.add_argument("--json", action="store_true", help="end with one JSON object of the figures")
    ro.set_defaults(func=cmd_rollups)


def cmd_rollups(args: argparse.Namespace) -> int:
    from era5etl.load.rebuild import rebuild

    table = args.table or settings.load().table
    done = rebuild(database_url(), table, on_month=None if args.json else
                   lambda month, rows: print(f"{month}: {rows:,} daily rows"))
    if not args.json:
        print(f"{table}: rollups rebuilt for {done['months']:,} month(s): {done['daily_rows']:,} daily and "
              f"{done['monthly_rows']:,} monthly rows")
    emit({"table": table, **done}, args.json)
    return 0
