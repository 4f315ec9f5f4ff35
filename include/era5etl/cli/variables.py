"""``variables``: the catalogue of ERA5 single-level variables, what each is called where, and its units."""

# Imports inside functions: `era5etl --help` and each command load only what that command runs (start-
# up time).

from __future__ import annotations

import argparse
import sys
from typing import Any

from era5etl.cli.common import emit


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("variables", help="list the ERA5 variables known (CDS, NetCDF and GRIB names, units, bounds)")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    p.set_defaults(func=cmd_variables)


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def cmd_variables(args: argparse.Namespace) -> int:
    from era5etl.core.variables import CATALOGUE, VARIABLES

    if args.json:
        emit({"variables": [
            {"cds_name": v.cds_name, "short_name": v.short_name, "grib_name": v.grib_name, "param_id": v.param_id,
             "column": v.column, "step_type": v.step_type, "units": v.units, "table_unit": v.table_unit,
             "scale": v.scale, "offset": v.offset, "low": v.low, "high": v.high, "default": v in VARIABLES}
            for v in CATALOGUE]}, True)
        return 0

    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"ERA5 single-level variables ({len(CATALOGUE)}; * = the table's {len(VARIABLES)} columns, "
                        "loaded by default)", title_justify="left")
    for header in ("", "CDS name", "NetCDF", "GRIB", "paramId", "step", "column", "file unit -> table unit",
                   "table = file x scale + offset", "bounds (table unit)"):
        table.add_column(header, no_wrap=True, justify="right" if header == "paramId" else "left")
    for v in CATALOGUE:
        conversion = " ".join([*([f"x {v.scale:g}"] if v.scale != 1.0 else []),
                               *([f"{'-' if v.offset < 0 else '+'} {abs(v.offset):g}"] if v.offset else [])])
        high = "none" if v.high is None else _number(v.high)
        table.add_row("*" if v in VARIABLES else "", v.cds_name, v.short_name, v.grib_name, str(v.param_id),
                      v.step_type, v.column, f"{v.units} -> {v.table_unit}", conversion,
                      f"{_number(v.low)} .. {high}")
    # Off a terminal (a pipe, a file) rich would wrap at 80 columns: print each row whole instead.
    console = Console() if sys.stdout.isatty() else Console(width=250, soft_wrap=True)
    console.print(table)
    return 0
