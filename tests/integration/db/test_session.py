"""db.session, the Python API's connection: kept open from call to call (one login, one server lookup),
never shared between threads, given up for a new one when the server ended it, and left with no
transaction open after a use, an error's included."""

from __future__ import annotations

import threading

import psycopg
import pytest

from era5etl.db import connect, session


def test_a_connection_is_reused_until_the_server_ends_it(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    looked_up = []
    real = session.database_url
    monkeypatch.setattr(session, "database_url", lambda: looked_up.append(1) or real())
    monkeypatch.setattr(session, "_default", None)
    session.close()
    with session.session() as conn:
        first = conn.info.backend_pid
    with session.session() as conn:
        assert conn.info.backend_pid == first  # the same backend: no new login
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS  # the check opened it
    assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE  # ended after the use
    assert len(looked_up) == 1  # the server looked up once, not per call
    # An error inside a use leaves the connection usable.
    with pytest.raises(psycopg.errors.UndefinedTable), session.session() as conn:
        conn.execute("SELECT * FROM no_such_table_here")
    with session.session() as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,) and conn.info.backend_pid == first
    # The server ends it (a restart does the same): the next use gets a new one.
    with connect(db_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (first,))
    with session.session() as conn:
        assert conn.info.backend_pid != first and conn.execute("SELECT 1").fetchone() == (1,)
    # Another thread has its own.
    pids: list[int] = []
    worker = threading.Thread(target=lambda: pids.append(_pid_and_close()))
    worker.start()
    worker.join(30)
    with session.session() as conn:
        assert pids and pids[0] != conn.info.backend_pid
    session.close()


def _pid_and_close() -> int:
    with session.session() as conn:
        pid = int(conn.info.backend_pid)
    session.close()
    return pid
