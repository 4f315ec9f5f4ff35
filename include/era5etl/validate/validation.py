"""Prove a loaded month with a Great Expectations suite whose every figure the database computed.

Two stages, so the cost is one pass over the month whatever the suite holds:

1. Profile, pushed down per chunk. For each chunk of the month (a day at the default chunk
   interval) two aggregate queries run over its rows of the area, grouped by UTC day: counts,
   NULLs, rows off the area's lattice, per-variable min/max and non-finite counts, and duplicate
   (time, location_id) keys. They run in one read-only REPEATABLE READ snapshot, so the month is
   judged as of one instant even if a loader is busy elsewhere, and they return one row per day:
   no weather row ever reaches Python. The day rows are stored in ``era5_validation_days``.
2. Suite. Great Expectations (1.x, an ephemeral context) validates those day rows: month and
   per-day row counts, no NULL keys, no duplicates, every location inside the area, every value
   inside physical bounds. GX only ever reads the tiny profile, so each expectation's own queries
   cost nothing, and the result (JSON) and Data Docs (HTML) are written next to each other under
   ``$ERA5_VALIDATION_DIR/<table>/<YYYY-MM>/<area>/``.

Which rows are "the month of the area": rows of the month whose coordinates lie in the area's box,
or whose location_id is one of the area's ids. A row is outside the area when its location_id is
not a grid point of the area, or not the id of the row's own coordinates; a row at a point
outside the box that also carries that point's id is another area's row (the table may hold
several areas) and is not this month's business, just as the loader's replace predicate ignores it.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from era5etl.core.errors import InputError
from era5etl.core.files import write_json
from era5etl.core.grid import GLOBAL_LON_COUNT, GLOBAL_STEP, Area, Grid, area_slug, expected_rows
from era5etl.core.months import Month
from era5etl.db import PROJECT_ROOT, connect, table_ident
from era5etl.track import metrics

# Before GX is imported: no analytics calls to the outside, no progress bars in task logs.
os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")

log = logging.getLogger(__name__)

HOURS_PER_DAY = 24


@dataclass(frozen=True)
class Bounds:
    column: str
    low: float
    high: float | None  # None: no upper bound


# Physical bounds, in the table's units (degC, m/s, fraction, mm). NULL is allowed: the loader writes
# NULL where the source had no value (its NaN), so a NaN or infinity in the table is always a defect.
# ERA5 is stored as GRIB with 16-bit packing, which rounds each value to a step of up to 1/65535 of
# the field's range, so a bounded field can read up to half a step past its bound (cloud cover 1.00002).
PACKING_TOLERANCE = 1e-4
BOUNDS: tuple[Bounds, ...] = (
    Bounds("temperature_2m", -95.0, 65.0),
    Bounds("zonal_wind_10m", -120.0, 120.0),
    Bounds("meridional_wind_10m", -120.0, 120.0),
    Bounds("total_cloud_cover", 0.0, 1.0 + PACKING_TOLERANCE),
    Bounds("total_precipitation", 0.0, None),
    Bounds("snowfall", 0.0, None),
)


def validation_dir() -> Path:
    """Where results and Data Docs are kept: ERA5_VALIDATION_DIR, default ``<project>/.local/validation``."""
    return Path(os.environ.get("ERA5_VALIDATION_DIR", str(PROJECT_ROOT / ".local" / "validation")))


def result_folder(base: Path, table: str, month: Month, area: Area) -> Path:
    return base / table / str(month) / area_slug(area)


# --- the area's lattice, as SQL ------------------------------------------------------------------


@dataclass(frozen=True)
class Lattice:
    """The area's grid points as global 0.25 degree indexes: rows lat0..lat1, columns lon0..lon1, every ``every``."""

    lat0: int
    lat1: int
    lon0: int
    lon1: int
    every: int

    @classmethod
    def of(cls, area: Area, grid: Grid) -> Lattice | None:
        lats, lons = area.latitudes(grid), area.longitudes(grid)
        if not lats or not lons:
            return None
        lat_idx = [round((v + 90.0) / GLOBAL_STEP) for v in lats]
        lon_idx = [round((v + 179.75) / GLOBAL_STEP) for v in lons]
        return cls(min(lat_idx), max(lat_idx), min(lon_idx), max(lon_idx), int(grid.step / Decimal("0.25")))

    @property
    def id_min(self) -> int:
        return self.lat0 * GLOBAL_LON_COUNT + self.lon0 + 1

    @property
    def id_max(self) -> int:
        return self.lat1 * GLOBAL_LON_COUNT + self.lon1 + 1


