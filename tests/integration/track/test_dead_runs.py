"""The ledger tells the truth after a run dies mid-load: the month reads ``failed``, not ``loading``.

Issue 31's reproduction: ``run-month 2023-03 --area 40/0/0/40 --table probe_fault --local-cds``, wait
for ``loading``, then ``db down && db up``: ``status`` kept showing ``loading`` until a rerun. Here the
same with a smaller area, and with the run's process killed outright (no handler of its own runs): the
next ``status`` finds no live run holding the month (track.liveness) and reads it ``failed``; while the
run is alive, ``status`` leaves it ``loading``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from era5etl.db import connect

from ..helpers import cli, forget

MONTH, AREA = "2023-03", "50/0/25/30"  # 101 x 121 points, 9.1M rows: seconds of loading on this machine


@pytest.fixture
def fault_table(db_url: str) -> Iterator[str]:
    name = f"probe_fault_{uuid.uuid4().hex[:8]}"
    yield name
    forget(db_url, name)


def _state(url: str, table: str) -> str | None:
    with connect(url) as conn:
        row = conn.execute("SELECT state FROM era5_months WHERE table_name = %s", (table,)).fetchone()
    return None if row is None else str(row[0])


def _start(table: str, staging: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "ERA5_STAGING_DIR": str(staging)}
    return subprocess.Popen([sys.executable, "-m", "era5etl", "run-month", MONTH, "--area", AREA, "--table", table,
                             "--local-cds"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _wait_loading(url: str, table: str, proc: subprocess.Popen[str], state: str = "loading") -> None:
    deadline = time.monotonic() + 300
    while _state(url, table) != state:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"the run never reached {state}"
        time.sleep(0.02)


def _status(table: str) -> dict[str, Any]:
    code, out, err, obj = cli("status", "--table", table, "--json")
    assert code == 0 and obj is not None, out + err
    (month,) = obj["months"]
    return dict(month)


def test_a_killed_run_reads_failed_and_a_live_one_loading(db_url: str, fault_table: str, tmp_path: Path) -> None:
    proc = _start(fault_table, tmp_path)
    try:
        _wait_loading(db_url, fault_table, proc)
        assert _status(fault_table)["state"] == "loading"  # alive: its session holds the month
        proc.kill()  # SIGKILL: nothing of the run's own runs after this
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    month = _status(fault_table)
    assert month["state"] == "failed", month
    assert "is gone" in month["error"] and month["run_id"] in month["error"]


def test_a_run_killed_mid_validation_reads_failed_not_loaded(db_url: str, fault_table: str,
                                                             tmp_path: Path) -> None:
    """Issue 47: a run killed during validation left the month `loaded` for good. The month reads
    `validating` while its run validates (holding it), and `failed` once the run is gone."""
    proc = _start(fault_table, tmp_path)
    try:
        _wait_loading(db_url, fault_table, proc, "validating")
        assert _status(fault_table)["state"] == "validating"  # alive: its session holds the month
        proc.kill()
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    month = _status(fault_table)
    assert month["state"] == "failed" and "validating: the run" in month["error"] and "is gone" in month["error"], month


def test_a_server_restarted_mid_load_leaves_the_month_failed(db_url: str, fault_table: str, tmp_path: Path) -> None:
    proc = _start(fault_table, tmp_path)
    try:
        _wait_loading(db_url, fault_table, proc)
        down = subprocess.run([sys.executable, "-m", "era5etl", "db", "down"], capture_output=True, text=True)
        assert down.returncode == 0, down.stderr
        up = subprocess.run([sys.executable, "-m", "era5etl", "db", "up"], capture_output=True, text=True)
        assert up.returncode == 0, up.stderr
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1 and "Traceback" not in err, err
    month = _status(fault_table)
    assert month["state"] == "failed", month
