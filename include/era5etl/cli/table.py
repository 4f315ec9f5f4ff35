"""``table list|drop|relayout|years|check``: the pipeline's tables (those it made or its ledger names), dropping
one with its records, moving one into the tile layout, copying its finished years place-major, and
auditing one against its ledger."""

# Imports inside functions: `era5etl --help` and each command load only what that command runs (start-
# up time).

from __future__ import annotations

import argparse
from typing import Any

from era5etl.cli.common import add_list_drop, emit, size_text, table_arg
from era5etl.core.errors import InputError


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("table", help="the pipeline's tables: list them, or drop one with its rollups and records")
    actions = p.add_subparsers(dest="action", required=True, help="list: the tables; drop: one of them, with --yes")
    add_list_drop(actions, list_help="the tables the pipeline made (era5_tables) or its ledger (era5_months) names: "
                                     "months, rows, size",
                  drop_help="drop a pipeline table, its rollups, and its ledger, metrics and validation rows (only "
                            "tables the pipeline made or its ledger names)",
                  name_help="the table, as the ledger names it (see `table list`)", on_list=cmd_list, on_drop=cmd_drop)
    rl = actions.add_parser("relayout", help="move a table and its rollups into the tile layout, chunk by chunk, from "
                                             "the rows it holds (resumable; reads stay correct meanwhile)")
    rl.add_argument("name", type=table_arg, help="the table (see `table list`: its layout)")
    rl.add_argument("--json", action="store_true", help="end with one JSON object of what was moved")
    rl.set_defaults(func=cmd_relayout)
    yc = actions.add_parser("years", help="copy a table's finished years place-major into <table>_years, so one "
                                          "place's decades read its own rows (a year a transaction; reruns go on)")
    yc.add_argument("name", type=table_arg, help="the table (see `table list`: its copied years)")
    yc.add_argument("--year", type=int, action="append", metavar="YEAR",
                    help="copy (again) this year; repeat for more (default: every finished year not yet copied: "
                         "before this one, and of a table the ledger has months of, its twelve months validated)")
    yc.add_argument("--json", action="store_true", help="end with one JSON object of what was copied")
    yc.set_defaults(func=cmd_years)
    ck = actions.add_parser("check", help="audit a table against its ledger, month by month: rows, the rollups, the "
                                          "copies of years; say what differs (exit status 1 when anything does)")
    ck.add_argument("name", type=table_arg, help="the table (see `table list`)")
    ck.add_argument("--from", dest="first", metavar="YYYY-MM", help="the first month to check (default: the first)")
    ck.add_argument("--to", dest="last", metavar="YYYY-MM", help="the last month to check (default: the last)")
    ck.add_argument("--json", action="store_true", help="one JSON object of what was checked and found")
    ck.set_defaults(func=cmd_check)


def cmd_list(args: argparse.Namespace) -> int:
    from era5etl.db import database_url
    from era5etl.track.tables import pipeline_tables

    tables = pipeline_tables(database_url())
    if args.json:
        emit({"tables": [t.as_dict() for t in tables]}, True)
        return 0
    if not tables:
        print("no pipeline tables (era5_tables and the ledger era5_months name none)")
        return 0
    print(f"{'table':<32} {'months':>6} {'validated':>9} {'areas':>5} {'rows (ledger)':>15}  {'span':<17} "
          f"{'layout':<8} {'size':<10} years copied (their size)")
    for t in tables:
        size = size_text(t.bytes) if t.exists else "(table missing)"
        print(f"{t.name:<32} {t.months:>6} {t.validated:>9} {t.areas:>5} {t.rows:>15,}  "
              f"{t.first_month + '..' + t.last_month:<17} {t.layout or '-':<8} {size:<10} {_years(t.years_copied)}"
              + (f" ({size_text(t.copies_bytes)})" if t.copies_bytes is not None else ""))
    return 0


def _years(years: list[int]) -> str:
    """Copied years as runs: ``1940..2023`` or ``2001, 2003..2005``; ``-`` for none."""
    from era5etl.read.years import year_runs

    runs = [(a.year, b.year - 1) for a, b in year_runs(years)]
    return ", ".join(str(a) if a == b else f"{a}..{b}" for a, b in runs) or "-"