_LAT_IDX = sql.SQL("((location_id - 1) / {n})").format(n=sql.Literal(GLOBAL_LON_COUNT))
_LON_IDX = sql.SQL("((location_id - 1) % {n})").format(n=sql.Literal(GLOBAL_LON_COUNT))


def area_predicates(area: Area, grid: Grid) -> tuple[sql.Composable, sql.Composable]:
    """(the row belongs to the area, the row is a grid point of the area at its own coordinates).

    The first selects what is validated (box by coordinates, or the id range of the area's lattice);
    the second is what every selected row must satisfy. Index arithmetic is integer and the
    coordinates are compared as float8, where multiples of 0.25 are exact, so no tolerance is needed.
    """
    lit = sql.Literal
    in_box = sql.SQL(
        "(latitude BETWEEN {s} AND {n} AND longitude BETWEEN {w} AND {e})"
    ).format(s=lit(float(area.south)), n=lit(float(area.north)), w=lit(float(area.west)),
             e=lit(float(area.east)))
    lattice = Lattice.of(area, grid)
    if lattice is None:
        return in_box, sql.SQL("false")
    ids = sql.SQL("(location_id BETWEEN {a} AND {b} AND {lon} BETWEEN {c} AND {d})").format(
        a=lit(lattice.id_min), b=lit(lattice.id_max), lon=_LON_IDX, c=lit(lattice.lon0), d=lit(lattice.lon1))
    belongs = sql.SQL("({} OR {})").format(in_box, ids)
    on_lattice = sql.SQL(
        "(location_id >= 1 AND {lat} BETWEEN {lat0} AND {lat1} AND ({lat} - {lat0}) % {k} = 0"
        " AND {lon} BETWEEN {lon0} AND {lon1} AND ({lon} - {lon0}) % {k} = 0"
        " AND latitude = {lat} * {step} - 90 AND longitude = {lon} * {step} - 179.75)"
    ).format(lat=_LAT_IDX, lon=_LON_IDX, lat0=lit(lattice.lat0), lat1=lit(lattice.lat1),
             lon0=lit(lattice.lon0), lon1=lit(lattice.lon1), k=lit(lattice.every),
             step=sql.SQL("0.25::float8"))
    return belongs, on_lattice


# --- stage 1: the per-day profile ----------------------------------------------------------------


Values = dict[str, tuple[float | None, float | None, int]]  # column -> (finite min, finite max, non-finite)


@dataclass
class DayProfile:
    day: date
    rows: int = 0
    duplicates: int = 0
    null_time: int = 0
    null_location_id: int = 0
    outside_area: int = 0
    values: Values = field(default_factory=lambda: {b.column: (None, None, 0) for b in BOUNDS})
    seconds: float = 0.0

    def add(self, rows: int, null_location_id: int, outside_area: int, values: Values) -> None:
        """Fold in one window's aggregates for this day (a day can span two chunks)."""
        self.rows += rows
        self.null_location_id += null_location_id
        self.outside_area += outside_area
        for column, (lo, hi, bad) in values.items():
            old_lo, old_hi, old_bad = self.values[column]
            self.values[column] = (
                lo if old_lo is None else old_lo if lo is None else min(lo, old_lo),
                hi if old_hi is None else old_hi if hi is None else max(hi, old_hi),
                old_bad + bad,
            )

    def columns(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: v for k, v in asdict(self).items() if k != "values"}
        for column, (lo, hi, bad) in self.values.items():
            out[f"{column}_min"], out[f"{column}_max"], out[f"{column}_nonfinite"] = lo, hi, bad
        return out


def _finite(column: str) -> sql.Composable:
    # NaN sorts above +Infinity in PostgreSQL, so this one range test excludes NaN and both infinities.
    return sql.SQL("({c} > '-Infinity'::float4 AND {c} < 'Infinity'::float4)").format(c=sql.Identifier(column))


