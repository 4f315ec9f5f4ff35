"""``python -m era5bench load-file``: the product's own ``load-file`` on the two shapes that decide its
design, timed as a user would run it, one process each: a global day (24,917,760 rows of the six
variables) and a few points over decades (4 points, every hour of 1940-2024: 2,980,608 rows).

For each it prints the whole process's wall time and rows/s, peak RSS (the child's ``ru_maxrss``),
the load, the rollups' share (aggregation in the client, the daily rows' COPY, the monthly rows) and
the finishing, the bytes of the hourly rows and of both rollups, and a read of one place over all
years (``reads``' binary COPY of the daily rollup and of the hourly rows).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from era5bench.common import log
from era5bench.downloads import CACHE_DIR, SYNTH_NOW, cached_download, day_request

DECADES_AREA = (50.0, 5.0, 49.75, 5.25)  # 4 grid points
DECADES_YEARS = (1940, 2024)


def decades_download(cache_dir: Path = CACHE_DIR) -> Path:
    """The 4-point file of every hour of 1940-2024, 2 m temperature and precipitation (synthetic)."""
    from localcds.synth import write_download

    path = cache_dir / f"decades-{DECADES_YEARS[0]}-{DECADES_YEARS[1]}.nc"
    if path.exists():
        return path
    cache_dir.mkdir(parents=True, exist_ok=True)
    request = {
        "product_type": ["reanalysis"], "variable": ["2m_temperature", "total_precipitation"],
        "year": [str(y) for y in range(DECADES_YEARS[0], DECADES_YEARS[1] + 1)],
        "month": [f"{m:02d}" for m in range(1, 13)], "day": [f"{d:02d}" for d in range(1, 32)],
        "time": [f"{h:02d}:00" for h in range(24)], "data_format": "netcdf", "download_format": "unarchived",
        "area": [f"{a:g}" for a in DECADES_AREA],
    }
    began = time.perf_counter()
    log(f"bench: generating {path.name} ...")
    write_download(request, path, seed=0, now=SYNTH_NOW)
    log(f"bench: generated {path.name}: {path.stat().st_size / 2**20:,.0f} MiB in {time.perf_counter() - began:.1f} s")
    return path


def pl_hour_download(cache_dir: Path = CACHE_DIR) -> Path:
    """One global hour on all 37 pressure levels of the pressure-level table's six variables (synthetic,
    new-CDS NetCDF): 38,414,880 rows."""
    from era5etl.core.datasets import PRESSURE_LEVELS
    from localcds.synth import PL_DATASET, write_download

    path = cache_dir / "pl-global-hour-37-levels.nc"
    if path.exists():
        return path
    cache_dir.mkdir(parents=True, exist_ok=True)
    request = {
        "product_type": ["reanalysis"], "variable": list(PRESSURE_LEVELS.default_variables),
        "pressure_level": [str(level) for level in PRESSURE_LEVELS.levels],
        "year": ["2020"], "month": ["01"], "day": ["01"], "time": ["12:00"], "data_format": "netcdf",
        "download_format": "unarchived",
    }
    began = time.perf_counter()
    log(f"bench: generating {path.name} ...")
    write_download(request, path, seed=0, now=SYNTH_NOW, dataset=PL_DATASET)
    log(f"bench: generated {path.name}: {path.stat().st_size / 2**20:,.0f} MiB in {time.perf_counter() - began:.1f} s")
    return path


def run(path: Path, table: str) -> dict[str, Any]:
    """``python -m era5etl load-file PATH --table TABLE --json`` in a process of its own, timed."""
    from era5etl.db import connect, database_url, drop_table

    url = database_url()
    with connect(url, autocommit=True) as conn:
        drop_table(conn, table)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        began = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "era5etl", "load-file", str(path), "--table", table,
                                  "--json"], stdout=out, stderr=err, text=True)
        # wait4: this child's own resource usage (its peak RSS), not the largest of all children's.
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - began
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if child.returncode != 0:
            raise SystemExit(f"load-file failed ({child.returncode}): {err.read().strip()[-2000:]}")
        summary = json.loads(out.read().strip().splitlines()[-1])
    rollups = summary.get("rollups") or {}
    seconds = rollups.get("seconds", {})
    return {
        "file": path.name, "file_mb": round(path.stat().st_size / 1e6, 1), "rows": summary["rows"],
        "wall_s": round(wall, 2), "rows_per_s_process": round(summary["rows"] / wall),
        "load_s": summary["seconds"], "rollup_s": seconds, "rollup_share_of_load": round(
            (seconds.get("daily_write", 0) + seconds.get("monthly", 0) + seconds.get("aggregate", 0))
            / max(summary["seconds"], 1e-9), 3),
        "finish_s": summary.get("finish_seconds"), "hourly_bytes": summary["bytes"],
        "rollup_bytes": rollups.get("bytes"), "rollup_bytes_share": round(rollups.get("bytes", 0)
                                                                          / max(summary["bytes"], 1), 3),
        "daily_rows": rollups.get("daily_rows"), "monthly_rows": rollups.get("monthly_rows"),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m era5bench load-file",
                                description="load-file on a global day and on 4 points over 1940-2024, timed")
    p.add_argument("--shapes", default="global-day,decades",
                   help="comma-separated: global-day, decades, pl-global-hour (37 pressure levels)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    bad = [s for s in shapes if s not in ("global-day", "decades", "pl-global-hour")]
    if bad:
        p.error(f"unknown shape(s) {', '.join(bad)}")
    out: dict[str, Any] = {}
    for shape in shapes:
        path = (cached_download(day_request([date(2020, 1, 1)])) if shape == "global-day"
                else pl_hour_download() if shape == "pl-global-hour" else decades_download())
        out[shape] = run(path, f"bench_{shape.replace('-', '_')}")
        if not args.json:
            r = out[shape]
            print(f"{shape}: {r['rows']:,} rows in {r['wall_s']:.1f} s, {r['rows_per_s_process']:,} rows/s for the "
                  f"process (load {r['load_s']:.1f} s; rollups {r['rollup_s']}, {r['rollup_share_of_load']:.1%} of "
                  f"the load; finish {r['finish_s']} s); hourly {r['hourly_bytes'] / 1e6:,.1f} MB, rollups "
                  f"{(r['rollup_bytes'] or 0) / 1e6:,.1f} MB ({r['rollup_bytes_share']:.1%}); peak RSS "
                  f"{r['peak_rss_mb']} MB")
    if args.json:
        print(json.dumps(out))
    return 0
