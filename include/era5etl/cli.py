"""``python -m era5etl``: the same core the DAG runs, without a scheduler."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from era5etl.core.errors import InputError
from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import parse_list
from era5etl.db import DatabaseError, LocalTimescale, database_url, ensure_schema, redact
from era5etl.fetch import Credentials, FetchError
from era5etl.settings import Settings

log = logging.getLogger("era5etl")


def _emit(obj: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(obj, default=str))


def cmd_db(args: argparse.Namespace) -> int:
    if os.environ.get("ERA5_DATABASE_URL"):
        given = os.environ["ERA5_DATABASE_URL"]
        if args.action == "down":
            print("ERA5_DATABASE_URL is set: the database is not ours to stop", file=sys.stderr)
            return 2
        if not args.json:
            print(redact(given))
        _emit({"url": given, "running": True, "managed": False}, args.json)
        return 0
    server = LocalTimescale()
    if args.action == "up":
        url = server.up(progress=lambda line: print(line, file=sys.stderr, flush=True))
        if not args.json:
            print(url)
        _emit({"url": url, "running": True, "managed": True, "home": str(server.home)}, args.json)
    elif args.action == "down":
        stopped = server.down()
        if not args.json:
            print("stopped" if stopped else "not running")
        _emit({"stopped": stopped}, args.json)
    else:
        info = server.describe()
        if not args.json:
            versions = (f" PostgreSQL {info['postgresql']}, TimescaleDB {info['timescaledb']} "
                        f"(licence {info['licence']})" if info["running"] else "")
            shown = redact(str(info["url"])) if info["url"] else "(not provisioned)"
            print(f"{shown} {'running' if info['running'] else 'stopped'}{versions}")
        _emit(info, args.json)
    return 0


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


def cmd_run_month(args: argparse.Namespace) -> int:
    from era5etl.pipeline import MonthJob, run_month

    settings = Settings.from_env()
    job = MonthJob(
        month=Month.parse(args.month),
        area=Area.parse(args.area) if args.area else settings.area,
        grid=Grid.parse(args.grid) if args.grid else settings.grid,
        variables=tuple(parse_list(args.variables or list(settings.variables))),
        table=args.table or settings.table,
        run_id=f"cli__{datetime.now(UTC):%Y%m%dT%H%M%S}",
        staging_dir=settings.staging_dir,
        chunk_interval=settings.chunk_interval,
    )
    url = database_url()
    began = time.perf_counter()
    with _credentials(args.local_cds) as creds:
        summary = run_month(url, job, creds)
    summary["seconds"] = round(time.perf_counter() - began, 3)
    if not args.json:
        print(f"{job.month} {job.area} -> {job.table}: {summary['rows']:,} rows "
              f"(expected {summary['expected_rows']:,}), expver {','.join(summary['expver']) or '-'}")
        for step in summary["steps"]:
            rate = f", {step['rows_per_s']:,} rows/s" if step.get("rows_per_s") else ""
            print(f"  {step['task']:<9} {step.get('seconds', 0):8.2f} s{rate}")
        print(f"validation: {'passed' if summary['success'] else 'FAILED'}")
        print(_columnstore_line(summary["compression"], summary["steps"][0].get("bytes")))
    _emit(summary, args.json)
    return 0 if summary["success"] else 1


def _columnstore_line(packed: dict[str, Any], download_bytes: int | None) -> str:
    if packed["state"] != "compressed":
        return f"columnstore: {packed['state']} ({packed['reason']})"
    versus = f", {packed['bytes'] / download_bytes:.2f}x the download" if download_bytes else ""
    return (f"columnstore: compressed, {packed['bytes'] / 1e6:,.1f} MB in {packed['chunks']} chunk(s), "
            f"{packed['bytes_per_row']} bytes a row: ratio {packed['ratio']}:1 to the raw values{versus}")


def cmd_load_file(args: argparse.Namespace) -> int:
    import numpy as np

    from era5etl.load import columnstore, load
    from era5etl.load.columnstore import finish_months, span_bytes
    from era5etl.stage import open_download

    paths = [Path(p) for p in args.paths]
    for p in paths:
        if not p.exists():
            raise InputError(f"{p}: no such file")
    url = database_url()
    table = args.table or Settings.from_env().table
    with open_download(paths) as staged:
        if staged.missing_columns and not args.json:
            print(f"columns left NULL (not in the files): {', '.join(staged.missing_columns)}")
        if staged.ignored and not args.json:
            print(f"variables ignored (not in the table): {', '.join(staged.ignored)}")
        if staged.location_id is None and not args.json:
            print("grid points are off the global 0.25 degree lattice: location_id left NULL")
        ensure_schema(url, table)
        result = load(url, table, staged)
        months = [Month.parse(str(m)) for m in np.unique(staged.valid_time.astype("datetime64[M]"))]
        # Each month the files touch ends as the pipeline's months do: compressed, one chunk.
        packed = finish_months(url, table, [(m.start, m.end) for m in months], columnstore.mode_from_env(),
                               measure=False)
        # Months can share a chunk (a year's): the file's bytes are its chunks', each counted once.
        stored = span_bytes(url, table, months[0].start, months[-1].end) if months else 0
        download_bytes = sum(path.stat().st_size for path in paths)
        summary = {
            "rows": result.rows,
            "deleted": result.deleted,
            "seconds": round(result.seconds, 3),
            "rows_per_s": round(result.rows_per_s),
            "table": table,
            "variables": [v.cds_name for v in staged.variables],
            "missing_columns": staged.missing_columns,
            "ignored": staged.ignored,
            "expver": staged.expver,
            "location_ids": staged.location_id is not None,
            "columnstore": packed[0].state if packed else "off",
            "bytes": stored,
            "download_bytes": download_bytes,
        }
    if not args.json:
        print(f"loaded {result.rows:,} rows into {table} in {result.seconds:.2f} s "
              f"({result.rows_per_s:,.0f} rows/s; replaced {result.deleted:,})")
        if packed and packed[0].state == "compressed":
            print(f"columnstore: {stored / 1e6:,.1f} MB for {len(months)} month(s), "
                  f"{stored / download_bytes:.2f}x the files")
        elif packed:
            print(f"columnstore: {packed[0].state} ({packed[0].reason})")
    _emit(summary, args.json)
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from era5etl.track import ledger, metrics
    from era5etl.validate import validate_month

    settings = Settings.from_env()
    month = Month.parse(args.month)
    area = Area.parse(args.area) if args.area else settings.area
    grid = Grid.parse(args.grid) if args.grid else settings.grid
    table = args.table or settings.table
    url = database_url()
    run_id = f"cli__{datetime.now(UTC):%Y%m%dT%H%M%S}"
    with metrics.timed("validate") as fig:
        v = validate_month(url, table, month, area, grid, run_id=run_id)
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
    _emit({**v.summary(), "table": table, "month": str(month), "area": str(area), "grid": str(grid),
           "run_id": run_id, "ledger_updated": in_ledger}, args.json)
    return 0 if v.success else 1


def cmd_status(args: argparse.Namespace) -> int:
    from era5etl.track import ledger

    rows = ledger.months(database_url(), args.table)
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
    _emit({"months": rows}, args.json)
    return 0


def airflow_environment() -> dict[str, str]:
    """Airflow's settings for this checkout: home in .local/, metadata in the local server's ``airflow`` db."""
    from era5etl.db import PROJECT_ROOT, airflow_database_url

    meta = airflow_database_url().replace("postgresql://", "postgresql+psycopg2://", 1)
    return {
        "AIRFLOW_HOME": str(PROJECT_ROOT / ".local" / "airflow"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(PROJECT_ROOT / "dags"),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(PROJECT_ROOT / "plugins"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": meta,
        "GX_ANALYTICS_ENABLED": "False",
    }


def cmd_airflow_env(args: argparse.Namespace) -> int:
    import shlex

    for key, value in airflow_environment().items():
        print(f"export {key}={shlex.quote(value)}")
    return 0


EPILOG = """\
exit status: 0 done; 1 a failure the message explains (database unreachable, CDS refusal, failed
validation); 2 bad input (month, area, variables, a file that cannot be loaded); nothing is loaded
from bad input.

