"""Fault injection: the faults a test can aim at an endpoint, and the server's switches that arm them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

FAULT_PLACES = ("submit", "status", "results", "asset", "job")
FAULT_KINDS: dict[str, tuple[str, ...]] = {
    # An HTTP error (``status``, optional ``retry_after``), or the connection closed with no answer.
    "submit": ("status", "drop", "drop_after"),  # drop_after: the job IS created, the answer is lost
    "status": ("status", "drop"),
    "results": ("status", "drop", "expire"),  # expire: the job's results leave the cache for good
    "asset": ("status", "drop", "truncate", "corrupt"),  # corrupt: right size, some bytes flipped
    # At job creation: "queue" (``seconds`` in the queue), "fail" (``message``), "reject",
    # "zero_byte" (an empty product), "garbage" (a product that is neither NetCDF nor ZIP).
    "job": ("queue", "fail", "reject", "zero_byte", "garbage"),
}


@dataclass
class Fault:
    """One injected fault: where it strikes, what it does, for which requests, how many times.

    ``match`` sees the request's inputs (the submitted ones, or those of the job a call is about);
    ``times`` None strikes every matching call. ``hits`` counts the calls it struck.
    """

    where: str
    kind: str = "status"
    status: int = 500
    retry_after: float | None = None
    times: int | None = 1
    match: Callable[[dict[str, Any]], bool] | None = None
    seconds: float = 0.0
    message: str | None = None
    hits: int = 0

    def __post_init__(self) -> None:
        if self.where not in FAULT_PLACES:
            raise ValueError(f"where must be one of {FAULT_PLACES}, not {self.where!r}")
        if self.kind not in FAULT_KINDS[self.where]:
            raise ValueError(f"a fault at {self.where!r} is one of {FAULT_KINDS[self.where]}, not {self.kind!r}")

    def applies(self, inputs: dict[str, Any] | None) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        return self.match is None or (inputs is not None and bool(self.match(inputs)))


class FaultSwitches:
    """The fault switches of :class:`~localcds.server.LocalCDS` (a mixin; the server holds the state)."""

    faults: list[Fault]
    truncate_downloads: int
    _lock: threading.RLock

    def inject(
        self, where: str, kind: str = "status", *, status: int = 500, retry_after: float | None = None,
        times: int | None = 1, match: Callable[[dict[str, Any]], bool] | None = None, seconds: float = 0.0,
        message: str | None = None,
    ) -> Fault:
        """Arm a fault (see :data:`FAULT_KINDS`); returns it, so a test can read its ``hits``."""
        fault = Fault(where, kind, status=status, retry_after=retry_after, times=times, match=match,
                      seconds=seconds, message=message)
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        with self._lock:
            self.faults.clear()

    def take_fault(self, where: str, inputs: dict[str, Any] | None) -> Fault | None:
        """The first armed fault for this call, counted as struck; None when the call goes through."""
        with self._lock:
            for fault in self.faults:
                if fault.where == where and fault.applies(inputs):
                    fault.hits += 1
                    return fault
        return None

    def take_truncation(self) -> bool:
        with self._lock:
            if self.truncate_downloads > 0:
                self.truncate_downloads -= 1
                return True
            return False
