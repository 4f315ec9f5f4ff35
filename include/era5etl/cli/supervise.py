"""Process groups of ``airflow up``: started components watched, and one that exits started again.

Airflow's components exit when their metadata database goes away (a restart of the local server, a
``kill -9`` of its postmaster): under systemd or Kubernetes a supervisor starts them again, and
``airflow up`` is this checkout's supervisor. A component whose process exits is started again after
a pause that doubles from :attr:`Restarts.first_s` up to :attr:`Restarts.cap_s` (a database still
down makes it exit at once: the pauses keep that from spinning); one that exits more than
:attr:`Restarts.limit` times within :attr:`Restarts.window_s` seconds is given up on, and the stack
stops with its name, as it did at the first exit before.

Spawns and signals processes only: nothing here imports Airflow.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Container
from dataclasses import dataclass, field


@dataclass
class Restarts:
    """How often, and after how long, an exited component is started again."""

    limit: int = 10
    window_s: float = 600.0
    first_s: float = 2.0
    cap_s: float = 30.0
    _starts: dict[str, list[float]] = field(default_factory=dict)

    def delay(self, name: str, now: float) -> float | None:
        """The pause before ``name`` is started again, or None when it has used up its restarts."""
        recent = [t for t in self._starts.get(name, []) if now - t < self.window_s]
        if len(recent) >= self.limit:
            return None
        recent.append(now)
        self._starts[name] = recent
        return float(min(self.first_s * 2.0 ** (len(recent) - 1), self.cap_s))


def supervise(groups: dict[str, int], start: Callable[[str], int], stopping: Callable[[], bool],
              restarts: Restarts, say: Callable[[str], None], restartable: Container[str] = (),
              on_change: Callable[[], None] = lambda: None, poll_s: float = 0.5) -> list[str]:
    """Watch ``groups`` (component -> its process group, led by our child) until ``stopping()``
    (returns []) or until a component exits that is not ``restartable`` or has used up its restarts
    (returns its name). An exited component's group is stopped (what it left behind with it), and
    ``start(name)`` makes its new group after the pause; ``on_change`` is told of every new group."""
    due: dict[str, float] = {}
    while not stopping():
        now = time.monotonic()
        for name, group in list(groups.items()):
            if name in due:
                if now >= due[name]:
                    del due[name]
                    groups[name] = start(name)
                    on_change()
                    say(f"{name} started again")
                continue
            if leader_alive(group):
                continue
            stop_groups([group], grace=5.0)
            delay = restarts.delay(name, now) if name in restartable else None
            if delay is None:
                return [name]
            say(f"{name} exited; starting it again in {delay:.0f} s (its database may be restarting)")
            due[name] = now + delay
        time.sleep(poll_s)
    return []


def leader_alive(group: int) -> bool:
    """Whether the process leading ``group`` runs; for a group another process started (not our
    child), whether any process of the group does."""
    try:
        done, _ = os.waitpid(group, os.WNOHANG)
    except ChildProcessError:
        return group_alive(group)
    return done == 0


def group_alive(group: int) -> bool:
    """Whether any process of the group runs."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(group, os.WNOHANG)  # a leader that is our exited child would otherwise count
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_groups(groups: list[int], grace: float = 20.0) -> None:
    """SIGTERM every group at once, then SIGKILL whatever of them is left after ``grace`` seconds."""
    for g in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(g, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(group_alive(g) for g in groups):
        time.sleep(0.2)
    for g in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(g, signal.SIGKILL)
    for g in groups:  # reap our own children so none stays a zombie
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(g, os.WNOHANG)
