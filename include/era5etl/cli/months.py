"""Commands on months: ``run-month`` (the whole pipeline), ``validate``, ``status`` (the ledger) and
``finalize`` (ERA5T months that final ERA5 now covers)."""

# Imports inside functions: `era5etl --help` and each command load only what that command runs (start-
# up time).

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections.abc import Iterator
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args

from era5etl import settings as config
from era5etl.cli.common import emit, table_arg
from era5etl.cli.progress import month_display
from era5etl.core.datasets import DATASETS, by_name
from era5etl.core.errors import InputError
from era5etl.core.grid import Area
from era5etl.core.months import Month
from era5etl.db import database_url
from era5etl.fetch import Credentials


def add_parsers(sub: Any) -> None:
    rm = sub.add_parser("run-month", help="fetch, stage, load, validate and record one month")
    rm.add_argument("month", help="YYYY-MM")
    rm.add_argument("--area", help="N/W/S/E in degrees (default from ERA5_AREA or 50/5/45/10)")
    rm.add_argument("--grid", help="grid step in degrees, a multiple of the dataset's native step (0.25; ERA5-Land "
                                   "0.1) (default ERA5_GRID, else the native step)")
    rm.add_argument("--variables", help="comma-separated CDS variable names (default: all six)")
    rm.add_argument("--table", type=table_arg, help="hypertable name (default weather)")
    rm.add_argument("--data-format", choices=get_args(config.DataFormat), type=str.lower,
                    help="what the CDS is asked for: netcdf or grib (default from ERA5_DATA_FORMAT or netcdf)")
    rm.add_argument("--dataset", choices=sorted(DATASETS),
                    help="the ERA5 collection (default ERA5_DATASET, single-levels); another than ERA5_DATASET "
                         "takes its own default variables and table (weather_<dataset>)")
    rm.add_argument("--levels", help="pressure levels in hPa, comma-separated (pressure-levels only; default "
                                     "ERA5_LEVELS, else all 37)")
    rm.add_argument("--local-cds", action="store_true", help="start the local CDS server for this run")
    rm.add_argument("--json", action="store_true", help="end with one JSON object of the figures")
    rm.set_defaults(func=cmd_run_month)

    va = sub.add_parser("validate", help="run the Great Expectations suite on a loaded month")
    va.add_argument("month", help="YYYY-MM")
    va.add_argument("--area", help="N/W/S/E in degrees (default ERA5_AREA or 50/5/45/10)")
    va.add_argument("--grid", help="grid step in degrees (default ERA5_GRID, else the dataset's native step)")
    va.add_argument("--table", type=table_arg, help="hypertable name (default weather)")
    va.add_argument("--dataset", choices=sorted(DATASETS),
                    help="what the month holds (default: what the ledger recorded, else ERA5_DATASET)")
    va.add_argument("--levels", help="the month's pressure levels, hPa, comma-separated (default: the ledger's, "
                                     "else ERA5_LEVELS, else all of the dataset's)")
    va.add_argument("--json", action="store_true", help="end with one JSON object of the verdict")
    va.set_defaults(func=cmd_validate)

    st = sub.add_parser("status", help="the month ledger, and what staging holds")
    st.add_argument("--table", type=table_arg, help="only this table's months")
    st.add_argument("--json", action="store_true", help="print the ledger as one JSON object")
    st.set_defaults(func=cmd_status)

    fi = sub.add_parser("finalize", help="list months still holding ERA5T that final ERA5 covers; --run reloads them")
    fi.add_argument("--table", type=table_arg, help="only this hypertable")
    fi.add_argument("--as-of", help="YYYY-MM-DD to judge by instead of today")
    fi.add_argument("--run", action="store_true", help="reload each month from a fresh download")
    fi.add_argument("--json", action="store_true", help="end with one JSON object of the months")
    fi.set_defaults(func=cmd_finalize)


@contextlib.contextmanager
def _credentials(local: bool) -> Iterator[Credentials]:
    if not local:
        creds = Credentials.from_env()
        if creds.url is None and not Path("~/.cdsapirc").expanduser().exists():
            raise InputError(
                "no CDS credentials: set CDSAPI_URL and CDSAPI_KEY (or write ~/.cdsapirc), or pass "
                "--local-cds to use the local CDS server"
            )
        yield creds
        return
    try:  # the emulator is a tool beside the product (tools/localcds), installed by scripts/setup.sh
        from localcds.server import LocalCDS
    except ImportError:
        raise InputError("--local-cds needs the local CDS emulator: pip install -e tools "
                         "(scripts/setup.sh installs it)") from None

    with LocalCDS() as server:
        yield Credentials(server.url, server.key)


