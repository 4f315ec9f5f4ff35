"""Progress lines (rate and ETA) logged while a long step runs, its chunks' rates sent to the stats sink."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from types import TracebackType
from typing import Protocol

from era5etl.track.stats import emit, stat_name

log = logging.getLogger(__name__)


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
            emit("gauge", stat_name(self.task, "chunk_rows_per_s"), self.last_chunk_rate, self.tags)

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
