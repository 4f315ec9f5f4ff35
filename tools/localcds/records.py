"""What the server saw: every HTTP exchange and every asset transfer, kept for tests to inspect."""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class CallRecord:
    """One HTTP exchange with the server (status 0: the connection was dropped unanswered)."""

    method: str
    path: str
    status: int


@dataclass(frozen=True)
class DownloadRecord:
    """One request for an asset, kept so tests can see resumes (Range) and cut transfers."""

    method: str
    path: str
    range: str | None
    status: int
    bytes_sent: int
    truncated: bool = False


class Records:
    """The records of :class:`~localcds.server.LocalCDS` (a mixin; the server holds the lists)."""

    calls: list[CallRecord]
    downloads: list[DownloadRecord]
    _lock: threading.RLock

    def record_call(self, method: str, path: str, status: int) -> None:
        with self._lock:
            self.calls.append(CallRecord(method, path, status))

    def record_download(self, record: DownloadRecord) -> None:
        with self._lock:
            self.downloads.append(record)
