"""``python -m era5bench load-file``: the product's own ``load-file`` on the two shapes that decide its
design, timed as a user would run it, one process each: a global day (24,917,760 rows of the six
variables) and a few points over decades (4 points, every hour of 1940-2024: 2,980,608 rows); and,
asked for by name, an area over years (``--shapes area``: the 441 points of 50/5/45/10, every hour
of 2000-2024, 2 m temperature and precipitation: 96,653,088 rows; ``--years 1940-2024`` for the whole
record, 328,601,448 rows), the table ``reads`` times an area's series on.

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
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from era5bench.common import log
from era5bench.downloads import CACHE_DIR, SYNTH_NOW, cached_download, day_request

DECADES_AREA = (50.0, 5.0, 49.75, 5.25)  # 4 grid points
DECADES_YEARS = (1940, 2024)
AREA_AREA = (50.0, 5.0, 45.0, 10.0)  # 21 x 21 = 441 grid points: reads' default area
AREA_YEARS = (2000, 2024)
# The area's file is published to the end of 2024 (SYNTH_NOW, 2025-01-01, holds back its last days).
AREA_NOW = datetime(2025, 2, 1, tzinfo=UTC)
# pl: 37 levels; land: ERA5-Land; monthly-global: a global month of ERA5's monthly means (a row a point)
SHAPES = ("global-day", "decades", "area", "pl-global-hour", "land-global-day", "monthly-global")


def decades_download(cache_dir: Path = CACHE_DIR, *, area: tuple[float, ...] = DECADES_AREA,
                     years: tuple[int, int] = DECADES_YEARS, name: str = "decades", now: datetime = SYNTH_NOW) -> Path:
    """The 4-point file of every hour of 1940-2024, 2 m temperature and precipitation (synthetic); or
    of another area and span of years (the ``area`` shape's 441 points over 2000-2024)."""
    from localcds.synth import FIELDS_VERSION, hourly_request, write_download

    path = cache_dir / f"{name}-{years[0]}-{years[1]}-v{FIELDS_VERSION}.nc"
    if path.exists():
        return path
    cache_dir.mkdir(parents=True, exist_ok=True)
    request = hourly_request(area, years)
    began = time.perf_counter()
    log(f"bench: generating {path.name} ...")
    write_download(request, path, seed=0, now=now)
    log(f"bench: generated {path.name}: {path.stat().st_size / 2**20:,.0f} MiB in {time.perf_counter() - began:.1f} s")
    return path


def land_day_request(day: date) -> dict[str, Any]:
    """A global ERA5-Land day (0.1 degree, no product type) of ERA5-Land's default variables."""
    from era5etl.core.datasets import LAND

    return {"variable": list(LAND.default_variables), "year": [f"{day.year}"], "month": [f"{day.month:02d}"],
            "day": [f"{day.day:02d}"], "time": [f"{h:02d}:00" for h in range(24)], "data_format": "netcdf",
            "download_format": "unarchived"}


def pl_hour_download(cache_dir: Path = CACHE_DIR) -> Path:
    """One global hour on all 37 pressure levels of the pressure-level table's six variables (synthetic,
    new-CDS NetCDF): 38,414,880 rows."""
    from era5etl.core.datasets import PRESSURE_LEVELS
    from localcds.synth import FIELDS_VERSION, PL_DATASET, write_download

    path = cache_dir / f"pl-global-hour-37-levels-v{FIELDS_VERSION}.nc"
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


def monthly_means_download(cache_dir: Path = CACHE_DIR) -> Path:
    """A global month (January 2020) of ERA5's monthly means, the single-level table's six variables, as
    the local CDS writes it (new-CDS NetCDF): 1,038,240 rows. Each value is the mean of the synthetic
    month's 744 hours (t2m, msl, u10, v10 in closed form), so the file takes a few minutes to make the first time."""
    from era5etl.core.datasets import by_name
    from localcds.synth import FIELDS_VERSION, write_download

    path = cache_dir / f"monthly-means-global-2020-01-v{FIELDS_VERSION}.nc"
    if path.exists():
        return path
    cache_dir.mkdir(parents=True, exist_ok=True)
    dataset = by_name("monthly-means")
    request = {"product_type": ["monthly_averaged_reanalysis"], "variable": list(dataset.default_variables),
               "year": ["2020"], "month": ["01"], "time": ["00:00"], "data_format": "netcdf",
               "download_format": "unarchived"}
    began = time.perf_counter()
    log(f"bench: generating {path.name} ...")
    write_download(request, path, seed=0, now=SYNTH_NOW, dataset=dataset.collection)
    log(f"bench: generated {path.name}: {path.stat().st_size / 2**20:,.0f} MiB in {time.perf_counter() - began:.1f} s")
    return path


def run(path: Path, table: str, with_rollups: bool = True, dataset: str | None = None) -> dict[str, Any]:
    """``python -m era5etl load-file PATH --table TABLE --json`` in a process of its own, timed
    (``with_rollups``: ERA5_ROLLUPS for that process; ``dataset``: its --dataset, e.g. land)."""
    from era5etl.db import connect, database_url, drop_table

    url = database_url()
    with connect(url, autocommit=True) as conn:
        drop_table(conn, table)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        began = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "era5etl", "load-file", str(path), "--table", table,
                                  "--json", *(["--dataset", dataset] if dataset else [])],
                                 stdout=out, stderr=err, text=True,
                                 env={**os.environ, "ERA5_ROLLUPS": "true" if with_rollups else "false"})
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


