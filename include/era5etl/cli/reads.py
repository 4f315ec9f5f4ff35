"""``reads``: the reads people make, timed on this machine (docs/benchmarks.md)."""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from typing import Any

from era5etl.cli.common import positive_int, table_arg
from era5etl.db import connect, database_url
from era5etl.read.timing import API_TARGETS_MS, TARGETS_MS, measure, measure_api


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("reads", help="time the reads people make: a place's history, an hour's slice, and the "
                                      "series and maps the CLI and the HTTP API answer")
    p.add_argument("--table", type=table_arg, default="weather", help="the hypertable to read (default weather)")
    p.add_argument("--runs", type=positive_int, default=20,
                   help="timed runs of each read, after one warm-up (default 20)")
    p.add_argument("--json", action="store_true", help="end with one JSON object of the figures")
    p.set_defaults(func=cmd_reads)


def cmd_reads(args: argparse.Namespace) -> int:
    url = database_url()
    figures = measure(url, args.table, runs=args.runs)
    api, skipped = measure_api(url, args.table, runs=args.runs)
    with connect(url) as conn:
        row = conn.execute(
            "SELECT count(*), pg_size_pretty(hypertable_size(%s::regclass)) FROM timescaledb_information.chunks"
            " WHERE hypertable_name = %s", (args.table, args.table.split(".")[-1])).fetchone()
    chunks, size = (row or (0, "?"))
    print(f"{args.table}: {chunks} chunks, {size}; {args.runs} warm runs each, random picks "
          f"({datetime.now():%Y-%m-%d})")
    for f in figures + api:
        target = TARGETS_MS.get(f.query, API_TARGETS_MS.get(f.query))
        met = "met" if target is not None and f.median_ms <= target else "NOT met"
        verdict = "" if target is None else f"  target <= {target:g} ms: {met}"
        print(f"  {f.query:<28} rows {f.rows:>9,}  median {f.median_ms:9.2f} ms  "
              f"min {f.min_ms:9.2f}  max {f.max_ms:9.2f}  [{f.plan}]{verdict}")
    for reason in skipped:
        print(f"  not timed: {reason}")
    if args.json:
        print(json.dumps({"table": args.table, "chunks": chunks, "reads": [f.as_dict() for f in figures],
                          "api": [f.as_dict() for f in api], "not_timed": skipped}))
    return 0
