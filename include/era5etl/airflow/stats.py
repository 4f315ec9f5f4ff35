"""The pipeline's figures as Airflow metrics: StatsD or OpenTelemetry, whichever Airflow has enabled.

``install()`` points the core's stats sink (``era5etl.track.metrics``) at Airflow's stats module. In a
task process Airflow has already configured that module from ``[metrics]`` (statsd_on / otel_on);
when neither is on it is a no-op logger, so installing costs nothing. Names are ``era5.<task>.<figure>``
(Airflow adds its own prefix); table, month and area go as tags, which OTel keeps as attributes and
plain StatsD drops.
"""

# Imports inside functions: the DAG files import this package at every parse, and the core (numpy,
# psycopg, the pipeline) loads only in a task or a trigger's thread (Airflow's best practice on top-
# level code).

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

from era5etl.track import metrics


class AirflowStats:
    """A ``metrics.StatsSink`` writing through ``airflow.sdk.observability.stats``."""

    def __init__(self) -> None:
        # Imported here, not at module level: the DAG file imports this package while parsing.
        from airflow.sdk.observability import stats

        self._stats = stats

    def incr(self, name: str, count: int, tags: Mapping[str, str]) -> None:
        self._stats.incr(name, count, tags=dict(tags))

    def gauge(self, name: str, value: float, tags: Mapping[str, str]) -> None:
        self._stats.gauge(name, value, tags=dict(tags))

    def timing(self, name: str, seconds: float, tags: Mapping[str, str]) -> None:
        # A timedelta, not the float: both backends read a bare number as milliseconds.
        self._stats.timing(name, timedelta(seconds=seconds), tags=dict(tags))


def install() -> None:
    """Send the core's figures to Airflow's metrics from now on in this process (idempotent)."""
    if not isinstance(metrics.stats_sink(), AirflowStats):
        metrics.set_stats_sink(AirflowStats())
