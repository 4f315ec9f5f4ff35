"""Progress lines, the stats sink and its Airflow side, without a database."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from era5etl.load import ChunkResult
from era5etl.track import metrics
from era5etl.track.metrics import Chunk, Progress, StepFigures


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class RecordingSink:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, float, dict[str, str]]] = []

    def incr(self, name: str, count: int, tags: Mapping[str, str]) -> None:
        self.calls.append(("incr", name, count, dict(tags)))

    def gauge(self, name: str, value: float, tags: Mapping[str, str]) -> None:
        self.calls.append(("gauge", name, value, dict(tags)))

    def timing(self, name: str, seconds: float, tags: Mapping[str, str]) -> None:
        self.calls.append(("timing", name, seconds, dict(tags)))


@pytest.fixture
def sink() -> Iterator[RecordingSink]:
    recording = RecordingSink()
    previous = metrics.set_stats_sink(recording)
    yield recording
    metrics.set_stats_sink(previous)


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "era5etl.track.progress"]


def test_progress_lines_carry_rate_and_eta_and_are_throttled(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="era5etl.track.progress")
    clock = FakeClock()
    progress = Progress(1000, "load 2024-01", every_s=5.0, clock=clock)
    clock.now += 2
    progress(ChunkResult("2024-01-01", rows=200, deleted=0, bytes=10, seconds=2.0))  # the first chunk: logged
    clock.now += 2
    progress(ChunkResult("2024-01-02", rows=200, deleted=0, bytes=10, seconds=2.0))  # 2 s later: quiet
    clock.now += 4
    progress(ChunkResult("2024-01-03", rows=200, deleted=0, bytes=10, seconds=4.0))  # 6 s later: logged
    lines = _lines(caplog)
    assert lines == [
        "load 2024-01: 200 of 1,000 rows (20.0%) in 0:00:02, 100 rows/s, last chunk 100 rows/s, ETA 0:00:08",
        "load 2024-01: 600 of 1,000 rows (60.0%) in 0:00:08, 75 rows/s, last chunk 50 rows/s, ETA 0:00:05",
    ]
    clock.now += 1
    progress(Chunk(rows=400, bytes=10, seconds=1.0))  # completes the total: always logged
    assert _lines(caplog)[-1].startswith("load 2024-01: 1,000 of 1,000 rows (100.0%)")
    assert _lines(caplog)[-1].endswith("ETA 0:00:00")


def test_heartbeat_logs_while_a_chunk_is_slow(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="era5etl.track.progress")
    clock = FakeClock()
    progress = Progress(1000, "load", every_s=5.0, clock=clock)
    progress(Chunk(rows=100, bytes=0, seconds=1.0))
    clock.now += 3
    progress.heartbeat()  # only 3 s since the last line
    assert len(_lines(caplog)) == 1
    clock.now += 7
    progress.heartbeat()  # 10 s in and no chunk: the rate falls, the ETA still shows
    assert _lines(caplog)[-1] == ("load: 100 of 1,000 rows (10.0%) in 0:00:10, 10 rows/s, last chunk 100 rows/s, "
                                  "ETA 0:01:30")


def test_progress_as_context_logs_between_chunks_and_a_summary(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="era5etl.track.progress")
    with metrics.progress_reporter(10, "validate", every_s=0.05) as progress:
        time.sleep(0.3)  # no chunk at all: the heartbeat thread still speaks
        progress(Chunk(rows=10, bytes=0, seconds=0.3))
    lines = _lines(caplog)
    assert any(line.startswith("validate: 0 of 10 rows") and "ETA unknown" in line for line in lines)
    assert lines[-1].startswith("validate: done after 1 chunk(s), 10 rows in")


def test_chunk_rates_and_step_figures_reach_the_sink(sink: RecordingSink) -> None:
    progress = Progress(100, "load", task="load", tags={"table": "weather"})
    progress(Chunk(rows=50, bytes=0, seconds=0.5))
    assert sink.calls == [("gauge", "era5.load.chunk_rows_per_s", 100.0, {"table": "weather"})]

    sink.calls.clear()
    metrics.emit_step(StepFigures("load", rows=1000, bytes=4096, seconds=2.0), {"table": "weather"})
    by_name = {name: (kind, value) for kind, name, value, _ in sink.calls}
    assert by_name["era5.load.rows"] == ("incr", 1000)
    assert by_name["era5.load.bytes"] == ("incr", 4096)
    assert by_name["era5.load.duration"] == ("timing", 2.0)
    assert by_name["era5.load.rows_per_s"] == ("gauge", 500.0)
    assert by_name["era5.load.peak_rss_mb"][1] > 0


def test_a_broken_sink_never_fails_the_work(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(RecordingSink):
        def gauge(self, name: str, value: float, tags: Mapping[str, str]) -> None:
            raise OSError("statsd unreachable")

    previous = metrics.set_stats_sink(Broken())
    try:
        Progress(10, "load")(Chunk(rows=5, bytes=0, seconds=1.0))
    finally:
        metrics.set_stats_sink(previous)
    assert any("stats sink failed" in r.getMessage() for r in caplog.records)


def test_stat_names_keep_only_what_statsd_accepts() -> None:
    assert metrics.stat_name("load", "rows/s") == "era5.load.rows_s"


def test_airflow_sink_writes_through_airflows_stats(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.sdk._shared.observability.metrics import stats as airflow_stats

    from era5etl.airflow import stats as era5_stats

    class Backend:
        def __init__(self) -> None:
            self.calls: list[tuple[str, str, Any, dict[str, Any]]] = []

        def incr(self, stat: str, count: int = 1, **kw: Any) -> None:
            self.calls.append(("incr", stat, count, kw.get("tags", {})))

        def gauge(self, stat: str, value: float, **kw: Any) -> None:
            self.calls.append(("gauge", stat, value, kw.get("tags", {})))

        def timing(self, stat: str, dt: Any, **kw: Any) -> None:
            self.calls.append(("timing", stat, dt, kw.get("tags", {})))

    backend = Backend()
    # What the task runner's stats.initialize() would have set up from [metrics].
    monkeypatch.setattr(airflow_stats, "_backend", backend)
    monkeypatch.setattr(airflow_stats, "_export_legacy_names", False)
    previous = metrics.stats_sink()
    try:
        era5_stats.install()
        era5_stats.install()  # idempotent
        assert isinstance(metrics.stats_sink(), era5_stats.AirflowStats)
        metrics.emit_step(StepFigures("validate", rows=10, bytes=1, seconds=1.5), {"table": "weather"})
    finally:
        metrics.set_stats_sink(previous)
    timing = [c for c in backend.calls if c[0] == "timing"]
    assert [c[1] for c in timing] == ["era5.validate.duration"]
    assert timing[0][2].total_seconds() == 1.5 and timing[0][3] == {"table": "weather"}
    assert ("incr", "era5.validate.rows", 10, {"table": "weather"}) in backend.calls
