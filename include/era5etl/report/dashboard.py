"""The months dashboard: what the ledger and the metrics say about a table, as data, JSON and one HTML page.

Free of Airflow: the Airflow plugin (``plugins/era5_dashboard.py``) only authenticates and routes;
everything it shows is gathered by :func:`fetch` from a database URL and drawn by
:func:`render_page`, which is pure (rows in, HTML out) so it is tested without a server.

The page is self-contained HTML with inline SVG charts and no script or external asset: the API
server may have no internet access, and Airflow shows external views in a sandboxed iframe.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from era5etl.core.expver import PRELIMINARY
from era5etl.core.grid import area_slug
from era5etl.db import connect
from era5etl.track.ledger import STATES

TASKS = ("fetch", "stage", "load", "validate")

# Background and text colour per ledger state: in-flight states in blues/amber, done in greens,
# failure in red, so a year of months reads at a glance and the text on each stays legible.
STATE_COLOURS: dict[str, tuple[str, str]] = {
    "pending": ("#e2e8f0", "#1e293b"),
    "fetching": ("#bfdbfe", "#1e3a8a"),
    "staged": ("#c7d2fe", "#312e81"),
    "loading": ("#fde68a", "#78350f"),
    "loaded": ("#86efac", "#14532d"),
    "validated": ("#15803d", "#ffffff"),
    "failed": ("#dc2626", "#ffffff"),
}
UNKNOWN_COLOURS = ("#f1f5f9", "#64748b")
MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

# Columns someone may add to the ledger later; read when present so the page works on either schema.
OPTIONAL_LEDGER_COLUMNS = ("validated_at", "validation_failed", "validation_path")


class ReportError(ValueError):
    """A request the dashboard cannot answer as asked (a malformed month, say)."""


# --- data ----------------------------------------------------------------------------------------


def parse_month(text: str) -> date:
    """``YYYY-MM`` as the first day of that month."""
    try:
        year, month = text.strip().split("-")
        if len(year) != 4 or len(month) != 2:
            raise ValueError(text)
        return date(int(year), int(month), 1)
    except ValueError:
        raise ReportError(f"month {text!r} is not of the form YYYY-MM") from None


def month_text(month: date) -> str:
    return f"{month.year:04d}-{month.month:02d}"


def _int(value: Any) -> int | None:
    return int(value) if value is not None else None


def _float(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


@dataclass(frozen=True)
class Target:
    """One table and area the ledger knows: what the page can be asked to show."""

    table: str
    area: str
    months: int
    updated_at: datetime | None = None


@dataclass(frozen=True)
class TaskFigures:
    """The latest recorded figures of one task for one month."""

    task: str
    rows: int
    bytes: int
    seconds: float
    rows_per_s: float | None = None
    peak_rss_mb: float | None = None
    run_id: str | None = None
    recorded_at: datetime | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> TaskFigures:
        detail = row.get("detail")
        return cls(
            task=str(row["task"]), rows=int(row.get("rows") or 0), bytes=int(row.get("bytes") or 0),
            seconds=float(row.get("seconds") or 0.0), rows_per_s=_float(row.get("rows_per_s")),
            peak_rss_mb=_float(row.get("peak_rss_mb")), run_id=row.get("run_id"),
            recorded_at=row.get("recorded_at"), detail=detail if isinstance(detail, Mapping) else {},
        )

    @property
    def bytes_per_s(self) -> float | None:
        return self.bytes / self.seconds if self.seconds > 0 and self.bytes > 0 else None


@dataclass(frozen=True)
class Chunk:
    """One hypertable chunk of a load, from the load task's ``detail.chunks``."""

    start: str
    rows: int
    seconds: float
    rows_per_s: float
    copy_seconds: float | None = None
    index_seconds: float | None = None

    @classmethod
    def from_detail(cls, item: Mapping[str, Any]) -> Chunk:
        rows, seconds = int(item.get("rows") or 0), float(item.get("seconds") or 0.0)
        rate = _float(item.get("rows_per_s"))
        if rate is None:
            rate = rows / seconds if seconds > 0 else 0.0
        return cls(start=str(item.get("start", "")), rows=rows, seconds=seconds, rows_per_s=rate,
                   copy_seconds=_float(item.get("copy_seconds")), index_seconds=_float(item.get("index_seconds")))


@dataclass(frozen=True)
class LoadRun:
    """One recorded load of a month: the points of the rate-per-month chart."""

    month: date
    rows: int
    seconds: float
    rows_per_s: float | None
    recorded_at: datetime | None = None
    run_id: str | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> LoadRun:
        return cls(month=row["month"], rows=int(row.get("rows") or 0), seconds=float(row.get("seconds") or 0.0),
                   rows_per_s=_float(row.get("rows_per_s")), recorded_at=row.get("recorded_at"),
                   run_id=row.get("run_id"))