def parse_years(text: str) -> tuple[int, int]:
    try:
        first, last = (int(v) for v in text.split("-"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected FIRST-LAST years, e.g. 1940-2024, got {text!r}") from None
    if not 1940 <= first <= last <= AREA_NOW.year - 1:
        raise argparse.ArgumentTypeError(f"years must lie in 1940-{AREA_NOW.year - 1}, first before last: {text!r}")
    return first, last


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m era5bench load-file",
                                description="load-file on a global day and on 4 points over 1940-2024, timed")
    p.add_argument("--shapes", default="global-day,decades",
                   help=f"comma-separated: {', '.join(SHAPES)} (default global-day,decades)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--compare", action="store_true",
                   help="also load each shape with ERA5_ROLLUPS=false, alternating, and print what the rollups "
                        "cost in wall time (the difference of the medians)")
    p.add_argument("--repeat", type=int, default=1, help="runs of each (with --compare: of each pair)")
    p.add_argument("--years", default=f"{AREA_YEARS[0]}-{AREA_YEARS[1]}", type=parse_years,
                   help="the area shape's span of years, FIRST-LAST (default %(default)s; 1940-2024 makes the "
                        "441-point table of the whole record: 328,601,448 rows)")
    args = p.parse_args(argv)
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    bad = [s for s in shapes if s not in SHAPES]
    if bad:
        p.error(f"unknown shape(s) {', '.join(bad)}")
    out: dict[str, Any] = {}
    for shape in shapes:
        dataset = "land" if shape == "land-global-day" else None
        if shape == "global-day":
            path = cached_download(day_request([date(2020, 1, 1)]))
        elif shape == "land-global-day":
            path = cached_download(land_day_request(date(2020, 1, 1)), dataset="reanalysis-era5-land")
        elif shape == "pl-global-hour":
            path = pl_hour_download()
        elif shape == "monthly-global":
            path = monthly_means_download()
        elif shape == "area":
            path = decades_download(area=AREA_AREA, years=args.years, name="area", now=AREA_NOW)
        else:
            path = decades_download()
        table = f"bench_{shape.replace('-', '_')}"
        runs, bare = [], []
        for _ in range(max(1, args.repeat)):
            runs.append(run(path, table, dataset=dataset))
            if args.compare:
                bare.append(run(path, table, with_rollups=False, dataset=dataset))
        out[shape] = sorted(runs, key=lambda r: r["wall_s"])[len(runs) // 2]
        if args.compare:
            with_s = sorted(r["load_s"] for r in runs)[len(runs) // 2]
            without_s = sorted(r["load_s"] for r in bare)[len(bare) // 2]
            out[shape]["without_rollups"] = {"load_s": [r["load_s"] for r in bare],
                                             "wall_s": [r["wall_s"] for r in bare]}
            out[shape]["with_rollups_load_s"] = [r["load_s"] for r in runs]
            out[shape]["rollup_wall_cost_s"] = round(with_s - without_s, 2)
            out[shape]["rollup_wall_share"] = round((with_s - without_s) / max(without_s, 1e-9), 3)
        if not args.json:
            r = out[shape]
            print(f"{shape}: {r['rows']:,} rows in {r['wall_s']:.1f} s, {r['rows_per_s_process']:,} rows/s for the "
                  f"process (load {r['load_s']:.1f} s; rollups {r['rollup_s']}, {r['rollup_share_of_load']:.1%} of "
                  f"the load; finish {r['finish_s']} s); hourly {r['hourly_bytes'] / 1e6:,.1f} MB, rollups "
                  f"{(r['rollup_bytes'] or 0) / 1e6:,.1f} MB ({r['rollup_bytes_share']:.1%}); peak RSS "
                  f"{r['peak_rss_mb']} MB")
            if args.compare:
                print(f"  load step with rollups {r['with_rollups_load_s']} s, "
                      f"without {r['without_rollups']['load_s']} s: "
                      f"the rollups cost {r['rollup_wall_cost_s']} s ({r['rollup_wall_share']:.1%} of the load "
                      f"without them), medians of {len(r['with_rollups_load_s'])}")
    if args.json:
        print(json.dumps(out))
    return 0