def cli_run_id() -> str:
    """A run id of the CLI's, unique per run: the second it started and a random part (two runs started
    in the same second are two runs in era5_metrics and the ledger)."""
    import secrets

    return f"cli__{datetime.now(UTC):%Y%m%dT%H%M%S}_{secrets.token_hex(3)}"


def cmd_run_month(args: argparse.Namespace) -> int:
    from era5etl.pipeline.job import MonthJob
    from era5etl.pipeline.steps import run_month

    month = Month.parse(args.month)
    if month.start > datetime.now(UTC):
        raise InputError(f"{month} has not begun: the CDS has no data for it yet (nothing was sent to the CDS)")
    job = MonthJob.create(config.load(), month, run_id=cli_run_id(),
                          area=args.area, grid=args.grid, variables=args.variables, table=args.table,
                          data_format=args.data_format, dataset=args.dataset, levels=args.levels)
    url = database_url()
    began = time.perf_counter()
    with _credentials(args.local_cds) as creds, month_display(job.expected_rows,
                                                              enabled=None if not args.json else False) as shown:
        summary = run_month(url, job, creds, on_step=shown.on_step, on_chunk=shown.on_chunk)
    summary["seconds"] = round(time.perf_counter() - began, 3)
    if not args.json:
        print(f"{job.month} {job.area} -> {job.table}: {summary['rows']:,} rows "
              f"(expected {summary['expected_rows']:,}), expver {','.join(summary['expver']) or '-'}")
        if summary["steps"][0].get("note"):  # the fetch's: validation had removed the download
            print(f"  {summary['steps'][0]['note']}")
        if summary["added_columns"]:
            print(f"  table {job.table}: added column(s) {', '.join(summary['added_columns'])}")
        for said in (*summary["notes"], *(f"not loaded: {what}" for what in summary["ignored"])):
            print(f"  {said}")
        for step in summary["steps"]:
            rate = f", {step['rows_per_s']:,} rows/s" if step.get("rows_per_s") else ""
            print(f"  {step['task']:<9} {step.get('seconds', 0):8.2f} s{rate}")
        print(f"validation: {'passed' if summary['success'] else 'FAILED'}")
        print(_columnstore_line(summary["compression"], summary["steps"][0].get("bytes")))
    emit(summary, args.json)
    return 0 if summary["success"] else 1


def _columnstore_line(packed: dict[str, Any], download_bytes: int | None) -> str:
    if packed["state"] != "compressed":
        return f"columnstore: {packed['state']} ({packed['reason']})"
    versus = f", {packed['bytes'] / download_bytes:.2f}x the download" if download_bytes else ""
    return (f"columnstore: compressed, {packed['bytes'] / 1e6:,.1f} MB in {packed['chunks']} chunk(s), "
            f"{packed['bytes_per_row']} bytes a row: ratio {packed['ratio']}:1 to the raw values{versus}")


