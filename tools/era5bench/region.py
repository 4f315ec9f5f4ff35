"""``python -m era5bench region``: a country's series by its outline (``--region Chile``) on a loaded
table of the country's box (docs/climate.md, "Regions by outline"; the issue's targets: monthly over
1940-2024 <= 1 s, daily over 10 years <= 3 s).

Mainland Chile's box, 17.5-56 S, 66.5-76 W (6,045 grid points), every hour of the years asked, 2 m
temperature and precipitation, synthetic (the local CDS's fields), loaded by the product's own
``load-file`` (which writes the rollups). Then, warm and in one process, the region's monthly and
daily series over everything loaded (``read.region_series.region_series``, what ``series --region``
and ``climate --region`` read), the median of ``--runs``, and once the whole ``series --region Chile
--monthly --json`` process. The region's weights are timed apart: PostGIS's first computation (its
stored rows dropped first) and the read of the stored rows every later read makes.

``--monthly-years 1940-2024`` also times the monthly series over those years on a second table,
``<table>_months``, of one hour a month (the 1st, 00 UTC) of the same box: a monthly series reads only
the monthly rollup, and that table's rollup has the rows a full table's would (6,045 points x 12 a
year), in the same layout and chunks, while its hourly rows are 1/744 of a full one's (85 years of
every hour of the box would be 4.5 billion rows, more than this machine's disk holds beside the rest).
Its rollup values are of one hour, not a month's: it measures the read's cost, not a climate.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any

from era5bench.common import log, timed
from era5bench.downloads import CACHE_DIR
from era5bench.loadfile import decades_download, run

BOX = (-17.5, -76.0, -56.0, -66.5)  # N/W/S/E: 155 x 39 = 6,045 points


def _years(text: str) -> tuple[int, int]:
    first, _, last = text.partition("-")
    return int(first), int(last or first)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m era5bench region",
                                description="series --region Chile, monthly and daily, on a loaded table of its box")
    p.add_argument("--years", default="2015-2024", help="the years loaded, Y1-Y2 (default 2015-2024; the issue's "
                                                         "monthly target is over 1940-2024)")
    p.add_argument("--table", default="bench_chile", help="the table (default bench_chile)")
    p.add_argument("--runs", type=int, default=5, help="warm runs of each read (default 5)")
    p.add_argument("--reload", action="store_true", help="load the table again even if it is there")
    p.add_argument("--json", action="store_true", help="end with one JSON object")
    p.add_argument("--monthly-years", metavar="Y1-Y2", help="also the monthly series over these years, on "
                   "<table>_months: one hour a month of the box (its monthly rollup is a full table's)")
    args = p.parse_args(argv)
    from era5etl.db import connect, database_url
    from era5etl.read.region_series import region_series
    from era5etl.read.region_weights import GRID, digest, weighed
    from era5etl.read.regions import resolve_region

    url, years = database_url(), _years(args.years)
    out: dict[str, Any] = {"box": list(BOX), "years": list(years), "table": args.table}
    with connect(url) as conn:
        have = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (args.table,)).fetchone()
    if args.reload or not (have and have[0]):
        path = decades_download(area=BOX, years=years, name="chile")
        out["load"] = run(path, args.table)
        log(f"bench: {args.table}: {out['load']['rows']:,} rows, {out['load']['rows_per_s_process']:,} rows/s")
    began = time.perf_counter()
    region = resolve_region("Chile")
    out["outline_ms"] = round((time.perf_counter() - began) * 1000, 1)
    with connect(url) as conn:
        # The weights PostGIS computes the first time (the stored rows dropped first), then reads back.
        conn.execute("DELETE FROM era5_regions WHERE grid = %s AND digest = %s", (GRID, digest(region.outline)))
        conn.commit()
        for key in ("weights_fill_ms", "weights_stored_ms"):
            began = time.perf_counter()
            stored = weighed(conn, region)
            out[key] = round((time.perf_counter() - began) * 1000, 1)
        for step in ("month", "day"):
            median, runs, s = timed(lambda step=step: region_series(conn, args.table, stored, None, None,
                                                                     ["temperature_2m_mean"], step), args.runs)
            out[step] = {"median_ms": round(median, 1), "runs_ms": [round(t, 1) for t in runs],
                         "steps": int(s.time.size), "points_read": int(s.points.max()),
                         "left_out": int(s.area.left_out)}
    if args.monthly_years:
        out["months_table"] = _months_table(args, stored, url)
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "era5etl", "series", "--region", "Chile", "--monthly", "--variables",
                           "temperature_2m_mean", "--table", args.table, "--json"], capture_output=True, text=True,
                          check=False)
    out["process_monthly_s"] = round(time.perf_counter() - began, 2)
    if done.returncode != 0:
        raise SystemExit(f"series --region failed: {done.stderr.strip()[-2000:]}")
    if args.json:
        print(json.dumps(out))
        return 0
    if "load" in out:
        load = out["load"]
        print(f"load {args.table}: {load['rows']:,} rows in {load['wall_s']} s ({load['rows_per_s_process']:,} rows/s)")
    print(f"Chile's outline: {out['outline_ms']} ms; its weights by PostGIS: {out['weights_fill_ms']} ms the first "
          f"time, {out['weights_stored_ms']} ms read back")
    for step in ("month", "day"):
        r, what = out[step], "monthly" if step == "month" else "daily"
        print(f"region Chile, {what}, {r['steps']:,} steps x {r['points_read']:,} points ({r['left_out']} outside "
              f"the box left out): median {r['median_ms']} ms of {args.runs} warm runs {r['runs_ms']}")
    if "months_table" in out:
        m = out["months_table"]
        print(f"region Chile, monthly, on {m['table']} ({m['years'][0]}-{m['years'][1]}, one hour a month, "
              f"{m['rollup_rows']:,} monthly rollup rows in {m['rollup_chunks']} chunks): {m['steps']:,} steps x "
              f"{m['points_read']:,} points: median {m['median_ms']} ms of {args.runs} warm runs {m['runs_ms']}")
    print(f"series --region Chile --monthly --json, the whole process: {out['process_monthly_s']} s")
    return 0


def _months_table(args: argparse.Namespace, region: Any, url: str) -> dict[str, Any]:
    """The monthly series over ``--monthly-years`` on ``<table>_months`` (one hour a month of the box,
    loaded in tiles if not there or ``--reload``), timed as the other reads."""
    import os

    from psycopg import sql

    from era5etl.db import connect
    from era5etl.read.region_series import region_series
    from localcds.synth import FIELDS_VERSION, hourly_request, write_download

    years, table = _years(args.monthly_years), f"{args.table}_months"
    with connect(url) as conn:
        have = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()
    out: dict[str, Any] = {"table": table, "years": list(years)}
    if args.reload or not (have and have[0]):
        path = CACHE_DIR / f"chile-months-{years[0]}-{years[1]}-v{FIELDS_VERSION}.nc"
        if not path.exists():
            request = {**hourly_request(BOX, years), "day": ["01"], "time": ["00:00"]}
            write_download(request, path, seed=0)
        layout = os.environ.get("ERA5_LAYOUT")
        os.environ["ERA5_LAYOUT"] = "tiles"  # the layout a place-at-scale table has (docs/table.md)
        try:
            out["load"] = run(path, table)
        finally:
            if layout is None:
                del os.environ["ERA5_LAYOUT"]
            else:
                os.environ["ERA5_LAYOUT"] = layout
    with connect(url) as conn:
        row = conn.execute(sql.SQL("SELECT count(*), (SELECT count(*) FROM show_chunks(%s)) FROM {}").format(
            sql.Identifier(f"{table}_monthly")), (f"{table}_monthly",)).fetchone()
        out["rollup_rows"], out["rollup_chunks"] = (int(row[0]), int(row[1])) if row else (0, 0)
        median, runs, s = timed(lambda: region_series(conn, table, region, None, None, ["temperature_2m_mean"],
                                                       "month"), args.runs)
    out.update(median_ms=round(median, 1), runs_ms=[round(t, 1) for t in runs], steps=int(s.time.size),
               points_read=int(s.points.max()))
    return out