@dataclass(frozen=True)
class Validation:
    status: str  # "passed", "failed" or "none"
    failed: tuple[str, ...] = ()
    validated_at: datetime | None = None
    path: str | None = None


@dataclass(frozen=True)
class MonthView:
    """One ledger row with the latest figures of each of its tasks."""

    month: date
    state: str
    grid: str = ""
    rows: int | None = None
    expected_rows: int | None = None
    expver: tuple[str, ...] = ()
    run_id: str | None = None
    error: str | None = None
    updated_at: datetime | None = None
    validated_at: datetime | None = None
    validation_failed: tuple[str, ...] | None = None
    validation_path: str | None = None
    tasks: Mapping[str, TaskFigures] = field(default_factory=dict)

    @classmethod
    def from_row(cls, row: Mapping[str, Any], tasks: Mapping[str, TaskFigures] | None = None) -> MonthView:
        failed = row.get("validation_failed")
        return cls(
            month=row["month"], state=str(row["state"]), grid=str(row.get("grid") or ""),
            rows=_int(row.get("rows")), expected_rows=_int(row.get("expected_rows")),
            expver=tuple(row.get("expver") or ()), run_id=row.get("run_id"), error=row.get("error"),
            updated_at=row.get("updated_at"), validated_at=row.get("validated_at"),
            validation_failed=tuple(failed) if failed is not None else None,
            validation_path=row.get("validation_path"), tasks=dict(tasks or {}),
        )

    @property
    def label(self) -> str:
        return month_text(self.month)

    @property
    def validation(self) -> Validation:
        """The month's verdict: the ledger's when it records one, else what the figures and state imply."""
        if self.validated_at is not None and self.validation_failed is not None:
            status = "failed" if self.validation_failed else "passed"
            return Validation(status, self.validation_failed, self.validated_at, self.validation_path)
        figures, load = self.tasks.get("validate"), self.tasks.get("load")
        # A validation recorded before the latest load judged data that has since been replaced.
        current = figures is not None and (
            load is None or figures.recorded_at is None or load.recorded_at is None
            or figures.recorded_at >= load.recorded_at)
        if figures is not None and current and "success" in figures.detail:
            failed = tuple(str(f) for f in figures.detail.get("failed") or ())
            return Validation("passed" if figures.detail["success"] else "failed", failed,
                              figures.recorded_at, self.validation_path)
        if self.state == "validated":
            return Validation("passed", (), None, self.validation_path)
        if self.state == "failed" and (self.error or "").startswith("validate"):
            return Validation("failed", (), None, self.validation_path)
        return Validation("none", (), None, self.validation_path)


@dataclass(frozen=True)
class Dashboard:
    """Everything the page shows for one table and area."""

    table: str | None
    area: str | None
    months: Sequence[MonthView] = ()
    selected: date | None = None
    chunks: Sequence[Chunk] = ()
    load_runs: Sequence[LoadRun] = ()
    targets: Sequence[Target] = ()
    generated_at: datetime | None = None

    def month(self, month: date | None) -> MonthView | None:
        return next((m for m in self.months if m.month == month), None)


def build(
    *, table: str | None, area: str | None, month_rows: Iterable[Mapping[str, Any]],
    task_rows: Iterable[Mapping[str, Any]] = (), load_rows: Iterable[Mapping[str, Any]] = (),
    chunk_details: Iterable[Mapping[str, Any]] = (), selected: date | None = None,
    targets: Sequence[Target] = (), generated_at: datetime | None = None,
) -> Dashboard:
    """The dashboard from rows shaped like the queries' (``fetch`` calls this; so do the unit tests).

    ``task_rows`` are the latest era5_metrics row per month and task; ``load_rows`` every load of
    the table and area; ``chunk_details`` the ``detail.chunks`` of the selected month's latest load.
    With no ``selected`` month, the latest month with a recorded load is chosen.
    """
    tasks: dict[date, dict[str, TaskFigures]] = {}
    for row in task_rows:
        figures = TaskFigures.from_row(row)
        known = tasks.setdefault(row["month"], {}).get(figures.task)
        if known is None or (figures.recorded_at or datetime.min.replace(tzinfo=UTC)) >= (
                known.recorded_at or datetime.min.replace(tzinfo=UTC)):
            tasks[row["month"]][figures.task] = figures
    months = sorted((MonthView.from_row(r, tasks.get(r["month"])) for r in month_rows), key=lambda m: m.month)
    runs = sorted((LoadRun.from_row(r) for r in load_rows),
                  key=lambda r: (r.month, r.recorded_at or datetime.min.replace(tzinfo=UTC)))
    if selected is None:
        loaded = [m.month for m in months if "load" in m.tasks]
        selected = max(loaded) if loaded else (months[-1].month if months else None)
    return Dashboard(table=table, area=area, months=months, selected=selected,
                     chunks=[Chunk.from_detail(c) for c in chunk_details], load_runs=runs,
                     targets=targets, generated_at=generated_at)


