"""Counters, gauges and timings beside the database: an optional stats sink, set by the Airflow side
(``era5etl.airflow.stats.install``) so the core's figures reach StatsD or OpenTelemetry when Airflow's
metrics are enabled, without the core importing Airflow."""

from __future__ import annotations

import logging
import re
import resource
import sys
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping


log = logging.getLogger(__name__)

STAT_PREFIX = "era5"


def peak_rss_mb() -> float:
    """This process's peak resident set; one Airflow task is one process, so it is the task's."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / 1024 / 1024


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


def emit(kind: str, name: str, value: float, tags: Mapping[str, str]) -> None:
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


