"""A backfill under ``airflow up`` that outlives a restart of its database, backed up while it runs, and
the warehouse restored to a moment between two backfills (issue 47).

On a database server of the test's own (``ERA5_HOME``), archiving its WAL to a pgBackRest repository
(``ERA5_BACKUP_REPOSITORY``), so nothing else here loses its database:

1. ``airflow up``; a backfill of two months; once it runs, a full backup (``db backup --type full``), then
   the server stopped and started again (``db down``, ``db up``) under the running backfill. Both months
   end validated with all their rows, and every component of the stack is up (``airflow up`` restarts
   one that exited).
2. A moment noted; a backfill of a third month, an incremental backup taken while it runs.
3. ``airflow down``; the data directory destroyed; ``db restore --to <moment>``: the first two months have
   the checksums they had, the third is in neither the table nor the ledger, ``table check`` is clean.
4. ``airflow up`` again and a backfill of the third month: loaded again, row for row as before.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from era5etl.cli.supervise import group_alive
from era5etl.core.grid import Area, Grid, expected_rows
from era5etl.core.months import Month
from era5etl.db.local import DATA_DIR_IN_ROOT, LocalTimescale
from tests.e2e.launched import Launched
from tests.e2e.stack import AREA, DAG_ID
from tests.integration.helpers import require_mount_namespaces

pytestmark = pytest.mark.e2e

FIRST = ["2018-03", "2018-04"]
LATER = "2018-05"
COMPONENTS = {"localcds", "api-server", "scheduler", "dag-processor", "triggerer"}


@pytest.fixture(scope="module")
def launched() -> Iterator[Launched]:
    require_mount_namespaces()
    work = Path(tempfile.mkdtemp(prefix="era5-backup-restart-"))
    server = LocalTimescale(home=work / "db", backup_repository=work / "repo")
    url = server.up()
    stack = Launched(work, env={"ERA5_HOME": str(work / "db"), "ERA5_BACKUP_REPOSITORY": str(work / "repo")},
                     db_url=url)
    stack.env.pop("ERA5_DATABASE_URL", None)
    try:
        yield stack
    finally:
        stack.stop()
        server.down()
        shutil.rmtree(work, ignore_errors=True)


def _era5(stack: Launched, *args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "era5etl", *args, "--json"], env=stack.env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _start(stack: Launched) -> None:
    stack.up()
    stack.sign_in()
    stack.wait("the DAG parsed", lambda: any(d["dag_id"] == DAG_ID for d in stack.api("GET", "api/v2/dags")["dags"]))


def _backfill(stack: Launched, months: list[str]) -> set[str]:
    # One backfill a DAG at once: the one before is marked complete by the scheduler after its runs end.
    listed = f"api/v2/backfills?dag_id={DAG_ID}&limit=100"
    stack.wait("no active backfill", lambda: all(b.get("completed_at") for b in stack.api("GET", listed)["backfills"]),
               timeout=120)
    out = stack.airflow_cli("backfill", "create", "--dag-id", DAG_ID, "--from-date", f"{months[0]}-01",
                            "--to-date", f"{months[-1]}-01")
    assert out.returncode == 0, out.stdout + out.stderr
    stack.api("PATCH", f"api/v2/dags/{DAG_ID}", {"is_paused": False})
    return {f"backfill__{Month.parse(m).start.isoformat()}" for m in months}


def _finished(stack: Launched, runs: set[str]) -> dict[str, str] | None:
    try:
        known = stack.runs()
    except OSError:  # the api-server between its database's restart and its own
        return None
    states = {r: known.get(r, {}).get("state") for r in runs}
    return states if all(s in ("success", "failed") for s in states.values()) else None


def _checksums(stack: Launched) -> dict[str, tuple[int, str]]:
    with psycopg.connect(stack.db_url) as conn:
        rows = conn.execute(
            f'SELECT to_char(time, \'YYYY-MM\'), count(*), md5(string_agg(t::text, \';\' ORDER BY time, location_id))'
            f' FROM "{stack.table}" t GROUP BY 1').fetchall()
        return {m: (n, digest) for m, n, digest in rows}


def _ledger(stack: Launched) -> dict[str, str]:
    with psycopg.connect(stack.db_url) as conn:
        return dict(conn.execute("SELECT to_char(month, 'YYYY-MM'), state FROM era5_months WHERE table_name = %s",
                                 (stack.table,)).fetchall())


def _all_up(stack: Launched) -> bool:
    """Each of the stack's five components has a live process group (``airflow up``'s state file)."""
    state = json.loads((stack.home / "era5-stack.json").read_text())
    return set(state["groups"]) == COMPONENTS and all(group_alive(g) for g in state["groups"].values())


def _now(stack: Launched) -> datetime:
    with psycopg.connect(stack.db_url) as conn:
        row = conn.execute("SELECT now()").fetchone()
    assert row is not None
    return row[0]


def test_a_backfill_outlives_its_database_and_a_restore_brings_back_what_was_validated(launched: Launched) -> None:
    stack = launched
    exact = {m: expected_rows(Month.parse(m), Area.parse(AREA), Grid()) for m in [*FIRST, LATER]}
    _start(stack)

    # 1. A full backup, then the database restarted, both under the running backfill.
    runs = _backfill(stack, FIRST)
    stack.wait("the backfill running", lambda: any(stack.runs().get(r, {}).get("state") == "running" for r in runs))
    full = _era5(stack, "db", "backup", "--type", "full")
    assert _finished(stack, runs) is None, "the backfill ended before the restart: nothing was tested"
    subprocess.run([sys.executable, "-m", "era5etl", "db", "down"], env=stack.env, check=True, timeout=120)
    time.sleep(5)
    subprocess.run([sys.executable, "-m", "era5etl", "db", "up"], env=stack.env, check=True, timeout=300,
                   capture_output=True)
    states = stack.wait("the backfill done", lambda: _finished(stack, runs), timeout=600)
    assert set(states.values()) == {"success"}, states
    assert stack.proc is not None and stack.proc.poll() is None, stack.out.read_text()
    stack.wait("every component up", lambda: _all_up(stack), timeout=120)
    assert {m: n for m, (n, _) in _checksums(stack).items()} == {m: exact[m] for m in FIRST}

    # 2. The moment to come back to (a second after the backup's end at least: pgBackRest's stop times
    # are whole seconds), then a third month and an incremental backup.
    while _now(stack).timestamp() < datetime.fromisoformat(full["stopped"]).timestamp() + 2:
        time.sleep(0.5)
    point = _now(stack)
    time.sleep(1.0)
    later = _backfill(stack, [LATER])
    stack.wait("the later backfill running", lambda: any(
        stack.runs().get(r, {}).get("state") in ("running", "success") for r in later))
    incr = _era5(stack, "db", "backup", "--type", "incr")  # under the backfill, if it has not ended yet
    assert set(stack.wait("the later month", lambda: _finished(stack, later), timeout=600).values()) == {"success"}
    assert incr["type"] == "incr" and incr["label"].startswith(full["label"])
    before = _checksums(stack)
    assert {m: n for m, (n, _) in before.items()} == exact and _ledger(stack) == dict.fromkeys(exact, "validated")

    # 3. Airflow stopped, the disk lost, the warehouse restored to the moment.
    down = subprocess.run(stack.command("down"), env=stack.env, capture_output=True, text=True, timeout=120)
    assert down.returncode == 0, down.stdout + down.stderr
    subprocess.run([sys.executable, "-m", "era5etl", "db", "down"], env=stack.env, check=True, timeout=120)
    shutil.rmtree(Path(str(LocalTimescale(home=Path(stack.env["ERA5_HOME"])).root) + DATA_DIR_IN_ROOT))
    _era5(stack, "db", "restore", "--to", point.isoformat(), "--yes")
    assert _checksums(stack) == {m: before[m] for m in FIRST}
    assert _ledger(stack) == dict.fromkeys(FIRST, "validated")
    assert _era5(stack, "table", "check", stack.table)["differences"] == []

    # 4. Airflow again; a backfill of the month validated after the moment loads it again, exactly.
    _start(stack)
    again = _backfill(stack, [LATER])
    assert set(stack.wait("the month again", lambda: _finished(stack, again), timeout=600).values()) == {"success"}
    assert _checksums(stack) == before and _ledger(stack) == dict.fromkeys(exact, "validated")
