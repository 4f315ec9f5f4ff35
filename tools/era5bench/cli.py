"""The command line, ``python -m era5bench``: its options (``build_parser``) and ``cmd_bench``, which runs
the parts asked for (comparison, sustained load, layouts) and reports their figures."""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from era5bench.common import log
from era5bench.comparison import KINDS, Result, run_comparison
from era5bench.downloads import FIRST_DAY, cached_download, comparison_download, day_request
from era5bench.methods import BY_NAME, Context
from era5bench.report import (
    DEFAULT_CHART,
    print_comparison,
    print_layouts,
    print_sustained,
    print_targets,
    summarize,
    write_chart,
)
from era5bench.rows import read_rows
from era5bench.sustained import run_sustained
from era5bench.tables import server_settings
from era5etl.db import redact


def _ints(text: str) -> list[int]:
    try:
        out = [int(v.replace("_", "")) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return out


def _names(choices: Sequence[str]) -> Callable[[str], list[str]]:
    def parse(text: str) -> list[str]:
        names = [v.strip() for v in text.split(",") if v.strip()]
        if names == ["all"]:
            return list(choices)
        if names == ["none"]:
            return []
        bad = [n for n in names if n not in choices]
        if bad or not names:
            raise argparse.ArgumentTypeError(f"unknown {bad or text!r}; choose from all, {', '.join(choices)}")
        return names
    return parse


def _area(text: str) -> list[float]:
    try:
        parts = [float(v) for v in text.replace(",", "/").split("/")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"area {text!r}: expected N/W/S/E") from None
    if len(parts) != 4:
        raise argparse.ArgumentTypeError(f"area {text!r}: expected N/W/S/E")
    return parts


def _positive(text: str) -> int:
    v = int(text.replace("_", ""))
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m era5bench",
        description="Rerun the PostgreSQL/TimescaleDB ingest comparison on this machine's database, on "
                    "ERA5-shaped rows from synthetic CDS downloads (cached in .local/bench/): load methods "
                    "(INSERT .. COPY), the sustained end-to-end load, storage layouts.")
    p.add_argument("--rows", type=_positive, default=200_000,
                   help="rows every method loads (rounded to whole grid rows; default 200000)")
    p.add_argument("--single-rows", type=_positive, default=20_000,
                   help="single-row INSERT loads only the first this many rows (default 20000)")
    p.add_argument("--days", type=_positive, default=4, help="days the comparison rows span (default 4)")
    p.add_argument("--batch-sizes", type=_ints, default=[1000, 10_000, 100_000],
                   help="rows per batch for the batched methods (default 1000,10000,100000)")
    p.add_argument("--repeat", type=_positive, default=3, help="runs of each (default 3)")
    p.add_argument("--workers", type=_positive, default=2, help="connections of parallel binary COPY (default 2)")
    p.add_argument("--methods", type=_names(list(BY_NAME)), default=list(BY_NAME),
                   help=f"comma-separated subset of: {', '.join(BY_NAME)}; or none (default all)")
    p.add_argument("--tables", type=_names(list(KINDS)), default=list(KINDS),
                   help="plain, hypertable or both (default both)")
    p.add_argument("--sustained", type=_positive, metavar="N",
                   help="also load N rows end to end (global day files) and report the rate per tenth")
    p.add_argument("--sustained-area", type=_area, metavar="N/W/S/E",
                   help="area of the sustained files (default global)")
    p.add_argument("--blog-hours", type=_positive, default=1,
                   help="hours of the sustained data the blog's path loads for the ratio (default 1)")
    p.add_argument("--layouts", action="store_true",
                   help="also compare the storage layouts (plain, hypertable, compressed, columnstore, the server "
                        "alone) on the same day(s): sizes, rates, reads, and the projected size of 1940-now")
    p.add_argument("--layout-days", type=_positive, default=1, help="days of the layout comparison (default 1)")
    p.add_argument("--layout-area", type=_area, metavar="N/W/S/E",
                   help="area of the layout comparison (default global)")
    p.add_argument("--layout-kinds", type=_names(["plain", "hypertable", "compressed", "columnstore", "segmentby",
                                                  "placefirst"]),
                   default=["plain", "hypertable", "compressed", "columnstore"],
                   help="layouts to compare (default plain,hypertable,compressed,columnstore; also segmentby: "
                        "one place a batch, placefirst: batches ordered by place then time)")
    p.add_argument("--chart", type=Path, default=DEFAULT_CHART, help=f"PNG to write (default {DEFAULT_CHART})")
    p.add_argument("--no-chart", action="store_true", help="write no PNG chart")
    p.add_argument("--no-checkpoint", action="store_true", help="no CHECKPOINT before each timed run")
    p.add_argument("--keep-tables", action="store_true", help="leave the bench tables in the database")
    p.add_argument("--check", action="store_true", help="exit 1 unless every target is met")
    p.add_argument("--json", action="store_true", help="end with one JSON object of the figures")
    p.set_defaults(func=cmd_bench)
    return p


