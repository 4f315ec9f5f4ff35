"""The Great Expectations suite over a stored day profile (stage 2 of a validation).

GX (1.x, an ephemeral context) validates the day rows: month and per-day row counts, no NULL keys,
no duplicates, every location inside the area, every value inside physical bounds. GX reads the
stored profile (a row a day) once, as a pandas DataFrame: its expectations' metrics are then computed
in memory. Given the profile as a SQL query instead, GX sent about a hundred metric queries a month
through SQLAlchemy, 0.4 s of a validate task's wall time on a busy machine (docs/benchmarks.md).
"""

# Imports inside functions: Great Expectations and pandas (~2 s to import) load only when a month is
# validated.

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from psycopg import sql

from era5etl.core.grid import Area, Grid, area_slug
from era5etl.core.months import Month
from era5etl.db import connect
from era5etl.validate.bounds import BOUNDS, Bounds

# Before GX is imported: no analytics calls to the outside, no progress bars in task logs.
os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")

HOURS_PER_DAY = 24


@dataclass(frozen=True)
class Check:
    """One expectation and the name a failure of it is reported under."""

    name: str
    per_day: bool  # a failure names each day (row_count_day:YYYY-MM-DD)
    expectation: Any


def build_checks(month: Month, area: Area, grid: Grid, bounds: tuple[Bounds, ...] = BOUNDS,
                 levels: int = 0, points: int | None = None, times: int | None = None) -> list[Check]:
    """The suite's checks; ``levels``: how many pressure levels each hour and point has (0: none);
    ``points``: the area's rows an hour when not every grid point is one (ERA5-Land's land points, as
    the staged download's mask counted them); ``times``: a monthly-means month's row times a point (1,
    or 24 by hour of day), all on its first day: the month's count is checked, and no day's."""
    from great_expectations.expectations import (  # type: ignore[attr-defined]
        ExpectColumnSumToBeBetween,
        ExpectColumnValuesToBeBetween,
    )

    per = max(1, levels)
    kind = "grid points" if points is None else "land points (the staged download's land mask)"
    points = area.points(grid) if points is None else points
    month_rows, day_rows = (month.hours if times is None else times) * points * per, HOURS_PER_DAY * points * per
    of = f" x {levels} levels" if levels else ""
    held = f"{month.hours} hours" if times is None else f"{times} monthly mean time(s)"

    def zero(column: str, name: str, notes: str) -> Check:
        return Check(name, False, ExpectColumnValuesToBeBetween(
            column=column, min_value=0, max_value=0, meta={"check": name}, notes=notes))

    checks = [
        Check("row_count_month", False, ExpectColumnSumToBeBetween(
            column="rows", min_value=month_rows, max_value=month_rows, meta={"check": "row_count_month"},
            notes=f"The month holds exactly {held}{of} x {points} {kind} = {month_rows:,} rows.")),
        *([] if times is not None else [Check("row_count_day", True, ExpectColumnValuesToBeBetween(
            column="rows", min_value=day_rows, max_value=day_rows, meta={"check": "row_count_day"},
            notes=f"Each day holds exactly 24 hours{of} x {points} {kind} = {day_rows:,} rows."))]),
        zero("null_time", "time_not_null", "No row has a NULL time."),
        zero("null_location_id", "location_id_not_null", "No row of the area has a NULL location_id."),
        zero("duplicates", "no_duplicates",
             f"No (time, location_id{', level' if levels else ''}) appears twice."),
        zero("outside_area", "inside_area",
             f"Every location_id is a grid point of the area {area} on grid {grid} and the id of the row's own "
             "latitude/longitude."),
    ]
    for b in bounds:
        name = f"{b.column}_bounds"
        span = f"between {b.low:g} and {b.high:g}" if b.high is not None else f"at least {b.low:g}"
        for part in ("min", "max"):
            checks.append(Check(name, False, ExpectColumnValuesToBeBetween(
                column=f"{b.column}_{part}", min_value=b.low, max_value=b.high, meta={"check": name},
                notes=f"Every finite {b.column} value is {span} (daily {part} shown).")))
        checks.append(zero(f"{b.column}_nonfinite", name,
                           f"No {b.column} value is NaN or infinite (missing source values are NULL)."))
    return checks


def _day_of(entry: Any) -> str | None:
    if isinstance(entry, dict) and entry.get("day") is not None:
        return str(entry["day"])[:10]
    return None