_DAY = sql.SQL("(time AT TIME ZONE 'UTC')::date")


def window_queries(table: str, area: Area, grid: Grid, t0: datetime, t1: datetime) -> tuple[sql.Composed, sql.Composed]:
    """The two aggregate queries over the area's rows in [t0, t1), one result row per UTC day."""
    belongs, on_lattice = area_predicates(area, grid)
    one_day = t0.astimezone(UTC).date() == (t1 - timedelta(microseconds=1)).astimezone(UTC).date()
    # A window inside one day (every daily chunk) names its day as a constant: no per-row date
    # arithmetic and no grouping, which is a fifth of the aggregate query's time.
    day = sql.SQL("{}::date").format(sql.Literal(t0.astimezone(UTC).date())) if one_day else _DAY
    group = sql.SQL("") if one_day else sql.SQL(" GROUP BY 1")
    where = sql.SQL("time >= {t0} AND time < {t1} AND {belongs}").format(
        t0=sql.Literal(t0), t1=sql.Literal(t1), belongs=belongs)
    per_column = sql.SQL(", ").join(
        sql.SQL("min({c}) FILTER (WHERE {ok}), max({c}) FILTER (WHERE {ok}),"
                " count(*) FILTER (WHERE NOT {ok})").format(c=sql.Identifier(b.column), ok=_finite(b.column))
        for b in BOUNDS
    )
    # Plain aggregates: the planner runs them with parallel workers over the chunk.
    aggregates = sql.SQL(
        "SELECT {day}, count(*), count(*) FILTER (WHERE location_id IS NULL),"
        " count(*) FILTER (WHERE location_id IS NOT NULL AND NOT {on_lattice}), {per_column}"
        " FROM {table} WHERE {where}{group}"
    ).format(day=day, on_lattice=on_lattice, per_column=per_column, table=table_ident(table), where=where,
             group=group)
    # Duplicates hour by hour: a sort of one hour's ids at a time (about a million for the globe)
    # stays near work_mem, where one hash over a day's (time, location_id) keys would spill.
    duplicates = sql.SQL(
        "SELECT {day}, coalesce(sum(n - k), 0) FROM (SELECT time, count(location_id) AS n,"
        " count(DISTINCT location_id) AS k FROM {table} WHERE {where} GROUP BY time) AS hours{group}"
    ).format(day=day, table=table_ident(table), where=where, group=group)
    return aggregates, duplicates


def _require_table(conn: psycopg.Connection[tuple[Any, ...]], table: str) -> None:
    row = conn.execute("SELECT to_regclass(%s)", (table_ident(table).as_string(conn),)).fetchone()
    if row is None or row[0] is None:
        raise InputError(f"table {table!r} does not exist in the database")


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime
    bytes: int


def month_windows(conn: psycopg.Connection[tuple[Any, ...]], table: str, month: Month) -> list[Window]:
    """The month cut at the hypertable's chunk boundaries, with each chunk's bytes (its heap, and in the
    columnstore its compressed relation with TOAST: what a scan reads).

    One window per chunk means each chunk is scanned once whatever the chunk interval; a plain
    table (or a month with no chunk yet) is one window, which then holds no or all rows.
    """
    rows = conn.execute(
        "SELECT c.range_start, c.range_end, pg_relation_size(format('%%I.%%I', c.chunk_schema, c.chunk_name))"
        " + coalesce((SELECT pg_total_relation_size(s.compress_relid) FROM _timescaledb_catalog.compression_settings s"
        " WHERE s.relid = format('%%I.%%I', c.chunk_schema, c.chunk_name)::regclass), 0)"
        " FROM timescaledb_information.chunks c JOIN pg_class r ON r.relname = c.hypertable_name"
        " JOIN pg_namespace n ON n.oid = r.relnamespace AND n.nspname = c.hypertable_schema"
        " WHERE r.oid = %s::regclass AND c.range_start < %s AND c.range_end > %s ORDER BY c.range_start",
        (table_ident(table).as_string(conn), month.end, month.start),
    ).fetchall()
    if not rows:
        return [Window(month.start, month.end, 0)]
    return [Window(max(s, month.start), min(e, month.end), int(b)) for s, e, b in rows]


