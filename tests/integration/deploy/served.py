"""A server process of a deploy test's own: started in its own process group, waited for until a URL
answers 200 (failing with its log's tail if it exits or never answers), and its whole group stopped
afterwards, even when it died on its own."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.e2e.apiserver import stop_group


@contextmanager
def served(argv: list[str], ready_url: str, log: Path, what: str, timeout_s: float,
           env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    with open(log, "wb") as out:
        process = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if process.poll() is not None:
                pytest.fail(f"{what} exited ({process.returncode}):\n{log.read_text()[-4000:]}")
            try:
                if httpx.get(ready_url, timeout=10).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"{what} did not answer on {ready_url} within {timeout_s} s:\n{log.read_text()[-4000:]}")
            time.sleep(0.3)
        yield process
    finally:
        stop_group(process)
