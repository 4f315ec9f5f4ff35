"""The local server's start clears a ``postmaster.pid`` left by a server that died, also when its PID now
belongs to a process of another root (chroots share the host's PIDs: found when a checkout's server
had died and another checkout's server had been given its PID, and the start was refused)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from era5etl.db.local import pid_file_is_stale


def _pid_file(tmp_path: Path, pid: int) -> Path:
    path = tmp_path / "postmaster.pid"
    path.write_text(f"{pid}\n/var/lib/era5/pgdata\n1795763668\n55223\n")
    return path


def test_a_live_process_of_the_same_root_keeps_the_file(tmp_path: Path) -> None:
    assert not pid_file_is_stale(_pid_file(tmp_path, os.getpid()), Path("/"))


def test_a_live_process_of_another_root_does_not(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    assert pid_file_is_stale(_pid_file(tmp_path, os.getpid()), root)


def test_a_process_that_is_gone_does_not(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    assert pid_file_is_stale(_pid_file(tmp_path, int(done.stdout)), Path("/"))


def test_no_file_or_an_unreadable_one_is_left_to_the_server(tmp_path: Path) -> None:
    assert not pid_file_is_stale(tmp_path / "postmaster.pid", Path("/"))
    (tmp_path / "postmaster.pid").write_text("")
    assert not pid_file_is_stale(tmp_path / "postmaster.pid", Path("/"))