environment (README, Configuration): ERA5_DATABASE_URL (else the local TimescaleDB, built once per
machine), CDSAPI_URL and CDSAPI_KEY (or ~/.cdsapirc), ERA5_AREA, ERA5_GRID, ERA5_VARIABLES,
ERA5_TABLE, ERA5_STAGING_DIR, ERA5_CHUNK_ROWS, ERA5_COMPRESSION, ERA5_TIMESCALEDB_LICENSE,
ERA5_LOG_LEVEL."""


def build_parser() -> argparse.ArgumentParser:
    from importlib.metadata import version

    from era5etl.db.image import TIMESCALEDB_VERSION

    p = argparse.ArgumentParser(prog="era5etl", description=__doc__, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version",
                   version=f"era5etl {version('era5etl')} (local server: TimescaleDB {TIMESCALEDB_VERSION} Community)")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="log what each step does (-v: info, -vv: debug; default from ERA5_LOG_LEVEL, else warnings)")
    sub = p.add_subparsers(dest="command", required=True)

    db = sub.add_parser("db", help="the database: start (up), stop (down), or show it (status)")
    db.add_argument("action", choices=["up", "down", "status"],
                    help="up: build (once per machine), start and print the URL; down: stop; status: versions, licence")
    db.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    db.set_defaults(func=cmd_db)

    rm = sub.add_parser("run-month", help="fetch, stage, load, validate and record one month")
    rm.add_argument("month", help="YYYY-MM")
    rm.add_argument("--area", help="N/W/S/E in degrees (default from ERA5_AREA or 50/5/45/10)")
    rm.add_argument("--grid", help="grid step in degrees, a multiple of 0.25 (default 0.25)")
    rm.add_argument("--variables", help="comma-separated CDS variable names (default: all six)")
    rm.add_argument("--table", help="hypertable name (default weather)")
    rm.add_argument("--local-cds", action="store_true", help="start the local CDS server for this run")
    rm.add_argument("--json", action="store_true", help="end with one JSON object of the figures")
    rm.set_defaults(func=cmd_run_month)

    lf = sub.add_parser("load-file", help="load NetCDF/ZIP files as the CDS delivered them")
    lf.add_argument("paths", nargs="+", help="the files of one download (.nc, or a ZIP even when named .nc)")
    lf.add_argument("--table", help="hypertable name (default ERA5_TABLE or weather; created if missing)")
    lf.add_argument("--json", action="store_true", help="end with one JSON object of the figures")
    lf.set_defaults(func=cmd_load_file)

    va = sub.add_parser("validate", help="run the Great Expectations suite on a loaded month")
    va.add_argument("month", help="YYYY-MM")
    va.add_argument("--area", help="N/W/S/E in degrees (default ERA5_AREA or 50/5/45/10)")
    va.add_argument("--grid", help="grid step in degrees (default 0.25)")
    va.add_argument("--table", help="hypertable name (default weather)")
    va.add_argument("--json", action="store_true", help="end with one JSON object of the verdict")
    va.set_defaults(func=cmd_validate)

    st = sub.add_parser("status", help="the month ledger")
    st.add_argument("--table", help="only this table's months")
    st.add_argument("--json", action="store_true", help="print the ledger as one JSON object")
    st.set_defaults(func=cmd_status)

    from era5etl.pipeline import schedule
    from era5etl.read import timing as reads

    reads.add_parser(sub)
    schedule.add_parser(sub)

    ae = sub.add_parser("airflow-env", help="print shell exports that point Airflow at this checkout")
    ae.set_defaults(func=cmd_airflow_env)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    level = {0: os.environ.get("ERA5_LOG_LEVEL", "WARNING"), 1: "INFO"}.get(args.verbose, "DEBUG")
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args))
    except Exception as exc:
        code = _exit_code(exc)
        if code is None:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return code


def _exit_code(exc: Exception) -> int | None:
    """2 for bad input, 1 for a failure the message explains, None for a bug (traceback shown)."""
    if isinstance(exc, InputError):
        return 2
    if isinstance(exc, DatabaseError | FetchError):
        return 1
    # Imported here: these modules pull in xarray and Great Expectations, which `db up` never needs.
    import psycopg

    from era5etl.load import LoadError
    from era5etl.pipeline import PipelineError
    from era5etl.stage import StageError

    if isinstance(exc, StageError):
        return 2
    # A database that went away mid-run: each chunk is whole or untouched, so the message and a
    # rerun are what the user needs, not a traceback.
    if isinstance(exc, PipelineError | LoadError | psycopg.OperationalError):
        return 1
    return None