# --- queries -------------------------------------------------------------------------------------


def _dicts(cur: Any) -> list[dict[str, Any]]:
    names = [d.name for d in cur.description or []]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def fetch(url: str, table: str | None = None, area: str | None = None, month: date | None = None) -> Dashboard:
    """Read the dashboard for ``table`` and ``area`` (default: the pair updated most recently)."""
    now = datetime.now(UTC)
    with connect(url) as conn:
        if conn.execute("SELECT to_regclass('era5_months') IS NOT NULL").fetchone() != (True,):
            return Dashboard(table=table, area=area, generated_at=now)
        targets = [Target(r["table_name"], r["area"], int(r["months"]), r["updated_at"]) for r in _dicts(conn.execute(
            "SELECT table_name, area, count(*) AS months, max(updated_at) AS updated_at FROM era5_months"
            " GROUP BY table_name, area ORDER BY max(updated_at) DESC, table_name, area"))]
        if table is None and targets:
            table = targets[0].table
        if area is None and table is not None:
            area = next((t.area for t in targets if t.table == table), None)
        if table is None or area is None:
            return Dashboard(table=table, area=area, targets=targets, generated_at=now)

        present = {r[0] for r in conn.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = 'era5_months'::regclass AND attnum > 0"
            " AND NOT attisdropped")}
        optional = "".join(f", {c}" for c in OPTIONAL_LEDGER_COLUMNS if c in present)
        key = {"table": table, "area": area, "month": month}
        # Column names come from our own constant, filtered by what the catalogue says exists.
        month_rows = _dicts(conn.execute(
            "SELECT month, grid, state, rows, expected_rows, expver, run_id, error, updated_at"
            f"{optional} FROM era5_months WHERE table_name = %(table)s AND area = %(area)s ORDER BY month", key))
        # The load's chunk list is the one large detail; it is read for the selected month only.
        task_rows = _dicts(conn.execute(
            "SELECT DISTINCT ON (month, task) month, task, run_id, rows, bytes, seconds, rows_per_s, peak_rss_mb,"
            " recorded_at, CASE WHEN task = 'load' THEN detail - 'chunks' ELSE detail END AS detail"
            " FROM era5_metrics WHERE table_name = %(table)s AND area = %(area)s"
            " ORDER BY month, task, recorded_at DESC, id DESC", key))
        load_rows = _dicts(conn.execute(
            "SELECT month, rows, seconds, rows_per_s, recorded_at, run_id FROM era5_metrics"
            " WHERE table_name = %(table)s AND area = %(area)s AND task = 'load' ORDER BY recorded_at, id", key))
        dashboard = build(table=table, area=area, month_rows=month_rows, task_rows=task_rows,
                          load_rows=load_rows, selected=month, targets=targets, generated_at=now)
        if dashboard.selected is None:
            return dashboard
        row = conn.execute(
            "SELECT detail -> 'chunks' FROM era5_metrics WHERE table_name = %(table)s AND area = %(area)s"
            " AND task = 'load' AND month = %(month)s ORDER BY recorded_at DESC, id DESC LIMIT 1",
            {**key, "month": dashboard.selected}).fetchone()
    chunks = row[0] if row is not None and isinstance(row[0], list) else []
    return replace(dashboard, chunks=[Chunk.from_detail(c) for c in chunks if isinstance(c, Mapping)])


def validation_path(url: str, table: str, month: date, slug: str) -> str | None:
    """The ledger's validation folder for a month, or None (no such month, no verdict, or no such column)."""
    with connect(url) as conn:
        has_column = conn.execute(
            "SELECT EXISTS (SELECT FROM pg_attribute WHERE attrelid = to_regclass('era5_months')"
            " AND attname = 'validation_path' AND NOT attisdropped)").fetchone()
        if has_column != (True,):
            return None
        row = conn.execute(
            "SELECT validation_path FROM era5_months WHERE table_name = %s AND month = %s"
            " AND replace(area, '/', '_') = %s AND validation_path IS NOT NULL ORDER BY updated_at DESC LIMIT 1",
            (table, month, slug)).fetchone()
    return str(row[0]) if row is not None else None


# --- Data Docs -----------------------------------------------------------------------------------


def docs_root(path: str) -> tuple[Path, str]:
    """The folder to serve for a validation path, and the Data Docs entry page within it.

    The validator records the result folder (``result.json`` and ``docs/index.html`` inside); a
    path to the Data Docs folder, its ``index.html`` or the ``result.json`` is accepted too.
    """
    p = Path(path)
    if p.suffix == ".html":
        return p.parent, p.name
    if p.suffix == ".json":
        return p.parent, "docs/index.html"
    if not (p / "docs").is_dir() and (p / "index.html").is_file():
        return p, "index.html"
    return p, "docs/index.html"