def profile_month(
    url: str, table: str, month: Month, area: Area, grid: Grid, *,
    progress: metrics.Progress | None = None,
) -> tuple[list[DayProfile], int]:
    """The month's per-day profile, chunk by chunk in one snapshot, and the heap bytes read."""
    starts = {d.date(): d for d in month.day_starts()}
    days = {d: DayProfile(d) for d in starts}
    with connect(url) as conn:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.read_only = True
        with conn.transaction():
            _require_table(conn, table)
            windows = month_windows(conn, table, month)
            # Rows with a NULL time are in no month; counted table-wide. With the schema's NOT NULL the
            # planner proves the count zero without reading a row.
            null_time_row = conn.execute(
                sql.SQL("SELECT count(*) FROM {} WHERE time IS NULL").format(table_ident(table))).fetchone()
            null_time = int(null_time_row[0]) if null_time_row else 0
            for w in windows:
                began = time.perf_counter()
                aggregates, duplicates = window_queries(table, area, grid, w.start, w.end)
                rows = 0
                for agg in conn.execute(aggregates).fetchall():
                    values: Values = {b.column: (agg[4 + 3 * i], agg[5 + 3 * i], int(agg[6 + 3 * i]))
                                      for i, b in enumerate(BOUNDS)}
                    days[agg[0]].add(int(agg[1]), int(agg[2]), int(agg[3]), values)
                    rows += int(agg[1])
                for day, dups in conn.execute(duplicates).fetchall():
                    days[day].duplicates += int(dups)
                seconds = time.perf_counter() - began
                covered = [d for d, start in starts.items() if start < w.end and start + timedelta(days=1) > w.start]
                for d in covered:
                    days[d].seconds += seconds / len(covered)
                if progress is not None:
                    progress(metrics.Chunk(rows, w.bytes, seconds))
    for profile in days.values():
        profile.null_time = null_time
    return list(days.values()), sum(w.bytes for w in windows)


def store_profile(url: str, validation_id: str, table: str, month: Month, area: Area, grid: Grid,
                  days: list[DayProfile]) -> None:
    if not days:
        return
    columns = list(days[0].columns())
    stmt = sql.SQL(
        "INSERT INTO era5_validation_days (validation_id, table_name, month, area, grid, {cols})"
        " VALUES (%s, %s, %s, %s, %s, {vals})"
    ).format(cols=sql.SQL(", ").join(map(sql.Identifier, columns)),
             vals=sql.SQL(", ").join(sql.Placeholder() for _ in columns))
    with connect(url) as conn, conn.transaction(), conn.cursor() as cur:
        cur.executemany(stmt, [(validation_id, table, month.start.date(), str(area), str(grid),
                                *d.columns().values()) for d in days])


# --- stage 2: the suite --------------------------------------------------------------------------


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


@dataclass(frozen=True)
class Check:
    """One expectation and the name a failure of it is reported under."""

    name: str
    per_day: bool  # a failure names each day (row_count_day:YYYY-MM-DD)
    expectation: Any


def build_checks(month: Month, area: Area, grid: Grid) -> list[Check]:
    from great_expectations.expectations import (  # type: ignore[attr-defined]
        ExpectColumnSumToBeBetween,
        ExpectColumnValuesToBeBetween,
    )

    points = area.points(grid)
    month_rows, day_rows = expected_rows(month, area, grid), HOURS_PER_DAY * points

    def zero(column: str, name: str, notes: str) -> Check:
        return Check(name, False, ExpectColumnValuesToBeBetween(
            column=column, min_value=0, max_value=0, meta={"check": name}, notes=notes))

    checks = [
        Check("row_count_month", False, ExpectColumnSumToBeBetween(
            column="rows", min_value=month_rows, max_value=month_rows, meta={"check": "row_count_month"},
            notes=f"The month holds exactly {month.hours} hours x {points} grid points = {month_rows:,} rows.")),
        Check("row_count_day", True, ExpectColumnValuesToBeBetween(
            column="rows", min_value=day_rows, max_value=day_rows, meta={"check": "row_count_day"},
            notes=f"Each day holds exactly 24 hours x {points} grid points = {day_rows:,} rows.")),
        zero("null_time", "time_not_null", "No row has a NULL time."),
        zero("null_location_id", "location_id_not_null", "No row of the area has a NULL location_id."),
        zero("duplicates", "no_duplicates", "No (time, location_id) appears twice."),
        zero("outside_area", "inside_area",
             f"Every location_id is a grid point of the area {area} on grid {grid} and the id of the row's own "
             "latitude/longitude."),
    ]
    for b in BOUNDS:
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


