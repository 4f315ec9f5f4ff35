"""Per-step figures: rows, bytes, seconds, rate and peak memory, written for every task of every run.

Besides the ``era5_metrics`` table, figures go to two other places: progress lines (rate and ETA)
logged while a long step runs, and an optional stats sink. The core never imports Airflow; the
Airflow side (``era5etl.airflow.stats.install``) sets the sink so the same figures reach StatsD or
OpenTelemetry when Airflow's metrics are enabled.

The SQL on ``era5_metrics`` lives here, reads included: the dashboard (``era5etl.report``) reads
the figures back through :func:`latest_figures`, :func:`load_runs` and :func:`load_chunks`, on a
connection it passes in.
"""

from __future__ import annotations

import json
import logging
import re
import resource
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, timedelta
from types import TracebackType
from typing import Any, Protocol

import psycopg
from psycopg.rows import dict_row

from era5etl.core.months import Month
from era5etl.db import connect

log = logging.getLogger(__name__)

STAT_PREFIX = "era5"


def peak_rss_mb() -> float:
    """This process's peak resident set; one Airflow task is one process, so it is the task's."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / 1024 / 1024


# --- stats sink ----------------------------------------------------------------------------------


class StatsSink(Protocol):
    """Where counters, gauges and timings go besides the database (StatsD/OTel through Airflow)."""

    def incr(self, name: str, count: int, tags: Mapping[str, str]) -> None: ...

    def gauge(self, name: str, value: float, tags: Mapping[str, str]) -> None: ...

    def timing(self, name: str, seconds: float, tags: Mapping[str, str]) -> None: ...


_sink: StatsSink | None = None


def set_stats_sink(sink: StatsSink | None) -> StatsSink | None:
    """Install ``sink`` (None: none); returns the one it replaces so a caller can put it back."""
    global _sink
    previous, _sink = _sink, sink
    return previous


def stats_sink() -> StatsSink | None:
    return _sink


_STAT_CHARS = re.compile(r"[^a-zA-Z0-9_.-]")


def stat_name(*parts: str) -> str:
    """``era5.<parts>`` with only the characters StatsD and OTel accept in a metric name."""
    return ".".join(_STAT_CHARS.sub("_", p) for p in (STAT_PREFIX, *parts) if p)


def _emit(kind: str, name: str, value: float, tags: Mapping[str, str]) -> None:
    sink = _sink
    if sink is None:
        return
    try:
        if kind == "incr":
            sink.incr(name, int(value), tags)
        elif kind == "gauge":
            sink.gauge(name, value, tags)
        else:
            sink.timing(name, value, tags)
    except Exception:
        # Metrics describe the work; a broken exporter must never fail the work itself.
        log.warning("stats sink failed on %s %s", kind, name, exc_info=True)


def emit_step(figures: StepFigures, tags: Mapping[str, str]) -> None:
    """One finished step as stats: ``era5.<task>.rows|bytes|rows_per_s|peak_rss_mb`` and its duration."""
    task = figures.task
    _emit("incr", stat_name(task, "rows"), figures.rows, tags)
    _emit("incr", stat_name(task, "bytes"), figures.bytes, tags)
    _emit("timing", stat_name(task, "duration"), figures.seconds, tags)
    if figures.rows_per_s is not None:
        _emit("gauge", stat_name(task, "rows_per_s"), figures.rows_per_s, tags)
    _emit("gauge", stat_name(task, "peak_rss_mb"), peak_rss_mb(), tags)


# --- step figures --------------------------------------------------------------------------------


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



# --- reads for the dashboard ---------------------------------------------------------------------


def latest_figures(conn: psycopg.Connection[Any], table: str, area: str) -> list[dict[str, Any]]:
    """The latest row of each (month, task) of one table and area; a load's ``detail`` without its chunk list.

    For ``fetch``, the latest attempt that downloaded: a retry or rerun that found the complete
    download already staged records its bytes in no time ("80.6 MB/s in 0.00 s"), which says nothing
    of the transfer. Only when no attempt downloaded (the month was staged elsewhere) is that shown.
    """
    # The load's chunk list is the one large detail; load_chunks reads it for one month only.
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "SELECT DISTINCT ON (month, task) month, task, run_id, rows, bytes, seconds, rows_per_s, peak_rss_mb,"
            " recorded_at, CASE WHEN task = 'load' THEN detail - 'chunks' ELSE detail END AS detail"
            " FROM era5_metrics WHERE table_name = %(table)s AND area = %(area)s"
            " ORDER BY month, task, coalesce(task = 'fetch' AND detail ->> 'reused' = 'true', false),"
            " recorded_at DESC, id DESC", {"table": table, "area": area}).fetchall()


def load_runs(conn: psycopg.Connection[Any], table: str, area: str) -> list[dict[str, Any]]:
    """Every recorded load of one table and area, oldest first: month, rows, seconds, rate, when, run."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "SELECT month, rows, seconds, rows_per_s, recorded_at, run_id FROM era5_metrics"
            " WHERE table_name = %(table)s AND area = %(area)s AND task = 'load' ORDER BY recorded_at, id",
            {"table": table, "area": area}).fetchall()


def load_chunks(conn: psycopg.Connection[Any], table: str, area: str, month: date) -> list[Any]:
    """The ``detail.chunks`` list of a month's latest load as stored (empty if none was recorded)."""
    row = conn.execute(
        "SELECT detail -> 'chunks' FROM era5_metrics WHERE table_name = %(table)s AND area = %(area)s"
        " AND task = 'load' AND month = %(month)s ORDER BY recorded_at DESC, id DESC LIMIT 1",
        {"table": table, "area": area, "month": month}).fetchone()
    return row[0] if row is not None and isinstance(row[0], list) else []

