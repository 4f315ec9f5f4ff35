"""Validate one month: profile it, run the suite on the profile, keep the result and Data Docs.

Two stages, so the cost is one pass over the month whatever the suite holds:

1. Profile, pushed down per chunk (``profile``): one row of aggregates per UTC day, computed by the
   database in one snapshot and stored in ``era5_validation_days``.
2. Suite (``suite``): Great Expectations validates those day rows, and the result (JSON) and Data
   Docs (HTML) are written next to each other under ``$ERA5_VALIDATION_DIR/<table>/<YYYY-MM>/<area>/``.
"""

from __future__ import annotations

import logging
import shutil
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from era5etl import settings
from era5etl.core.datasets import SINGLE_LEVELS, Dataset
from era5etl.core.errors import InputError
from era5etl.core.files import write_json
from era5etl.core.grid import Area, Grid, area_slug
from era5etl.core.months import Month
from era5etl.db import connect
from era5etl.db.columns import table_columns
from era5etl.track import ledger, metrics
from era5etl.validate.bounds import differenced, table_bounds
from era5etl.validate.profile import profile_month, store_profile
from era5etl.validate.suite import run_suite

log = logging.getLogger(__name__)
# As it is imported, Great Expectations logs "Skipping registering function ..." at INFO for each of
# ~200 functions of its public-API registry: 214 of a validate task log's 232 lines. Not the month's news.
logging.getLogger("great_expectations._docs_decorators").setLevel(logging.WARNING)


def validation_dir() -> Path:
    """Where results and Data Docs are kept: ERA5_VALIDATION_DIR, default ``<project>/.local/validation``."""
    return settings.load().validation_dir


def result_folder(base: Path, table: str, month: Month, area: Area) -> Path:
    return base / table / str(month) / area_slug(area)


@dataclass
class Validation:
    success: bool
    expected_rows: int
    observed_rows: int | None
    failed: list[str]
    seconds: float
    result: dict[str, Any] = field(repr=False)
    # Each failed check with the days it failed on and what was seen, for people and the UI.
    failures: list[dict[str, Any]] = field(default_factory=list)
    result_path: Path | None = None
    docs_path: Path | None = None
    validation_id: str = ""
    bytes: int = 0
    profile_seconds: float = 0.0
    suite_seconds: float = 0.0

    @property
    def folder(self) -> Path | None:
        return self.result_path.parent if self.result_path is not None else None

    def summary(self) -> dict[str, Any]:
        """What the CLI prints and the metrics detail keeps: the verdict without the GX document."""
        return {
            "success": self.success, "failed": self.failed, "failures": self.failures,
            "expected_rows": self.expected_rows, "observed_rows": self.observed_rows,
            "result_path": str(self.result_path) if self.result_path else None,
            "docs_path": str(self.docs_path) if self.docs_path else None,
            "validation_id": self.validation_id, "bytes": self.bytes, "seconds": round(self.seconds, 3),
            "profile_seconds": round(self.profile_seconds, 3), "suite_seconds": round(self.suite_seconds, 3),
        }


def _replace_dir(new: Path, final: Path) -> None:
    """Put ``new`` where ``final`` is, so a reader sees the old docs or the new, never half of each."""
    old = final.with_name(f".{final.name}-old-{uuid.uuid4().hex[:8]}")
    if final.exists():
        final.rename(old)
    new.rename(final)
    shutil.rmtree(old, ignore_errors=True)


def validate_month(
    url: str, table: str, month: Month, area: Area, grid: Grid, *,
    run_id: str | None = None, out_dir: Path | None = None, progress_every_s: float = 5.0,
    dataset: Dataset | None = None, levels: tuple[int, ...] = (), points: int | None = None,
) -> Validation:
    """Profile the month in the database, run the suite on the profile, keep result and Data Docs.

    ``dataset`` (single levels by default): whose month it is (its lattice numbers the points);
    ``levels``: the pressure levels the month was loaded on (each hour holds every point on every
    level). A land-only dataset (ERA5-Land) expects hours x its land points: ``points`` if given, else
    those the ledger kept when the month was staged (``ledger.record_land_points``); without either it
    is an error, never a guess from what the table holds (a month that lost land points must fail).
    """
    began = time.perf_counter()
    dataset = dataset or SINGLE_LEVELS
    if dataset.land_only and points is None:
        points = ledger.land_points(url, table=table, month=month, area=str(area))
        if points is None:
            raise InputError(f"{table} {month} {area}: no land point count was recorded when the month was "
                             f"staged; {dataset.title} rows are its land points only, so the month's expected "
                             "rows are unknown; stage it again")
    times = dataset.times_in(month)  # row times a point: hours, or a monthly mean's one (24 by hour of day)
    expected = times * (area.points(grid) if points is None else points) * max(1, len(levels))
    with connect(url) as conn:  # the six's bounds, and those of each catalogued column a load added
        bounds = table_bounds(table_columns(conn, table), dataset.catalogue if dataset.has_levels else None)
    if dataset.accumulation == "since_00utc":
        bounds = differenced(bounds, (v.column for v in dataset.catalogue if v.step_type == "accum"))
    validation_id = str(uuid.uuid4())
    run_name = run_id or f"validate__{datetime.now(UTC):%Y%m%dT%H%M%S}"
    tags = {"table": table, "month": str(month), "area": str(area)}
    with metrics.progress_reporter(expected, f"validate {table} {month} {area}", progress_every_s,
                                   task="validate", tags=tags) as progress:
        days, nbytes = profile_month(url, table, month, area, grid, progress=progress, bounds=bounds,
                                     dataset=dataset, levels=bool(levels))
    profile_seconds = time.perf_counter() - began
    store_profile(url, validation_id, table, month, area, grid, days)

    folder = result_folder(out_dir or validation_dir(), table, month, area)
    folder.mkdir(parents=True, exist_ok=True)
    staging = folder / f".docs-{validation_id}"
    t_suite = time.perf_counter()
    try:
        suite = run_suite(url, validation_id, table, month, area, grid, run_name=run_name, docs_dir=staging,
                          bounds=bounds, levels=len(levels), points=points,
                          times=None if not dataset.monthly else times)
        _replace_dir(staging, folder / "docs")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    suite_seconds = time.perf_counter() - t_suite

    validation = Validation(
        success=suite.success, expected_rows=expected, observed_rows=sum(d.rows for d in days),
        failed=suite.failed, seconds=time.perf_counter() - began, result=suite.result,
        failures=suite.failures, result_path=folder / "result.json",
        docs_path=folder / "docs" / "index.html" if suite.docs_path else None,
        validation_id=validation_id, bytes=nbytes, profile_seconds=profile_seconds, suite_seconds=suite_seconds,
    )
    write_json(folder / "result.json", validation.result)
    write_json(folder / "summary.json", {"table": table, "month": str(month), "area": str(area),
                                          "grid": str(grid), "run_id": run_name, **validation.summary(),
                                          "days": [d.columns() for d in days]})
    log.info("%s %s %s: validation %s in %.2f s (profile %.2f s, suite %.2f s)%s; result %s", table, month, area,
             "passed" if validation.success else "FAILED", validation.seconds, profile_seconds, suite_seconds,
             f": {', '.join(validation.failed)}" if validation.failed else "", folder)
    return validation