def _profile_query(url: str, validation_id: str) -> str:
    stmt = sql.SQL(
        "SELECT day, rows, duplicates, null_time, null_location_id, outside_area, {values}"
        " FROM era5_validation_days WHERE validation_id = {vid} ORDER BY day"
    ).format(
        values=sql.SQL(", ").join(
            sql.Identifier(f"{b.column}_{part}") for b in BOUNDS for part in ("min", "max", "nonfinite")),
        vid=sql.Literal(validation_id),
    )
    with connect(url) as conn:
        return stmt.as_string(conn)


@dataclass
class SuiteRun:
    result: dict[str, Any]
    success: bool
    failed: list[str]
    failures: list[dict[str, Any]]
    docs_path: Path | None


def run_suite(url: str, validation_id: str, table: str, month: Month, area: Area, grid: Grid, *,
              run_name: str, docs_dir: Path) -> SuiteRun:
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
        "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
    })
    source = context.data_sources.add_postgres(
        "era5", connection_string=url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        asset = source.add_query_asset(f"{table}_{month}_{area_slug(area)}", query=_profile_query(url, validation_id))
        batch = asset.add_batch_definition_whole_table("days")
        suite = context.suites.add(gx.ExpectationSuite(name="era5_month"))
        checks = build_checks(month, area, grid)
        for check in checks:
            suite.add_expectation(check.expectation)
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
        outcome = checkpoint.run(run_id=RunIdentifier(run_name=run_name, run_time=datetime.now(UTC)))
    finally:
        source.get_engine().dispose()
    result = next(iter(outcome.run_results.values()))
    failed, failures = failures_of(checks, list(result.results))
    index = docs_dir / "index.html"
    return SuiteRun(
        result=result.to_json_dict(),  # type: ignore[no-untyped-call]
        success=bool(result.success), failed=failed, failures=failures,
        docs_path=index if index.exists() else None,
    )


def _replace_dir(new: Path, final: Path) -> None:
    """Put ``new`` where ``final`` is, so a reader sees the old docs or the new, never half of each."""
    old = final.with_name(f".{final.name}-old-{uuid.uuid4().hex[:8]}")
    if final.exists():
        final.rename(old)
    new.rename(final)
    shutil.rmtree(old, ignore_errors=True)


# --- the whole validation ------------------------------------------------------------------------


def validate_month(
    url: str, table: str, month: Month, area: Area, grid: Grid, *,
    run_id: str | None = None, out_dir: Path | None = None, progress_every_s: float = 5.0,
) -> Validation:
    """Profile the month in the database, run the suite on the profile, keep result and Data Docs."""
    began = time.perf_counter()
    expected = expected_rows(month, area, grid)
    validation_id = str(uuid.uuid4())
    run_name = run_id or f"validate__{datetime.now(UTC):%Y%m%dT%H%M%S}"
    tags = {"table": table, "month": str(month), "area": str(area)}
    with metrics.progress_reporter(expected, f"validate {table} {month} {area}", progress_every_s,
                                   task="validate", tags=tags) as progress:
        days, nbytes = profile_month(url, table, month, area, grid, progress=progress)
    profile_seconds = time.perf_counter() - began
    store_profile(url, validation_id, table, month, area, grid, days)

    folder = result_folder(out_dir or validation_dir(), table, month, area)
    folder.mkdir(parents=True, exist_ok=True)
    staging = folder / f".docs-{validation_id}"
    t_suite = time.perf_counter()
    try:
        suite = run_suite(url, validation_id, table, month, area, grid, run_name=run_name, docs_dir=staging)
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