def cmd_check(args: argparse.Namespace) -> int:
    """Audit a table against its ledger (track.audit): 0 when all agrees, 1 when anything differs."""
    from era5etl.core.months import Month
    from era5etl.db import database_url
    from era5etl.track.audit import audit
    from era5etl.track.tables import find

    url = database_url()
    first, last = (Month.parse(m) if m else None for m in (args.first, args.last))
    found = audit(url, find(url, args.name).name, first, last)
    if args.json:
        emit(found.as_dict(), True)
    else:
        for line in found.differences:
            print(f"differs: {line}")
        for line in found.open:
            print(f"open: {line}")
        verdict = f"{len(found.differences)} difference(s)" if found.differences else "the ledger and the table agree"
        print(f"{args.name}: {found.months} ledger month(s), {found.copies} copied year(s) checked: {verdict}")
    return 1 if found.differences else 0


def cmd_years(args: argparse.Namespace) -> int:
    """Copy a table's finished years place-major (load.years)."""
    from era5etl.db import database_url
    from era5etl.load.years import YearCopy, copy_years
    from era5etl.track.tables import find

    url = database_url()
    if not find(url, args.name).exists:
        raise InputError(f"table {args.name!r} is in the ledger but not in the database: nothing to copy")

    def said(done: YearCopy) -> None:
        if not args.json:
            print(f"{args.name}: {done.year} copied, {done.rows:,} hourly and {done.daily_rows:,} daily rows in "
                  f"{done.seconds:.1f} s ({(done.rows + done.daily_rows) / max(done.seconds, 1e-9):,.0f} rows/s)",
                  flush=True)

    copied = copy_years(url, args.name, args.year, said)
    if not args.json and not copied:
        print(f"{args.name}: no year to copy (every finished year is copied; --year YEAR copies one again)")
    emit({"table": args.name, "copied": [c.as_dict() for c in copied]}, args.json)
    return 0


def cmd_drop(args: argparse.Namespace) -> int:
    from era5etl.db import database_url
    from era5etl.track.tables import drop, find

    url = database_url()
    table = find(url, args.name)  # a table the ledger does not name is refused, --yes or not
    if not args.yes:
        raise InputError(f"not dropping {args.name!r} ({table.months} month(s), {table.rows:,} rows) without --yes: "
                         f"`python -m era5etl table drop {args.name} --yes` removes the table, its rollups and its "
                         "ledger, metrics and validation rows, for good")
    done = drop(url, args.name)
    if not args.json:
        print(f"dropped {', '.join(done['dropped']) or '(no table left to drop)'}; deleted "
              + ", ".join(f"{n} row(s) of {r}" for r, n in done["deleted"].items()))
    emit(done, args.json)
    return 0


def cmd_relayout(args: argparse.Namespace) -> int:
    """Move a table and its rollups into the tile layout, chunk by chunk (load.relayout)."""
    import time

    from era5etl.db import connect, database_url, rollup_tables
    from era5etl.load.relayout import relayout
    from era5etl.track.tables import find

    url = database_url()
    if not find(url, args.name).exists:  # only a table the pipeline made is rewritten
        raise InputError(f"table {args.name!r} is in the ledger but not in the database: nothing to move")
    began = time.perf_counter()
    out: dict[str, Any] = {"table": args.name, "moved": []}
    names = [args.name, *rollup_tables(args.name).values()]
    for name in names:
        def said(chunk: Any, rows: int, progress: Any, name: str = name) -> None:
            if not args.json:
                print(f"{name}: chunk {chunk.start:%Y-%m-%d} moved ({progress.moved} of {progress.chunks}, "
                      f"{rows:,} rows so far)", flush=True)
        with connect(url) as conn:
            exists = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()
        if not exists or not exists[0]:
            continue
        done = relayout(url, name, said, lock_as=None if name == args.name else args.name)
        out["moved"].append(done.as_dict())
        if not args.json:
            print(f"{name}: in tiles, {done.chunks} chunk(s); {done.rows:,} rows moved in {done.seconds:.1f} s")
    out["seconds"] = round(time.perf_counter() - began, 2)
    emit(out, args.json)
    return 0