def docs_file(path: str, relative: str) -> Path | None:
    """The file ``relative`` under a validation path's folder, or None if missing or outside it."""
    root, entry = docs_root(path)
    relative = relative or entry
    if relative.endswith("/"):
        relative += "index.html"
    base = root.resolve()
    target = (base / relative).resolve()
    # Links in the served pages are user-controlled URLs; nothing above the folder may be reached.
    if not target.is_relative_to(base) or not target.is_file():
        return None
    return target


def docs_href(base: str, table: str, month: date, area: str, path: str) -> str:
    """Where the plugin serves a month's Data Docs (its route mirrors this layout)."""
    _, entry = docs_root(path)
    return f"{base}docs/{quote(table, safe='')}/{month_text(month)}/{quote(area_slug(area), safe='')}/{entry}"


# --- JSON ----------------------------------------------------------------------------------------


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def to_json(d: Dashboard, base: str = "") -> dict[str, Any]:
    """The dashboard as plain JSON types; ``base`` prefixes the Data Docs links (the plugin's root)."""

    def month_json(m: MonthView) -> dict[str, Any]:
        v = m.validation
        docs = docs_href(base, d.table, m.month, d.area, v.path) if v.path and d.table and d.area else None
        return {
            "month": m.label, "state": m.state, "grid": m.grid, "rows": m.rows, "expected_rows": m.expected_rows,
            "expver": list(m.expver), "run_id": m.run_id, "error": m.error, "updated_at": _iso(m.updated_at),
            "validation": {"status": v.status, "failed": list(v.failed), "validated_at": _iso(v.validated_at),
                           "path": v.path, "docs_url": docs},
            "tasks": {t: {"rows": f.rows, "bytes": f.bytes, "seconds": f.seconds, "rows_per_s": f.rows_per_s,
                          "bytes_per_s": f.bytes_per_s, "peak_rss_mb": f.peak_rss_mb, "run_id": f.run_id,
                          "recorded_at": _iso(f.recorded_at)} for t, f in m.tasks.items()},
        }

    return {
        "table": d.table, "area": d.area,
        "selected_month": month_text(d.selected) if d.selected else None,
        "generated_at": _iso(d.generated_at),
        "targets": [{"table": t.table, "area": t.area, "months": t.months, "updated_at": _iso(t.updated_at)}
                    for t in d.targets],
        "months": [month_json(m) for m in d.months],
        "chunks": [{"start": c.start, "rows": c.rows, "seconds": c.seconds, "rows_per_s": c.rows_per_s,
                    "copy_seconds": c.copy_seconds, "index_seconds": c.index_seconds} for c in d.chunks],
        "load_runs": [{"month": month_text(r.month), "rows": r.rows, "seconds": r.seconds, "rows_per_s": r.rows_per_s,
                       "recorded_at": _iso(r.recorded_at), "run_id": r.run_id} for r in d.load_runs],
    }


# --- formatting ----------------------------------------------------------------------------------


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def count(n: int | None) -> str:
    return f"{n:,}" if n is not None else "–"


def short(x: float | None) -> str:
    """A count in three significant figures: 980, 74.4k, 1.49M."""
    if x is None:
        return "–"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            v = x / div
            return f"{v:.3g}{suffix}" if v < 1000 else f"{v:.0f}{suffix}"
    return f"{x:.3g}" if x != int(x) else f"{int(x)}"


