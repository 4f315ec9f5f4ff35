"""The writer's transaction (load.writer): every chunk written whole or not at all (a loader killed with
SIGKILL mid-COPY, then a rerun), its read indexes, and two loads of the same days never interleaved."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import VARIABLES
from era5etl.db import connect
from era5etl.fetch import MonthRequest
from localcds import synth

DAYS = 6
# A chunk a day, as a global month is loaded (this file's 2.1M rows would otherwise be one month
# chunk): the kills below then land between and inside per-day transactions, and each load ends by
# merging the month's days into one chunk.
DAILY = {**os.environ, "ERA5_CHUNK_ROWS": "0"}


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six days of a 30 x 30 degree box: 121 x 121 points, ~2.1M rows, a few seconds to load."""
    request = MonthRequest(Month(2023, 6), Area.parse("60/0/30/30"), Grid(), VARIABLES).cds_request()
    request["day"] = [f"{d:02d}" for d in range(1, DAYS + 1)]
    return synth.write_download(request, tmp_path_factory.mktemp("big") / "download.zip")


def _per_day(url: str, table: str) -> dict[str, int]:
    with connect(url) as conn:
        rows = conn.execute(f"SELECT to_char(time, 'YYYY-MM-DD'), count(*) FROM {table} GROUP BY 1").fetchall()
    return {d: int(n) for d, n in rows}


def _copying(url: str) -> bool:
    with connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'era5etl' "
                           "AND query LIKE 'COPY %%' AND state = 'active'").fetchone()
    return bool(row and row[0])


def test_sigkill_mid_copy_leaves_whole_chunks_and_a_rerun_is_exact(db_url: str, table: str, big_file: Path) -> None:
    per_day = 24 * 121 * 121
    cmd = [sys.executable, "-m", "era5etl", "load-file", str(big_file), "--table", table]
    # First a complete load, so the kill below interrupts a *reload* of chunks that hold data.
    assert subprocess.run(cmd, capture_output=True, text=True, check=False, env=DAILY).returncode == 0
    assert _per_day(db_url, table) == {f"2023-06-{d:02d}": per_day for d in range(1, DAYS + 1)}

    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=DAILY)
    deadline = time.monotonic() + 60
    while not _copying(db_url):
        assert proc.poll() is None, "the loader finished before it could be killed mid-COPY"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    time.sleep(0.3)  # well inside a chunk's COPY
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    # The server notices the dead client and rolls its transactions back.
    deadline = time.monotonic() + 30
    while _copying(db_url) and time.monotonic() < deadline:
        time.sleep(0.1)

    after_kill = _per_day(db_url, table)
    # Every chunk is either as it was (complete) or replaced in full; a half-written day would show
    # here as a count other than per_day.
    assert set(after_kill.values()) == {per_day}, after_kill
    assert len(after_kill) == DAYS

    assert subprocess.run(cmd, capture_output=True, text=True, check=False, env=DAILY).returncode == 0
    assert _per_day(db_url, table) == {f"2023-06-{d:02d}": per_day for d in range(1, DAYS + 1)}


def test_kill_during_first_load_leaves_no_partial_day(db_url: str, table: str, big_file: Path) -> None:
    per_day = 24 * 121 * 121
    cmd = [sys.executable, "-m", "era5etl", "load-file", str(big_file), "--table", table]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=DAILY)
    deadline = time.monotonic() + 60
    while not _copying(db_url):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 30
    while _copying(db_url) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert set(_per_day(db_url, table).values()) <= {per_day}
    assert subprocess.run(cmd, capture_output=True, text=True, check=False, env=DAILY).returncode == 0
    assert _per_day(db_url, table) == {f"2023-06-{d:02d}": per_day for d in range(1, DAYS + 1)}