def failures_of(checks: list[Check], results: list[Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """Failed check names in suite order (per-day checks once per day), and each one's details."""
    per_day = {c.name for c in checks if c.per_day}
    order = list(dict.fromkeys(c.name for c in checks))
    details: dict[str, dict[str, Any]] = {}
    for res in results:
        if res.success:
            continue
        config = res.expectation_config
        name = str(config.meta.get("check")) if config is not None and config.meta else "unknown"
        outcome = res.result or {}
        detail = details.setdefault(name, {"name": name, "days": [], "observed": []})
        days = {d for d in map(_day_of, outcome.get("unexpected_index_list") or []) if d}
        detail["days"] = sorted(set(detail["days"]) | days)
        detail["observed"].append({
            "column": config.kwargs.get("column") if config is not None else None,
            "value": outcome.get("observed_value", outcome.get("partial_unexpected_list")),
        })
    ordered = sorted(details.values(), key=lambda d: order.index(d["name"]) if d["name"] in order else len(order))
    names: list[str] = []
    for d in ordered:
        if d["name"] in per_day:
            names.extend(f"{d['name']}:{day}" for day in d["days"] or ["unknown-day"])
        else:
            names.append(d["name"])
    return names, ordered


def _profile_query(bounds: tuple[Bounds, ...] = BOUNDS) -> sql.Composed:
    """The stored profile of %(validation_id)s, a row a day, in the columns the checks name."""
    return sql.SQL(
        "SELECT day, rows, duplicates, null_time, null_location_id, outside_area, {values}"
        " FROM era5_validation_days WHERE validation_id = %(validation_id)s ORDER BY day"
    ).format(values=sql.SQL(", ").join(
        sql.Identifier(f"{b.column}_{part}") for b in bounds for part in ("min", "max", "nonfinite")))


def _profile_frame(url: str, validation_id: str, bounds: tuple[Bounds, ...] = BOUNDS) -> Any:
    """The stored profile as the DataFrame GX validates (integers stay int64: a numeric ``rows`` made
    GX's sum a Decimal, which it converts by calling inspect.stack(), 0.3 s a month)."""
    import pandas as pd

    with connect(url) as conn, conn.cursor() as cur:
        cur.execute(_profile_query(bounds), {"validation_id": validation_id})
        return pd.DataFrame(cur.fetchall(), columns=[d.name for d in cur.description or ()])


@dataclass
class SuiteRun:
    result: dict[str, Any]
    success: bool
    failed: list[str]
    failures: list[dict[str, Any]]
    docs_path: Path | None


def _view(name: str) -> dict[str, str]:
    return {"module_name": "era5etl.validate.docs_views", "class_name": name}


def run_suite(url: str, validation_id: str, table: str, month: Month, area: Area, grid: Grid, *,
              run_name: str, docs_dir: Path, bounds: tuple[Bounds, ...] = BOUNDS, levels: int = 0,
              points: int | None = None, times: int | None = None) -> SuiteRun:
    """Validate the stored profile with GX; Data Docs are built into ``docs_dir`` (a fresh folder)."""
    import great_expectations as gx
    from great_expectations.checkpoint.actions import UpdateDataDocsAction
    from great_expectations.core.run_identifier import RunIdentifier
    from great_expectations.data_context.types.base import ProgressBarsConfig

    # That module pins its own logger to INFO and announces a temp folder on every context: noise in task logs.
    logging.getLogger("great_expectations.data_context.types.base").setLevel(logging.WARNING)
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    context.add_data_docs_site("era5", {
        "class_name": "SiteBuilder",
        "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(docs_dir)},
        # GX's own pages, through views that keep Jinja's compiled templates (validate.docs_views).
        "site_index_builder": {"class_name": "DefaultSiteIndexBuilder", "view": _view("CachedIndexPageView")},
        # SiteBuilder takes this key (its docstring's example); GX's TypedDict of a site does not list it.
        "site_section_builders": {  # type: ignore[typeddict-unknown-key]
            section: {"view": _view("CachedPageView")} for section in ("expectations", "validations", "profiling")},
    })
    asset = context.data_sources.add_pandas("era5").add_dataframe_asset(f"{table}_{month}_{area_slug(area)}")
    batch = asset.add_batch_definition_whole_dataframe("days")
    checks = build_checks(month, area, grid, bounds, levels, points, times)
    # Given whole, the suite is stored once; suite.add_expectation stores it again for each of the
    # ~24 checks (a marshmallow round trip each: 0.3 s a month).
    suite = context.suites.add(gx.ExpectationSuite(name="era5_month", expectations=[c.expectation for c in checks]))
    definition = context.validation_definitions.add(
        gx.ValidationDefinition(name=f"{table} {month} {area} grid {grid}", data=batch, suite=suite))
    checkpoint = context.checkpoints.add(gx.Checkpoint(
        name="era5_month", validation_definitions=[definition],
        actions=[UpdateDataDocsAction(name="data_docs", site_names=["era5"])],
        # COMPLETE on a month's 28-31 profile rows is cheap, and names every failing day (GX lists
        # at most partial_unexpected_count of them, 20 by default).
        result_format={"result_format": "COMPLETE", "unexpected_index_column_names": ["day"],
                       "partial_unexpected_count": 31},
    ))
    outcome = checkpoint.run(batch_parameters={"dataframe": _profile_frame(url, validation_id, bounds)},
                             run_id=RunIdentifier(run_name=run_name, run_time=datetime.now(UTC)))
    result = next(iter(outcome.run_results.values()))
    failed, failures = failures_of(checks, list(result.results))
    index = docs_dir / "index.html"
    return SuiteRun(
        result=result.to_json_dict(),  # type: ignore[no-untyped-call]
        success=bool(result.success), failed=failed, failures=failures,
        docs_path=index if index.exists() else None,
    )
