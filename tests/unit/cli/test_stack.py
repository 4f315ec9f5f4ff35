"""``python -m era5etl airflow``: what it refuses before starting anything, and down/status with nothing running.

The whole start, a load and the stop run in ``tests/e2e/test_first_start.py``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    return subprocess.run([sys.executable, "-m", "era5etl", "airflow", *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_a_port_in_use_is_refused_before_anything_starts(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = _run("up", "--home", str(tmp_path / "home"), "--port", str(port))
    assert out.returncode == 2, out
    assert out.stderr.strip() == f"error: port {port} is in use: choose another with --port/--cds-port"
    assert not (tmp_path / "home").exists()  # nothing set up, nothing started


def test_a_second_up_on_a_running_home_is_refused(tmp_path: Path) -> None:
    # A state file whose process group is alive: this test's own process (pytest leads no group of
    # its own, so take the group it is in).
    home = tmp_path / "home"
    home.mkdir()
    (home / "era5-stack.json").write_text(json.dumps({"url": "http://127.0.0.1:1", "supervisor": os.getpid(),
                                                      "groups": {"scheduler": os.getpgid(0)}}))
    out = _run("up", "--home", str(home))
    assert out.returncode == 2 and "already running at http://127.0.0.1:1" in out.stderr, out
    assert _run("status", "--home", str(home)).stdout.strip().startswith("running: http://127.0.0.1:1")


def test_down_and_status_with_nothing_running(tmp_path: Path) -> None:
    down = _run("down", "--home", str(tmp_path))
    assert (down.returncode, down.stdout.strip()) == (0, "not running")
    status = _run("status", "--home", str(tmp_path))
    assert (status.returncode, status.stdout.strip()) == (3, "not running")
