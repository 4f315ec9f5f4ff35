"""Per-step figures: rows, bytes, seconds, rate and peak memory of every task of every run, timed,
written to ``era5_metrics`` and sent to the stats sink (``track.stats``), and one run's read back."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from era5etl.core.months import Month
from era5etl.db import connect
from era5etl.track.stats import emit, peak_rss_mb, stat_name

log = logging.getLogger(__name__)


@dataclass
class StepFigures:
    task: str
    rows: int = 0
    bytes: int = 0
    seconds: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def rows_per_s(self) -> float | None:
        return self.rows / self.seconds if self.seconds > 0 else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "rows": self.rows,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            "rows_per_s": round(self.rows_per_s) if self.rows_per_s is not None else None,
        }



def emit_step(figures: StepFigures, tags: Mapping[str, str]) -> None:
    """One finished step as stats: ``era5.<task>.rows|bytes|rows_per_s|peak_rss_mb`` and its duration."""
    task = figures.task
    emit("incr", stat_name(task, "rows"), figures.rows, tags)
    emit("incr", stat_name(task, "bytes"), figures.bytes, tags)
    emit("timing", stat_name(task, "duration"), figures.seconds, tags)
    if figures.rows_per_s is not None:
        emit("gauge", stat_name(task, "rows_per_s"), figures.rows_per_s, tags)
    emit("gauge", stat_name(task, "peak_rss_mb"), peak_rss_mb(), tags)


@contextmanager
def timed(task: str) -> Iterator[StepFigures]:
    figures = StepFigures(task)
    began = time.perf_counter()
    try:
        yield figures
    finally:
        figures.seconds = time.perf_counter() - began


def record(url: str, *, run_id: str, month: Month, table: str, area: str, figures: StepFigures) -> None:
    with connect(url) as conn, conn.transaction():
        conn.execute(
            "INSERT INTO era5_metrics (run_id, task, month, table_name, area, rows, bytes, seconds,"
            " rows_per_s, peak_rss_mb, detail) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                run_id, figures.task, month.start.date(), table, area, figures.rows, figures.bytes,
                figures.seconds, figures.rows_per_s, peak_rss_mb(), json.dumps(figures.detail, default=str),
            ),
        )
    emit_step(figures, {"table": table, "month": str(month), "area": area})
    rate = f"{figures.rows_per_s:,.0f} rows/s" if figures.rows_per_s else "-"
    log.info("%s %s: %s rows, %s bytes in %.2f s (%s)", month, figures.task, f"{figures.rows:,}",
             f"{figures.bytes:,}", figures.seconds, rate)


def run_figures(url: str, run_id: str, month: Month, table: str) -> list[dict[str, Any]]:
    """One run's recorded figures for a month, task by task in the order they were recorded."""
    with connect(url) as conn:
        rows = conn.execute(
            "SELECT task, rows, bytes, seconds, rows_per_s FROM era5_metrics WHERE run_id = %s"
            " AND month = %s AND table_name = %s ORDER BY id", (run_id, month.start.date(), table)).fetchall()
    return [{"task": task, "rows": n, "bytes": size, "seconds": round(float(secs), 3),
             "rows_per_s": round(float(rate)) if rate else None} for task, n, size, secs, rate in rows]
