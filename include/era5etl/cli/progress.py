"""What a long command shows while it works: on a terminal a live display (rich), otherwise the
plain log lines it always wrote (Airflow's task logs, pipes, CI).

The display is fed by what the core already reports: each step's start and end
(``pipeline.steps.run_month``'s ``on_step``), each chunk a load commits (``on_chunk``, rows against
the month's expected rows), and the lines ``db up`` prints while it builds the server image.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn


def on_terminal() -> bool:
    return sys.stderr.isatty()


class MonthDisplay:
    """One line per step of a month's run; the load's line is a bar of rows committed."""

    def __init__(self, progress: Progress | None, expected_rows: int) -> None:
        self._progress = progress
        self._expected = expected_rows
        self._tasks: dict[str, Any] = {}

    def on_step(self, task: str, state: str) -> None:
        """``state``: ``start`` or ``done``. Off a terminal nothing: the log lines say it as before."""
        if self._progress is None:
            return
        if state == "start":
            total = self._expected if task == "load" else None
            label = {"fetch": "fetch (CDS queue and download)"}.get(task, task)
            self._tasks[task] = self._progress.add_task(label, total=total)
        elif task in self._tasks:
            t = self._tasks[task]
            self._progress.update(t, total=self._progress.tasks[t].total or 1,
                                  completed=self._progress.tasks[t].total or 1)
            self._progress.stop_task(t)

    def on_chunk(self, chunk: Any) -> None:
        if self._progress is not None and "load" in self._tasks:
            self._progress.advance(self._tasks["load"], int(chunk.rows))


@contextmanager
def month_display(expected_rows: int, *, enabled: bool | None = None) -> Iterator[MonthDisplay]:
    """A :class:`MonthDisplay`, live on a terminal (``enabled`` None: when stderr is one)."""
    if not (on_terminal() if enabled is None else enabled):
        yield MonthDisplay(None, expected_rows)
        return
    progress = Progress(SpinnerColumn(), TextColumn("{task.description:<32}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=Console(stderr=True), transient=False)
    with progress:
        yield MonthDisplay(progress, expected_rows)


@contextmanager
def status_lines(title: str, *, enabled: bool | None = None) -> Iterator[Callable[[str], None]]:
    """A callback for progress lines: on a terminal a spinner showing the latest line under ``title``
    (each line also printed above it), else each line printed to stderr as it comes."""
    if not (on_terminal() if enabled is None else enabled):
        yield lambda line: print(line, file=sys.stderr, flush=True)
        return
    console = Console(stderr=True)
    with console.status(title) as status:
        def show(line: str) -> None:
            console.print(line, highlight=False)
            status.update(f"{title}: {line}")
        yield show
