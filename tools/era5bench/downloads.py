"""The bench's input files: synthetic CDS downloads (``localcds.synth``), generated once and cached under
``.local/bench/``, keyed by request."""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from era5bench.common import log
from era5etl.core.paths import PROJECT_ROOT
from era5etl.core.variables import DEFAULT_VARIABLES

CACHE_DIR = PROJECT_ROOT / ".local" / "bench"


# A fixed "now" makes synth's output (history stamp, ZIP timestamps, expver) the same on every run,
# so the cache key, the request, says everything about a file.
SYNTH_NOW = datetime(2025, 1, 1, tzinfo=UTC)
FIRST_DAY = date(2020, 1, 1)
GLOBAL_POINTS = 721 * 1440
# The comparison region starts here (north-west corner) and grows south; Europe, as in the samples.
REGION_NORTH, REGION_WEST, REGION_MAX_WIDTH = 70.0, -10.0, 120


def day_request(days: Sequence[date], area: Sequence[float] | None = None) -> dict[str, Any]:
    """A CDS request for all six variables, every hour of ``days`` (one month), ``area`` N/W/S/E or global."""
    if len({(d.year, d.month) for d in days}) != 1:
        raise ValueError("the days of one request must be in one month")
    req: dict[str, Any] = {
        "product_type": ["reanalysis"],
        "variable": list(DEFAULT_VARIABLES),
        "year": [f"{days[0].year}"],
        "month": [f"{days[0].month:02d}"],
        "day": [f"{d.day:02d}" for d in days],
        "time": [f"{h:02d}:00" for h in range(24)],
        "data_format": "netcdf",
        "download_format": "unarchived",
        "grid": ["0.25", "0.25"],
    }
    if area is not None:
        req["area"] = [f"{a:g}" for a in area]
    return req


def cached_download(request: dict[str, Any], cache_dir: Path = CACHE_DIR, seed: int = 0,
                    dataset: str = "reanalysis-era5-single-levels") -> Path:
    """The synthetic download for ``request`` to ``dataset``, generated once and reused (keyed by request,
    seed, the synthetic fields' version and, for another dataset than single levels, the dataset)."""
    from localcds.synth import FIELDS_VERSION, parse_request, write_download

    keyed: dict[str, Any] = {"request": request, "seed": seed, "fields": FIELDS_VERSION}
    if dataset != "reanalysis-era5-single-levels":
        keyed["dataset"] = dataset
    key = hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()[:16]
    path = cache_dir / f"{key}.{parse_request(request, dataset).extension}"
    if path.exists():
        return path
    cache_dir.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    log(f"bench: generating {path.name} ({', '.join(request['day'])} {request['year']}-{request['month']}, "
        f"area {request.get('area', 'global')}) ...")
    # write_download replaces the file atomically, so a concurrent bench never reads half a file.
    write_download(request, path, seed=seed, now=SYNTH_NOW, dataset=dataset)
    (cache_dir / f"{key}.json").write_text(json.dumps(keyed, indent=1))
    log(f"bench: generated {path.name}: {path.stat().st_size / 2**20:,.0f} MiB in "
        f"{time.perf_counter() - began:.1f} s")
    return path


def region_area(rows: int, days: int) -> tuple[float, float, float, float]:
    """An N/W/S/E box on the 0.25 grid whose ``days`` x 24 hours hold about ``rows`` rows."""
    points = max(1, math.ceil(rows / (24 * days)))
    width = min(points, REGION_MAX_WIDTH)
    height = max(1, round(points / width))
    south = REGION_NORTH - (height - 1) * 0.25
    east = REGION_WEST + (width - 1) * 0.25
    return REGION_NORTH, REGION_WEST, south, east


def comparison_download(rows: int, days: int, cache_dir: Path = CACHE_DIR) -> Path:
    if not 1 <= days <= 28:
        raise ValueError(f"--days must be 1..28 (one month), not {days}")
    dates = [FIRST_DAY + timedelta(days=k) for k in range(days)]
    return cached_download(day_request(dates, region_area(rows, days)), cache_dir)
