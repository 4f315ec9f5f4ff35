"""A small tmpfs mounted for one test: a disk that fills (the full-disk tests, unit and integration)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_tmpfs(where: Path, size: str) -> Iterator[Path]:
    """``where`` (made here) as a tmpfs of ``size`` (mount's form: 64k) until the block ends."""
    if os.geteuid() != 0:
        pytest.fail("mounting a small tmpfs needs root (the suite runs as root, like the local server)")
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)
