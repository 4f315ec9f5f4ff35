"""cli.supervise on real processes: a component that exits is started again after its pause, one that
keeps exiting is given up on, one that may not be restarted stops the watch; the stack's groups are
stopped whatever happens."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator

import pytest

from era5etl.cli.supervise import Restarts, group_alive, leader_alive, stop_groups, supervise


def _spawn(seconds: float) -> int:
    return subprocess.Popen(["sleep", str(seconds)], start_new_session=True).pid


@pytest.fixture
def started() -> Iterator[list[int]]:
    groups: list[int] = []
    yield groups
    stop_groups(groups, grace=2.0)


def test_the_pauses_double_up_to_the_cap_and_the_restarts_run_out() -> None:
    r = Restarts(limit=4, window_s=100.0, first_s=2.0, cap_s=5.0)
    assert [r.delay("scheduler", t) for t in (0, 1, 2, 3)] == [2.0, 4.0, 5.0, 5.0]
    assert r.delay("scheduler", 4) is None and r.delay("triggerer", 4) == 2.0  # each its own
    assert r.delay("scheduler", 102.5) == 4.0  # the starts at 0, 1 and 2 have left the window: 3 is left


def test_an_exited_component_is_started_again(started: list[int]) -> None:
    groups = {"scheduler": _spawn(60), "triggerer": _spawn(60)}
    started.extend(groups.values())
    said: list[str] = []
    first = groups["scheduler"]

    def start(name: str) -> int:
        started.append(_spawn(60))
        return started[-1]

    stop = threading.Event()
    watch = threading.Thread(target=lambda: said.append(repr(supervise(
        groups, start, stop.is_set, Restarts(first_s=0.2), said.append, restartable={"scheduler", "triggerer"},
        poll_s=0.05))))
    watch.start()
    try:
        os.killpg(first, signal.SIGKILL)  # as a component dies when its database goes away
        deadline = time.monotonic() + 10
        while groups["scheduler"] == first and time.monotonic() < deadline:
            time.sleep(0.05)
        assert groups["scheduler"] != first and leader_alive(groups["scheduler"])
        assert not group_alive(first) and leader_alive(groups["triggerer"])
    finally:
        stop.set()
        watch.join(10)
    assert said == ["scheduler exited; starting it again in 0 s (its database may be restarting)",
                    "scheduler started again", "[]"]


def test_a_component_that_keeps_exiting_or_may_not_restart_ends_the_watch(started: list[int]) -> None:
    groups = {"scheduler": _spawn(0.1)}

    def start(name: str) -> int:
        started.append(_spawn(0.1))
        return started[-1]

    said: list[str] = []
    gave_up = supervise(groups, start, lambda: False, Restarts(limit=3, first_s=0.05, cap_s=0.1), said.append,
                        restartable={"scheduler"}, poll_s=0.05)
    assert gave_up == ["scheduler"] and len(started) == 3  # started again three times, then given up
    groups = {"localcds": _spawn(0.1)}
    assert supervise(groups, start, lambda: False, Restarts(), said.append, restartable={"scheduler"},
                     poll_s=0.05) == ["localcds"]
