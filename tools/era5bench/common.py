"""What every part of the bench shares: its error and its progress messages (stderr)."""

from __future__ import annotations

import sys


class BenchError(RuntimeError):
    """The benchmark could not measure what it set out to (a table that does not hold what was sent)."""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