def byte_rate(x: float) -> str:
    for div, unit in ((1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s")):
        if x >= div:
            return f"{x / div:.3g} {unit}"
    return f"{x:.0f} B/s"


def _seconds(s: float) -> str:
    if s < 60:
        return f"{s:.2f} s" if s < 10 else f"{s:.1f} s"
    minutes, sec = divmod(round(s), 60)
    return f"{minutes} min {sec:02d} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def _when(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if moment is not None else "–"


def _chunk_label(start: str, *, long: bool = False) -> str:
    try:
        moment = datetime.fromisoformat(start)
    except ValueError:
        return start[:16]
    return moment.strftime("%Y-%m-%d %H:%M") if long else moment.strftime("%m-%d")


def _colours(state: str) -> tuple[str, str]:
    return STATE_COLOURS.get(state, UNKNOWN_COLOURS)


# --- SVG charts ----------------------------------------------------------------------------------

CHART_W, CHART_H = 760, 250
PAD_L, PAD_R, PAD_T, PAD_B = 64, 16, 26, 42


def nice_ticks(top: float, count: int = 4) -> list[float]:
    """Round axis ticks from 0 that cover ``top``: steps of 1, 2, 2.5 or 5 times a power of ten."""
    if not top > 0:
        return [0.0, 1.0]
    raw = top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(math.ceil(top / step - 1e-9) + 1)]


def _axes(ticks: Sequence[float], y_label: str) -> list[str]:
    plot_h = CHART_H - PAD_T - PAD_B
    out = []
    for t in ticks:
        y = PAD_T + plot_h * (1 - t / ticks[-1])
        out.append(f'<line x1="{PAD_L}" x2="{CHART_W - PAD_R}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
                   f'<text x="{PAD_L - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">{_e(short(t))}</text>')
    out.append(f'<text x="14" y="{PAD_T + plot_h / 2:.1f}" transform="rotate(-90 14 {PAD_T + plot_h / 2:.1f})"'
               f' text-anchor="middle" class="axis">{_e(y_label)}</text>')
    out.append(f'<line x1="{PAD_L}" x2="{CHART_W - PAD_R}" y1="{PAD_T + plot_h}" y2="{PAD_T + plot_h}" class="base"/>')
    return out


def _svg(body: Sequence[str], label: str, css_class: str) -> str:
    return (f'<svg class="chart {css_class}" viewBox="0 0 {CHART_W} {CHART_H}" role="img" aria-label="{_e(label)}"'
            f' xmlns="http://www.w3.org/2000/svg"><title>{_e(label)}</title>{"".join(body)}</svg>')


def chunk_chart(chunks: Sequence[Chunk], month_rate: float | None = None, month: str = "") -> str:
    """Bars of rows/s per hypertable chunk, with the month's overall rate as a dashed line."""
    if not chunks:
        return f'<p class="empty">No chunk figures recorded for {_e(month) or "this month"}.</p>'
    top = max([c.rows_per_s for c in chunks] + [month_rate or 0.0])
    ticks = nice_ticks(top)
    plot_w, plot_h = CHART_W - PAD_L - PAD_R, CHART_H - PAD_T - PAD_B
    band = plot_w / len(chunks)
    every = max(1, math.ceil(len(chunks) / 12))
    body = _axes(ticks, "rows/s")
    for i, c in enumerate(chunks):
        h = plot_h * c.rows_per_s / ticks[-1]
        x = PAD_L + i * band + band * 0.125
        parts = []
        if c.copy_seconds is not None:
            parts.append(f"COPY {_seconds(c.copy_seconds)}")
        if c.index_seconds is not None:
            parts.append(f"index {_seconds(c.index_seconds)}")
        tip = (f"chunk {_chunk_label(c.start, long=True)}: {count(c.rows)} rows in {_seconds(c.seconds)}"
               f" = {short(c.rows_per_s)} rows/s" + (f" ({', '.join(parts)})" if parts else ""))
        body.append(f'<rect class="bar" x="{x:.1f}" y="{PAD_T + plot_h - h:.1f}" width="{band * 0.75:.1f}"'
                    f' height="{max(h, 0.5):.1f}" data-rate="{c.rows_per_s:.0f}"><title>{_e(tip)}</title></rect>')
        if i % every == 0:
            body.append(f'<text x="{x + band * 0.375:.1f}" y="{PAD_T + plot_h + 16}" text-anchor="middle"'
                        f' class="tick">{_e(_chunk_label(c.start))}</text>')
    if month_rate:
        y = PAD_T + plot_h * (1 - month_rate / ticks[-1])
        body.append(f'<line class="avg" x1="{PAD_L}" x2="{CHART_W - PAD_R}" y1="{y:.1f}" y2="{y:.1f}">'
                    f'<title>whole load: {_e(short(month_rate))} rows/s</title></line>'
                    # The key sits in the top margin, where no bar can hide it.
                    f'<line class="avg" x1="{CHART_W - PAD_R - 190}" x2="{CHART_W - PAD_R - 166}" y1="10" y2="10"/>'
                    f'<text class="avg-label" x="{CHART_W - PAD_R}" y="14" text-anchor="end">'
                    f'whole load {_e(short(month_rate))} rows/s</text>')
    body.append(f'<text x="{PAD_L + plot_w / 2:.1f}" y="{CHART_H - 6}" text-anchor="middle" class="axis">'
                f'chunk start (month-day, UTC)</text>')
    return _svg(body, f"Load rate per chunk, {month}", "chunks")


def _month_index(m: date) -> int:
    return m.year * 12 + m.month - 1


def month_rate_chart(runs: Sequence[LoadRun], selected: date | None = None) -> str:
    """Load rows/s per month: the latest load of each month joined by a line, earlier loads hollow."""
    rated = [r for r in runs if r.rows_per_s is not None]
    if not rated:
        return '<p class="empty">No loads recorded yet.</p>'
    latest: dict[date, LoadRun] = {}
    for r in rated:  # ordered by month then time, so the last one per month wins
        latest[r.month] = r
    first, last = _month_index(min(latest)), _month_index(max(latest))
    span = max(last - first, 1)
    ticks = nice_ticks(max(r.rows_per_s or 0.0 for r in rated))
    plot_w, plot_h = CHART_W - PAD_L - PAD_R, CHART_H - PAD_T - PAD_B
    inner = plot_w - 24  # keep the end points off the frame

    def xy(r: LoadRun) -> tuple[float, float]:
        offset = (_month_index(r.month) - first) / span if last > first else 0.5
        return PAD_L + 12 + inner * offset, PAD_T + plot_h * (1 - (r.rows_per_s or 0.0) / ticks[-1])

    body = _axes(ticks, "rows/s")
    # Consecutive months are joined; a gap in the months breaks the line rather than hiding it.
    segment: list[str] = []
    previous: int | None = None
    for m in sorted(latest):
        if previous is not None and _month_index(m) != previous + 1 and len(segment) > 1:
            body.append(f'<polyline class="line" points="{" ".join(segment)}"/>')
        if previous is not None and _month_index(m) != previous + 1:
            segment = []
        x, y = xy(latest[m])
        segment.append(f"{x:.1f},{y:.1f}")
        previous = _month_index(m)
    if len(segment) > 1:
        body.append(f'<polyline class="line" points="{" ".join(segment)}"/>')
    for r in rated:
        x, y = xy(r)
        is_latest = latest[r.month] is r
        css = "pt" if is_latest else "pt old"
        if is_latest and r.month == selected:
            css += " sel"
        tip = (f"{month_text(r.month)}: {count(r.rows)} rows in {_seconds(r.seconds)} = {short(r.rows_per_s)} rows/s,"
               f" loaded {_when(r.recorded_at)}" + ("" if is_latest else " (superseded)"))
        body.append(f'<circle class="{css}" cx="{x:.1f}" cy="{y:.1f}" r="{5 if "sel" in css else 3.5}"'
                    f' data-month="{month_text(r.month)}"><title>{_e(tip)}</title></circle>')
    # The axis is time, so labels go at even month steps whether or not those months were loaded.
    step = max(1, math.ceil((last - first + 1) / 8))
    for index in range(first, last + 1, step):
        x, _ = xy(LoadRun(date(index // 12, index % 12 + 1, 1), 0, 0.0, 0.0))
        body.append(f'<text x="{x:.1f}" y="{PAD_T + plot_h + 16}" text-anchor="middle" class="tick">'
                    f"{index // 12:04d}-{index % 12 + 1:02d}</text>")
    body.append(f'<text x="{PAD_L + plot_w / 2:.1f}" y="{CHART_H - 6}" text-anchor="middle" class="axis">'
                f'month loaded</text>')
    return _svg(body, "Load rate per month", "months")


# --- HTML ----------------------------------------------------------------------------------------

CSS = """
:root { color-scheme: light; }
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #0f172a;
       background: #ffffff; margin: 0; padding: 16px 20px 32px; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 24px 0 8px; }
.sub { color: #475569; margin: 0 0 12px; }
a { color: #1d4ed8; }
nav.targets a { display: inline-block; padding: 3px 10px; margin: 0 4px 4px 0; border: 1px solid #cbd5e1;
                border-radius: 14px; text-decoration: none; color: #0f172a; font-size: 13px; }
nav.targets a.on { background: #0f172a; color: #fff; border-color: #0f172a; }
.legend span { display: inline-block; padding: 2px 8px; margin: 0 4px 4px 0; border-radius: 4px; font-size: 12px; }
table.cal { border-collapse: separate; border-spacing: 4px; }
table.cal th { font-weight: 600; color: #475569; font-size: 12px; }
table.cal th.year { text-align: right; padding-right: 6px; }
.cell { display: block; width: 86px; height: 56px; border-radius: 6px; text-decoration: none; box-sizing: border-box;
        padding: 4px 6px; font-size: 11px; line-height: 1.3; overflow: hidden; white-space: nowrap; }
.cell b, .cell span { display: block; } .cell b { font-size: 12px; }
.cell.none { background: #f8fafc; border: 1px dashed #e2e8f0; color: #94a3b8; }
.cell.sel { outline: 3px solid #f97316; outline-offset: 1px; }
table.months { border-collapse: collapse; width: 100%; font-size: 13px; }
table.months th, table.months td { border-bottom: 1px solid #e2e8f0; padding: 5px 8px; text-align: left;
                                   vertical-align: top; }
table.months th { background: #f8fafc; font-weight: 600; }
table.months td.nowrap { white-space: nowrap; }
table.months td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.months tr.sel td { background: #fff7ed; }
.badge { display: inline-block; padding: 1px 7px; border-radius: 10px; font-size: 12px; white-space: nowrap; }
.ok { color: #15803d; font-weight: 600; } .bad { color: #b91c1c; font-weight: 600; } .muted { color: #64748b; }
.err { color: #b91c1c; font-size: 12px; max-width: 340px; }
.small { font-size: 12px; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
.charts figure { margin: 0; flex: 1 1 560px; max-width: 900px; border: 1px solid #e2e8f0; border-radius: 8px;
                 padding: 8px 8px 4px; }
figcaption { font-weight: 600; margin: 0 0 4px 4px; }
svg.chart { width: 100%; height: auto; display: block; }
svg .grid { stroke: #e2e8f0; } svg .base { stroke: #94a3b8; }
svg .tick { font-size: 11px; fill: #475569; } svg .axis { font-size: 12px; fill: #334155; }
svg .bar { fill: #2563eb; } svg .bar:hover { fill: #1e40af; }
svg .avg { stroke: #f97316; stroke-width: 1.5; stroke-dasharray: 6 4; }
svg .avg-label { font-size: 12px; fill: #c2410c; }
svg .line { fill: none; stroke: #2563eb; stroke-width: 2; }
svg .pt { fill: #2563eb; } svg .pt.old { fill: #fff; stroke: #94a3b8; stroke-width: 1.5; }
svg .pt.sel { fill: #f97316; }
.scroll { overflow-x: auto; }
.empty { color: #64748b; font-style: italic; }
footer { margin-top: 24px; color: #94a3b8; font-size: 12px; }
"""


def _query(base: str, **params: str | None) -> str:
    return base + "?" + urlencode({k: v for k, v in params.items() if v})


def _targets(d: Dashboard, base: str) -> str:
    if len(d.targets) <= 1:
        return ""
    links = []
    for t in d.targets[:30]:
        on = ' class="on"' if (t.table, t.area) == (d.table, d.area) else ""
        links.append(f'<a{on} href="{_e(_query(base, table=t.table, area=t.area))}">{_e(t.table)} · {_e(t.area)}'
                     f' <span class="muted">({t.months})</span></a>')
    return f'<nav class="targets">{"".join(links)}</nav>'


def _legend(d: Dashboard) -> str:
    counts = {s: 0 for s in STATES}
    for m in d.months:
        counts[m.state] = counts.get(m.state, 0) + 1
    items = []
    for state, n in counts.items():
        bg, fg = _colours(state)
        items.append(f'<span data-state="{_e(state)}" style="background:{bg};color:{fg}">{_e(state)} {n}</span>')
    return f'<div class="legend">{"".join(items)}</div>'


def _cell_tip(m: MonthView) -> str:
    parts = [f"{m.label}: {m.state}", f"rows {count(m.rows)} of {count(m.expected_rows)} expected"]
    if m.expver:
        parts.append("expver " + "+".join(m.expver))
    v = m.validation
    if v.status != "none":
        parts.append(f"validation {v.status}" + (f" ({', '.join(v.failed)})" if v.failed else ""))
    if m.error:
        parts.append(m.error)
    parts.append(f"updated {_when(m.updated_at)}")
    return "\n".join(parts)


def calendar(d: Dashboard, base: str) -> str:
    """Years down, months across, each cell coloured by the month's ledger state."""
    if not d.months:
        return '<p class="empty">The ledger holds no months for this table and area yet.</p>'
    by_month = {m.month: m for m in d.months}
    head = "".join(f"<th>{n}</th>" for n in MONTH_NAMES)
    rows = []
    for year in range(min(by_month).year, max(by_month).year + 1):
        cells = []
        for number in range(1, 13):
            key = date(year, number, 1)
            m = by_month.get(key)
            if m is None:
                cells.append(f'<td><span class="cell none" data-month="{month_text(key)}" data-state="">'
                             f'<b>{MONTH_NAMES[number - 1]}</b></span></td>')
                continue
            bg, fg = _colours(m.state)
            sel = " sel" if m.month == d.selected else ""
            figures = short(m.rows) if m.rows is not None else ""
            if m.rows is not None and m.expected_rows:
                figures += f" / {short(m.expected_rows)}"
            href = _query(base, table=d.table, area=d.area, month=m.label)
            cells.append(
                f'<td><a class="cell{sel}" data-month="{m.label}" data-state="{_e(m.state)}" href="{_e(href)}"'
                f' style="background:{bg};color:{fg}" title="{_e(_cell_tip(m))}"><b>{MONTH_NAMES[number - 1]}</b>'
                f"<span>{_e(m.state)}</span><span>{_e(figures)}</span></a></td>")
        rows.append(f'<tr><th class="year">{year}</th>{"".join(cells)}</tr>')
    return (f'<div class="scroll"><table class="cal"><thead><tr><th></th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _task_cell(f: TaskFigures | None) -> str:
    if f is None:
        return '<td class="num muted">–</td>'
    if f.rows > 0 and f.rows_per_s is not None:
        rate = f"{short(f.rows_per_s)} rows/s"
    elif f.bytes_per_s is not None:
        rate = byte_rate(f.bytes_per_s)
    else:
        rate = "–"
    tip = (f"{f.task}: {count(f.rows)} rows, {short(f.bytes)}B in {_seconds(f.seconds)}; peak RSS "
           f"{short(f.peak_rss_mb)} MB; run {f.run_id or '–'} at {_when(f.recorded_at)}")
    return (f'<td class="num" data-task="{_e(f.task)}" title="{_e(tip)}">{_e(rate)}<br>'
            f'<span class="muted small">{_e(_seconds(f.seconds))}</span></td>')


def _validation_cell(d: Dashboard, m: MonthView, base: str) -> str:
    v = m.validation
    if v.status == "passed":
        text = '<span class="ok">passed</span>'
    elif v.status == "failed":
        failed = ", ".join(v.failed)
        text = '<span class="bad">failed</span>' + (f'<div class="err">{_e(failed)}</div>' if failed else "")
    else:
        text = '<span class="muted">not validated</span>'
    if v.validated_at is not None:
        text += f'<div class="muted small">{_e(_when(v.validated_at))}</div>'
    if v.path and d.table and d.area:
        text += f' <a class="docs" href="{_e(docs_href(base, d.table, m.month, d.area, v.path))}">Data Docs</a>'
    return f"<td>{text}</td>"


def months_table(d: Dashboard, base: str) -> str:
    if not d.months:
        return ""
    head = ("<tr><th>Month</th><th>State</th><th>Rows</th><th>Expected</th><th>expver</th><th>Validation</th>"
            + "".join(f"<th>{t}</th>" for t in TASKS) + "<th>Updated</th></tr>")
    body = []
    for m in reversed(d.months):
        bg, fg = _colours(m.state)
        rows_class = "num" if m.rows is None or m.rows == m.expected_rows else "num bad"
        preliminary = (' <span class="badge" style="background:#fef3c7;color:#92400e" title="preliminary ERA5T data,'
                       ' replaced by final data about three months later">ERA5T</span>'
                       if PRELIMINARY in m.expver else "")
        error = f'<div class="err" title="{_e(m.error)}">{_e(m.error[:160])}</div>' if m.error else ""
        sel = ' class="sel"' if m.month == d.selected else ""
        href = _query(base, table=d.table, area=d.area, month=m.label)
        body.append(
            f'<tr{sel} data-month="{m.label}"><td class="nowrap"><a href="{_e(href)}">{m.label}</a></td>'
            f'<td><span class="badge" style="background:{bg};color:{fg}">{_e(m.state)}</span>{error}</td>'
            f'<td class="{rows_class}">{count(m.rows)}</td><td class="num">{count(m.expected_rows)}</td>'
            f"<td>{_e('+'.join(m.expver) or '–')}{preliminary}</td>"
            f"{_validation_cell(d, m, base)}"
            + "".join(_task_cell(m.tasks.get(t)) for t in TASKS)
            + f'<td class="small nowrap">{_e(_when(m.updated_at))}<div class="muted">{_e(m.run_id or "")}</div>'
            "</td></tr>")
    return (f'<div class="scroll"><table class="months"><thead>{head}</thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def render_page(d: Dashboard, base: str = "", json_href: str | None = None) -> str:
    """The whole page. ``base`` is the URL the page is served at (links are built on it)."""
    title = "ERA5 months"
    if d.table is None:
        sub = "No months in the ledger yet: run the era5_monthly DAG or <code>era5etl run-month</code>."
    else:
        grids = sorted({m.grid for m in d.months if m.grid})
        total = sum(m.rows or 0 for m in d.months)
        sub = (f"table <b>{_e(d.table)}</b>, area <b>{_e(d.area or '–')}</b> (N/W/S/E)"
               + (f", grid {_e(', '.join(grids))}°" if grids else "")
               + f" · {len(d.months)} month{'' if len(d.months) == 1 else 's'}, {count(total)} rows")
    selected = d.month(d.selected)
    label = selected.label if selected else (month_text(d.selected) if d.selected else "")
    load = selected.tasks.get("load") if selected else None
    chunks = chunk_chart(d.chunks, load.rows_per_s if load else None, label)
    json_link = f' · <a href="{_e(json_href)}">JSON</a>' if json_href else ""
    generated = f"generated {_when(d.generated_at)}" if d.generated_at else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}{" · " + _e(d.table) if d.table else ""}</title><style>{CSS}</style></head>
<body>
<h1>{_e(title)}</h1>
<p class="sub">{sub}</p>
{_targets(d, base)}
<section id="calendar"><h2>Months by ledger state</h2>{_legend(d) if d.months else ""}{calendar(d, base)}</section>
<section id="charts"><h2>Load rate</h2><div class="charts">
<figure><figcaption>Per chunk, {_e(label or "–")}</figcaption>{chunks}</figure>
<figure><figcaption>Per month</figcaption>{month_rate_chart(d.load_runs, d.selected)}</figure>
</div></section>
<section id="months"><h2>Months</h2>{months_table(d, base)}</section>
<footer>{_e(generated)}{json_link}</footer>
</body></html>
"""
