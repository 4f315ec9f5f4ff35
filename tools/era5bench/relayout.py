"""``python -m era5bench relayout``: a table of the time layout moved into tiles by ``table relayout``,
killed mid-way and run again, on the 441 points of 50/5/45/10 over a span of years (default
2000-2024: 96,653,088 hourly rows), as docs/benchmarks.md reports it.

It loads the area's file with ``load-file`` and ``ERA5_LAYOUT=time`` into ``bench_relayout``, takes a
fingerprint of every row of the table and of both rollups (per relation: the row count and the sum of
a 64-bit hash of each row's values, tile left out), starts ``table relayout``, SIGKILLs it once
``--kill-after`` hourly chunks are in tiles, runs it again to the end, and compares the fingerprints.
It prints the rows moved a second and whether every row came through.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

from era5bench.common import log
from era5bench.loadfile import AREA_AREA, AREA_NOW, AREA_YEARS, decades_download, parse_years, run

TABLE = "bench_relayout"


def fingerprint(url: str, table: str) -> dict[str, tuple[int, int]]:
    """Per relation (the table and its rollups): (rows, sum of hashtextextended of each row's values)."""
    from era5etl.db import connect, rollup_tables

    out = {}
    with connect(url) as conn:
        for relation in (table, *rollup_tables(table).values()):
            columns = [r[0] for r in conn.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped"
                " AND attname <> 'tile' ORDER BY attnum", (relation,))]
            row = conn.execute(f"SELECT count(*), coalesce(sum(hashtextextended(ROW({', '.join(columns)})::text, 0)"
                               f"::numeric), 0) FROM {relation}").fetchone()
            assert row is not None
            out[relation] = (int(row[0]), int(row[1]))
    return out


def _moved(url: str) -> int:
    from era5etl.db import connect

    with connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM timescaledb_information.chunk_columnstore_settings"
                           " WHERE hypertable = %s::regclass AND segmentby = 'tile'", (TABLE,)).fetchone()
    return int(row[0]) if row else 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m era5bench relayout", description=__doc__.split("\n\n")[0])
    p.add_argument("--years", default=f"{AREA_YEARS[0]}-{AREA_YEARS[1]}", type=parse_years,
                   help="the span of years of the 441 points (default %(default)s)")
    p.add_argument("--kill-after", type=int, default=5, help="hourly chunks moved before the kill (default 5)")
    p.add_argument("--json", action="store_true", help="end with one JSON object")
    args = p.parse_args(argv)
    from era5etl.db import database_url

    url = database_url()
    path = decades_download(area=AREA_AREA, years=args.years, name="area", now=AREA_NOW)
    os.environ["ERA5_LAYOUT"] = "time"
    loaded = run(path, TABLE)
    os.environ.pop("ERA5_LAYOUT")
    log(f"bench: {TABLE}: {loaded['rows']:,} rows loaded in the time layout")
    before = fingerprint(url, TABLE)
    command = [sys.executable, "-m", "era5etl", "table", "relayout", TABLE, "--json"]
    began = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while _moved(url) < args.kill_after and proc.poll() is None:
        time.sleep(0.2)
    killed_at = _moved(url)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    first = time.perf_counter() - began
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    second = time.perf_counter() - began
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    after = fingerprint(url, TABLE)
    rows = sum(v[0] for v in before.values())
    out = {"table": TABLE, "years": list(args.years), "rows": rows, "killed_after_chunks": killed_at,
           "first_run_s": round(first, 1), "second_run_s": round(second, 1),
           "rows_per_s": round(rows / (first + second)), "moved": summary["moved"], "exact": before == after,
           "fingerprints": {k: list(v) for k, v in after.items()}}
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{TABLE}: {rows:,} rows (hourly and rollups) of {args.years[0]}-{args.years[1]} moved into tiles: "
              f"killed after {killed_at} chunks ({first:.1f} s), run again to the end ({second:.1f} s), "
              f"{out['rows_per_s']:,} rows/s; every row as before: {out['exact']}")
    return 0 if out["exact"] else 1