def task_seconds(conn: psycopg.Connection[Any], table: str, area: str, run_ids: list[str]) -> dict[str, float]:
    """Seconds each task recorded over the given runs of one table and area (the runs' own work)."""
    rows = conn.execute(
        "SELECT task, sum(seconds) FROM era5_metrics WHERE table_name = %s AND area = %s AND run_id = ANY(%s)"
        " GROUP BY task ORDER BY min(id)", (table, area, run_ids)).fetchall()
    return {str(task): float(seconds) for task, seconds in rows}


# --- progress ------------------------------------------------------------------------------------


class ChunkLike(Protocol):
    """What a progress reporter needs of a finished piece of work (``load.ChunkResult`` is one)."""

    @property
    def rows(self) -> int: ...

    @property
    def bytes(self) -> int: ...

    @property
    def seconds(self) -> float: ...


@dataclass(frozen=True)
class Chunk:
    """A finished piece of work for steps that have no ChunkResult of their own (validation's days)."""

    rows: int
    bytes: int
    seconds: float


def _clock_text(seconds: float) -> str:
    return str(timedelta(seconds=round(max(seconds, 0.0))))


class Progress:
    """Progress lines for a long step: done/total, overall and last-chunk rate, ETA.

    Called once per finished chunk (it is an ``on_chunk`` callback), it logs at most every
    ``every_s`` seconds and always on the chunk that completes the total. Used as a context manager
    it also logs from a heartbeat thread while no chunk finishes, so a task log never goes quiet
    for longer than ``every_s`` even when one chunk takes minutes; leaving the block logs a summary.
    Each chunk's rate is also sent to the stats sink as ``era5.<task>.chunk_rows_per_s``.
    """

    def __init__(
        self, total_rows: int, label: str, every_s: float = 5.0, *, task: str = "load",
        tags: Mapping[str, str] | None = None, logger: logging.Logger | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total_rows = total_rows
        self.label = label
        self.every_s = every_s
        self.task = task
        self.tags = dict(tags or {})
        self.log = logger or log
        self.clock = clock
        self.rows = 0
        self.bytes = 0
        self.chunks = 0
        self.last_chunk_rate: float | None = None
        self.started = clock()
        self._last_line: float | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def elapsed(self) -> float:
        return self.clock() - self.started

    @property
    def rate(self) -> float:
        """Rows per second since the start, so it also falls while a slow chunk is still running."""
        elapsed = self.elapsed
        return self.rows / elapsed if elapsed > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        remaining = max(self.total_rows - self.rows, 0)
        if remaining == 0:
            return 0.0
        rate = self.rate
        return remaining / rate if rate > 0 else None

    def line(self) -> str:
        pct = f" ({100 * self.rows / self.total_rows:.1f}%)" if self.total_rows > 0 else ""
        last = f", last chunk {self.last_chunk_rate:,.0f} rows/s" if self.last_chunk_rate is not None else ""
        eta = self.eta_s
        return (f"{self.label}: {self.rows:,} of {self.total_rows:,} rows{pct} in {_clock_text(self.elapsed)}, "
                f"{self.rate:,.0f} rows/s{last}, ETA {_clock_text(eta) if eta is not None else 'unknown'}")

    def __call__(self, chunk: ChunkLike) -> None:
        with self._lock:
            self.rows += chunk.rows
            self.bytes += chunk.bytes
            self.chunks += 1
            self.last_chunk_rate = chunk.rows / chunk.seconds if chunk.seconds > 0 else None
            due = self._last_line is None or self.clock() - self._last_line >= self.every_s
            if due or self.rows >= self.total_rows:
                self._log_line()
        if self.last_chunk_rate is not None:
            _emit("gauge", stat_name(self.task, "chunk_rows_per_s"), self.last_chunk_rate, self.tags)

    def _log_line(self) -> None:
        self._last_line = self.clock()
        self.log.info("%s", self.line())

    def heartbeat(self) -> None:
        """Log a line if none was logged for ``every_s`` (what the background thread calls)."""
        with self._lock:
            if self._last_line is None or self.clock() - self._last_line >= self.every_s:
                self._log_line()

    def _beat(self) -> None:
        while not self._stop.wait(self.every_s):
            self.heartbeat()

    def __enter__(self) -> Progress:
        self._stop.clear()
        self._thread = threading.Thread(target=self._beat, name=f"progress {self.label}", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._lock:
            self.log.info("%s: %s after %s chunk(s), %s rows in %s (%s rows/s)", self.label,
                          "stopped" if exc_type else "done", self.chunks, f"{self.rows:,}",
                          _clock_text(self.elapsed), f"{self.rate:,.0f}")


def progress_reporter(total_rows: int, label: str, every_s: float = 5.0, *, task: str = "load",
                      tags: Mapping[str, str] | None = None) -> Progress:
    """An ``on_chunk`` callback that logs rate and ETA; ``with`` it to also log between chunks."""
    return Progress(total_rows, label, every_s, task=task, tags=tags)


def run_figures(url: str, run_id: str, month: Month, table: str) -> list[dict[str, Any]]:
    """One run's recorded figures for a month, task by task in the order they were recorded."""
    with connect(url) as conn:
        rows = conn.execute(
            "SELECT task, rows, bytes, seconds, rows_per_s FROM era5_metrics WHERE run_id = %s"
            " AND month = %s AND table_name = %s ORDER BY id", (run_id, month.start.date(), table)).fetchall()
    return [{"task": task, "rows": n, "bytes": size, "seconds": round(float(secs), 3),
             "rows_per_s": round(float(rate)) if rate else None} for task, n, size, secs, rate in rows]