def cmd_validate(args: argparse.Namespace) -> int:
    from era5etl.core.files import require_writable
    from era5etl.db import connect
    from era5etl.db.registry import require_known
    from era5etl.pipeline.job import dataset_grid
    from era5etl.track import ledger, liveness, metrics
    from era5etl.validate import validate_month
    from era5etl.validate.month import validation_dir

    settings = config.load()
    month = Month.parse(args.month)
    area = Area.parse(args.area) if args.area else settings.area
    url = database_url()
    asked = by_name(args.dataset) if args.dataset else None
    if asked is not None:  # the box as the month's job stored it (pipeline.job: on the dataset's lattice)
        area = area.on_lattice(dataset_grid(settings, asked, args.grid).step)
    table = args.table or (settings.table if asked is None else config.table_for(asked.name))
    with connect(url) as conn:  # a user's table is never validated, nor its days recorded
        require_known(conn, table)
    require_writable(validation_dir(), "ERA5_VALIDATION_DIR")
    liveness.reap(url, table)  # a month whose run is gone is failed, so its verdict may settle it
    recorded = ledger.loaded_from(url, table, month, str(area))
    dataset = asked or by_name(recorded[0] if recorded else settings.dataset)
    if args.levels:
        levels = dataset.parse_levels(args.levels)
    elif recorded and recorded[0] == dataset.name and recorded[1]:
        levels = dataset.parse_levels(recorded[1])
    else:
        levels = dataset.parse_levels(settings.levels if dataset.name == settings.dataset else ())
    grid = dataset_grid(settings, dataset, args.grid)
    area = area.on_lattice(grid.step)
    run_id = cli_run_id()
    with metrics.timed("validate") as fig:
        v = validate_month(url, table, month, area, grid, run_id=run_id, dataset=dataset, levels=levels)
    fig.rows, fig.bytes, fig.detail = v.observed_rows or 0, v.bytes, {**v.summary(), "on_demand": True}
    # An on-demand verdict is recorded like a pipeline's, so the ledger keeps describing the table as it is.
    in_ledger = ledger.record_validation(url, table=table, month=month, area=str(area), failed=v.failed,
                                         path=str(v.folder) if v.folder else None,
                                         observed_rows=v.observed_rows, run_id=run_id, settle=True)
    metrics.record(url, run_id=run_id, month=month, table=table, area=str(area), figures=fig)
    if not args.json:
        print(f"{month} {area} grid {grid} in {table}: {'passed' if v.success else 'FAILED'} "
              f"({v.observed_rows:,} of {v.expected_rows:,} rows) in {v.seconds:.2f} s")
        for failure in v.failures:
            days = f" on {', '.join(failure['days'])}" if failure["days"] else ""
            print(f"  failed: {failure['name']}{days}")
        print(f"  result: {v.result_path}")
        if v.docs_path:
            print(f"  data docs: {v.docs_path}")
    emit({**v.summary(), "table": table, "month": str(month), "area": str(area), "grid": str(grid),
           "run_id": run_id, "ledger_updated": in_ledger}, args.json)
    return 0 if v.success else 1


def cmd_status(args: argparse.Namespace) -> int:
    from era5etl.fetch import retention
    from era5etl.track import ledger

    rows = ledger.months(database_url(), args.table)
    staging = retention.usage(config.load().staging_dir)  # all tables': staging is by request, not table
    if not args.json:
        if not rows:
            print("no months in the ledger" + (f" for table {args.table}" if args.table else ""))
        for r in rows:
            count = f"{r['rows']:,}" if r["rows"] is not None else "-"
            expected = f"{r['expected_rows']:,}" if r["expected_rows"] is not None else "-"
            print(f"{r['table_name']:<12} {r['month']} {r['area']:<16} {r['state']:<10} {count:>13} / {expected:<13} "
                  f"{','.join(r['expver'] or []) or '-':<9} {r['updated_at']:%Y-%m-%d %H:%M} {r['run_id'] or '-'}")
            if r["error"]:
                print(f"    error: {r['error']}")
            if r["validation_path"]:
                print(f"    validation: {r['validation_path']}")
        print(staging.text())
    emit({"months": rows, "staging": staging.as_dict()}, args.json)
    return 0


def cmd_finalize(args: argparse.Namespace) -> int:
    from era5etl.pipeline.finalize import months_to_finalize, reload_month
    from era5etl.pipeline.schedule import revision_for

    if args.as_of:
        try:
            now = datetime.strptime(args.as_of, "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError:
            raise InputError(f"--as-of {args.as_of!r} is not of the form YYYY-MM-DD") from None
    else:
        now = datetime.now(UTC)
    url = database_url()
    found = months_to_finalize(url, now, table=args.table)
    revision = revision_for(now)
    out: dict[str, Any] = {"as_of": now.date().isoformat(), "final_after_months": config.load().final_after_months,
                           "months": [asdict(f) for f in found], "revision": revision}
    if not args.json:
        print(f"{len(found)} month(s) hold ERA5T that final ERA5 should cover by {now:%Y-%m-%d}")
        for f in found:
            print(f"  {f.table} {f.month} {f.area} grid {f.grid}: expver {','.join(f.expver)} ({f.state})")
    failures = 0
    if args.run:
        reloads = []
        for f in found:
            summary = reload_month(url, f, Credentials.from_env(), revision=revision)
            failures += not summary["success"]
            reloads.append({k: summary[k] for k in ("month", "area", "table", "rows", "expver", "success", "final",
                                                    "request_hash", "superseded_jobs")})
            if not args.json:
                state = "final" if summary["final"] else "still ERA5T"
                print(f"  reloaded {f.table} {f.month} {f.area}: {summary['rows']:,} rows, expver "
                      f"{','.join(summary['expver'])} ({state}), validation "
                      f"{'passed' if summary['success'] else 'FAILED'}")
        out["reloaded"] = reloads
    if args.json:
        print(json.dumps(out, default=str))
    return 1 if failures else 0
