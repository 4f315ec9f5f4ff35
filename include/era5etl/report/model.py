"""The dashboard's data model: what the page shows as frozen dataclasses, and :func:`build` from query rows.

Pure: rows in, a :class:`Dashboard` out; reading the rows is ``report.data``'s concern.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from era5etl.core.errors import InputError
from era5etl.core.months import Month
from era5etl.fetch.retention import StagingUsage


class ReportError(InputError):
    """A request the dashboard cannot answer as asked (a malformed month, say)."""


def parse_month(text: str) -> date:
    """``YYYY-MM`` as the first day of that month (``core.months.Month``'s rules); a page error otherwise."""
    try:
        return Month.parse(text).start.date()
    except InputError as exc:
        raise ReportError(str(exc)) from None


def month_text(month: date) -> str:
    return str(Month(month.year, month.month))


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

    @property
    def reused(self) -> bool:
        """A fetch that found the month's complete download staged already: it transferred nothing."""
        return self.task == "fetch" and self.detail.get("reused") is True

    def shown_over(self, other: TaskFigures) -> bool:
        """Whether the page shows these figures rather than ``other``'s (the same task and month): the
        later ones, except that a fetch which reused a download never hides the one that downloaded."""
        if self.reused != other.reused:
            return other.reused
        oldest = datetime.min.replace(tzinfo=UTC)
        return (self.recorded_at or oldest) >= (other.recorded_at or oldest)


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
class ValidationView:
    """A month's validation verdict as the page shows it (not ``era5etl.validate.Validation``, the check run)."""

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
    def validation(self) -> ValidationView:
        """The month's verdict: the ledger's when it records one, else what the figures and state imply."""
        if self.validated_at is not None and self.validation_failed is not None:
            status = "failed" if self.validation_failed else "passed"
            return ValidationView(status, self.validation_failed, self.validated_at, self.validation_path)
        figures, load = self.tasks.get("validate"), self.tasks.get("load")
        # A validation recorded before the latest load judged data that has since been replaced.
        current = figures is not None and (
            load is None or figures.recorded_at is None or load.recorded_at is None
            or figures.recorded_at >= load.recorded_at)
        if figures is not None and current and "success" in figures.detail:
            failed = tuple(str(f) for f in figures.detail.get("failed") or ())
            return ValidationView("passed" if figures.detail["success"] else "failed", failed,
                                  figures.recorded_at, self.validation_path)
        if self.state == "validated":
            return ValidationView("passed", (), None, self.validation_path)
        if self.state == "failed" and (self.error or "").startswith("validate"):
            return ValidationView("failed", (), None, self.validation_path)
        return ValidationView("none", (), None, self.validation_path)


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
    staging: StagingUsage | None = None  # what staging holds now, for every table (staging is by request)

    def month(self, month: date | None) -> MonthView | None:
        return next((m for m in self.months if m.month == month), None)


def build(
    *, table: str | None, area: str | None, month_rows: Iterable[Mapping[str, Any]],
    task_rows: Iterable[Mapping[str, Any]] = (), load_rows: Iterable[Mapping[str, Any]] = (),
    chunk_details: Iterable[Mapping[str, Any]] = (), selected: date | None = None,
    targets: Sequence[Target] = (), generated_at: datetime | None = None, staging: StagingUsage | None = None,
) -> Dashboard:
    """The dashboard from rows shaped like the queries' (``load_dashboard`` calls this; so do the unit tests).

    ``task_rows`` are the latest era5_metrics row per month and task (for fetch, the latest that
    downloaded: :meth:`TaskFigures.shown_over`); ``load_rows`` every load of
    the table and area; ``chunk_details`` the ``detail.chunks`` of the selected month's latest load.
    With no ``selected`` month, the latest month with a recorded load is chosen.
    """
    tasks: dict[date, dict[str, TaskFigures]] = {}
    for row in task_rows:
        figures = TaskFigures.from_row(row)
        known = tasks.setdefault(row["month"], {}).get(figures.task)
        if known is None or figures.shown_over(known):
            tasks[row["month"]][figures.task] = figures
    months = sorted((MonthView.from_row(r, tasks.get(r["month"])) for r in month_rows), key=lambda m: m.month)
    runs = sorted((LoadRun.from_row(r) for r in load_rows),
                  key=lambda r: (r.month, r.recorded_at or datetime.min.replace(tzinfo=UTC)))
    if selected is None:
        loaded = [m.month for m in months if "load" in m.tasks]
        selected = max(loaded) if loaded else (months[-1].month if months else None)
    return Dashboard(table=table, area=area, months=months, selected=selected,
                     chunks=[Chunk.from_detail(c) for c in chunk_details], load_runs=runs,
                     targets=targets, generated_at=generated_at, staging=staging)
