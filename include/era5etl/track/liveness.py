"""Whether the run a ledger row names as busy is still alive, and a dead run's month marked failed.

A run that works on a month holds a session-level advisory lock on it (shared: two runs of one month
both hold it) for as long as it works: :func:`hold`. Whatever ends the run - the step failing, the
process killed, the server restarted, the worker lost - ends its session and so releases the lock,
with no code of the run's needed. A reader that finds a month in a busy state (:func:`busy`) takes
the lock for an instant: when it can, no run holds the month, and :func:`reap` moves the row to
``failed`` with an error saying the run is gone. The ledger's readers (``status``, the page,
``validate``, the next run) reap before they read.

Which states are judged: ``loading`` and ``validating`` always (each written by one step, in one
process, that holds the lock until it ends); for a run
of the CLI (``cli__`` run ids: one process for every step) ``fetching`` and ``staged`` too. An
Airflow run's ``fetching`` (its fetch deferred to the triggerer, no process holding anything) and
``staged`` (between two tasks) are not judged: Airflow itself marks those tasks failed.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

import psycopg

from era5etl.core.months import Month
from era5etl.db import connect

log = logging.getLogger(__name__)

NAMESPACE = "era5etl.month"  # the lock's first key: hashtext of this
CLI_PREFIX = "cli__"
ALWAYS_JUDGED = ("loading", "validating")
CLI_JUDGED = ("fetching", "staged", "loading", "validating")


def _key(table: str, month: str, area: str) -> str:
    return f"{table}|{month}|{area}"


@contextlib.contextmanager
def hold(url: str, table: str, month: Month, area: str) -> Iterator[None]:
    """Hold the month's lock (shared) on a session of its own while the body runs."""
    with connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock_shared(hashtext(%s), hashtext(%s))",
                     (NAMESPACE, _key(table, str(month), area)))
        yield  # the session's end (here, or the process's or server's death) releases it


def judged(state: str, run_id: str | None) -> bool:
    """Whether a row in ``state`` written by ``run_id`` must have a live run holding its month."""
    return state in ALWAYS_JUDGED or (state in CLI_JUDGED and (run_id or "").startswith(CLI_PREFIX))


def _held(conn: psycopg.Connection[Any], table: str, month: str, area: str) -> bool:
    key = (NAMESPACE, _key(table, month, area))
    got = conn.execute("SELECT pg_try_advisory_lock(hashtext(%s), hashtext(%s))", key).fetchone()
    if got == (True,):
        conn.execute("SELECT pg_advisory_unlock(hashtext(%s), hashtext(%s))", key)
        return False
    return True


def reap(url: str, table: str | None = None) -> int:
    """Mark failed every month (of ``table``, or all) whose busy state no live run holds; how many.
    A row a new run took over in the meantime (another run id or state) is left as it is."""
    with connect(url, autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('era5_months') IS NULL").fetchone() == (True,):
            return 0
        rows = conn.execute(
            "SELECT table_name, to_char(month, 'YYYY-MM'), area, state, run_id FROM era5_months"
            " WHERE state = ANY(%s) AND (%s::text IS NULL OR table_name = %s)",
            (list(CLI_JUDGED), table, table)).fetchall()
        dead = 0
        for name, month, area, state, run_id in rows:
            if not judged(state, run_id) or _held(conn, name, month, area):
                continue
            cur = conn.execute(
                "UPDATE era5_months SET state = 'failed', updated_at = now(), error = %s WHERE table_name = %s"
                " AND to_char(month, 'YYYY-MM') = %s AND area = %s AND state = %s AND run_id IS NOT DISTINCT FROM %s",
                (f"{state}: the run {run_id} is gone (its process or the database's session ended mid-step: "
                 "killed, restarted or lost); rerun the month", name, month, area, state, run_id))
            dead += max(cur.rowcount, 0)
        if dead:
            log.info("%d month(s) whose run is gone marked failed", dead)
        return dead