def test_each_row_store_chunk_has_the_read_indexes(db_url: str, row_store_table: str, big_file: Path) -> None:
    table = row_store_table
    cmd = [sys.executable, "-m", "era5etl", "load-file", str(big_file), "--table", table]
    assert subprocess.run(cmd, capture_output=True, text=True, check=False, env=DAILY).returncode == 0
    with connect(db_url) as conn:
        chunks = conn.execute("SELECT chunk_schema || '.' || chunk_name FROM timescaledb_information.chunks "
                              "WHERE hypertable_name = %s", (table,)).fetchall()
        assert len(chunks) == DAYS
        for (chunk,) in chunks:
            defs = sorted(r[0] for r in conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE schemaname || '.' || tablename = %s", (chunk,)))
            assert any("USING brin (\"time\")" in d for d in defs), defs
            assert any("(location_id, \"time\" DESC)" in d for d in defs), defs
            # The loader analyzed the chunk: the planner knows a day holds 24 hours. (Autovacuum may
            # analyze it too, so its own statistics count: last_analyze is set only by an ANALYZE.)
            stats = dict(conn.execute(
                "SELECT attname, n_distinct FROM pg_stats WHERE schemaname || '.' || tablename = %s", (chunk,)))
            assert stats.get("time") == 24 and "location_id" in stats, stats
            analyzed = conn.execute("SELECT last_analyze FROM pg_stat_user_tables "
                                    "WHERE schemaname || '.' || relname = %s", (chunk,)).fetchone()
            assert analyzed is not None and analyzed[0] is not None, chunk
        # One place's history and one hour's slice are both answered from an index.
        conn.execute("SET enable_seqscan = off")  # tiny chunks: make the planner show its index choice
        plan = "\n".join(r[0] for r in conn.execute(
            f"EXPLAIN SELECT * FROM {table} WHERE location_id = 700000 ORDER BY time"))
        assert "location_time" in plan, plan
        plan = "\n".join(r[0] for r in conn.execute(
            f"EXPLAIN SELECT * FROM {table} WHERE time = '2023-06-03 12:00+00'"))
        assert "time_brin" in plan, plan


def test_two_loads_of_the_same_days_at_once_never_interleave(db_url: str, table: str, big_file: Path) -> None:
    # A backfill and a rerun of the same month side by side: the writers of one chunk queue (on the
    # chunk's advisory lock), so whichever commits last replaces the other's rows, never adds to them.
    per_day = 24 * 121 * 121
    cmd = [sys.executable, "-m", "era5etl", "load-file", str(big_file), "--table", table]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=DAILY)
             for _ in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    assert _per_day(db_url, table) == {f"2023-06-{d:02d}": per_day for d in range(1, DAYS + 1)}
    with connect(db_url) as conn:
        dup = conn.execute(f"SELECT count(*) FROM (SELECT time, location_id FROM {table} "
                           "GROUP BY 1, 2 HAVING count(*) > 1) d").fetchone()
    assert dup == (0,)


def test_database_restarted_mid_load_fails_clearly_and_a_rerun_is_exact(
    db_url: str, table: str, big_file: Path
) -> None:
    per_day = 24 * 121 * 121
    cmd = [sys.executable, "-m", "era5etl", "load-file", str(big_file), "--table", table]
    assert subprocess.run(cmd, capture_output=True, text=True, check=False, env=DAILY).returncode == 0
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=DAILY)
    deadline = time.monotonic() + 60
    while not _copying(db_url):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    time.sleep(0.3)
    # A fast shutdown ends every session mid-COPY, as a crash or a restart by an operator would.
    down = subprocess.run([sys.executable, "-m", "era5etl", "db", "down"], capture_output=True, text=True)
    assert down.returncode == 0, down.stderr
    up = subprocess.run([sys.executable, "-m", "era5etl", "db", "up"], capture_output=True, text=True)
    assert up.returncode == 0, up.stderr
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    # (psycopg may log a warning about the lost COPY first; the user's line is the last one.)
    assert err.strip().splitlines()[-1].startswith("error: ") and "Traceback" not in err, err
    assert set(_per_day(db_url, table).values()) == {per_day}
    assert subprocess.run(cmd, capture_output=True, text=True, check=False, env=DAILY).returncode == 0
    assert _per_day(db_url, table) == {f"2023-06-{d:02d}": per_day for d in range(1, DAYS + 1)}


class _FailingBlocks:
    """A staged download whose ``after``-th block fails, as a damaged file fails mid-read (0: before
    the first, when the chunk's writer has nothing yet)."""

    def __init__(self, staged: Any, after: int) -> None:
        self._staged, self._after = staged, after

    def __getattr__(self, name: str) -> Any:
        return getattr(self._staged, name)

    def blocks(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        inner = self._staged.blocks(*args, **kwargs)
        for _ in range(self._after):
            yield next(inner)
        raise OSError("the file ends early (HDF error)")


@pytest.mark.parametrize("after", [0, 1])
def test_a_read_failing_mid_chunk_fails_the_load_and_no_writer_waits(db_url: str, table: str, big_file: Path,
                                                                    after: int) -> None:
    """The blocks fail while a chunk's writer waits for its rows: the load raises the read's error and
    every writer stops (a writer waiting for the end of a window nobody would finish hung the load),
    and the chunk being written is not committed."""
    from era5etl.load import load
    from era5etl.stage import open_download

    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            with open_download([big_file]) as staged:
                load(db_url, table, _FailingBlocks(staged, after))
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=120)
    assert not worker.is_alive(), "the load hung after its blocks failed"
    assert len(outcome) == 1 and isinstance(outcome[0], OSError), outcome
    assert "the file ends early" in str(outcome[0])
    assert _per_day(db_url, table) == {}