def _run_layouts(url: str, args: argparse.Namespace) -> dict[str, Any]:
    from era5bench.layouts import projection, run_layouts
    from era5etl import settings

    days = [FIRST_DAY + timedelta(days=k) for k in range(args.layout_days)]
    path = cached_download(day_request(days, args.layout_area))
    figures = run_layouts(url, path, layouts=args.layout_kinds, keep=args.keep_tables)
    configured = settings.load()
    area = configured.area
    figures["projection"] = projection(figures, area.points(configured.grid))
    if figures["projection"]:
        figures["projection"]["area"]["name"] = str(area)
    return figures


def cmd_bench(args: argparse.Namespace) -> int:
    from era5etl.db import database_url

    url = database_url()
    settings = server_settings(url)
    run_id = uuid.uuid4().hex[:8]
    results: list[Result] = []
    comparison: dict[str, Any] = {}
    if args.methods:
        path = comparison_download(args.rows, args.days)
        rows = read_rows([path])
        ctx = Context(url, rows, [path], workers=args.workers, single_rows=args.single_rows)
        comparison = {"file": str(path), "rows": len(rows), "days": len(rows.day_ranges()),
                      "single_row_insert_rows": min(len(rows), args.single_rows)}
        log(f"bench: {len(rows):,} rows over {comparison['days']} day(s) from {path.name}; "
            f"server {settings.get('server_version', '?')}, TimescaleDB {settings.get('timescaledb', '?')}, "
            f"{redact(url)}")
        results = run_comparison(url, ctx, methods=args.methods, batch_sizes=args.batch_sizes, kinds=args.tables,
                                 repeat=args.repeat, run_id=run_id, flush=not args.no_checkpoint,
                                 keep_tables=args.keep_tables)
    sustained = None
    if args.sustained:
        sustained = run_sustained(url, args.sustained, area=args.sustained_area, run_id=run_id,
                                  keep_table=args.keep_tables, blog_hours=args.blog_hours)
    layouts = None
    if args.layouts:
        layouts = _run_layouts(url, args)
    summary = summarize(results, sustained, settings)

    if results:
        print_comparison(results, comparison, args.methods)
    if sustained:
        print_sustained(sustained, summary)
    if layouts:
        print_layouts(layouts)
    print_targets(summary, settings)
    if (results or sustained) and not args.no_chart:
        write_chart(args.chart, results, sustained)
        print(f"chart: {args.chart}")
    if args.json:
        print(json.dumps({
            **summary, "settings": settings, "comparison": comparison, "repeat": args.repeat,
            "results": [r.as_dict() for r in results], "sustained": sustained, "layouts": layouts,
            "chart": None if args.no_chart or not (results or sustained) else str(args.chart),
            "client": {"pid": os.getpid(), "python": sys.version.split()[0]},
        }))
    if args.check and not all(t["met"] is True for t in summary["targets"].values()):
        return 1
    return 0
