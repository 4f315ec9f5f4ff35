"""db.session, the Python API's connection: kept open from call to call (one login, one server lookup),
never shared between threads, given up for a new one when the server ended it, and left with no
transaction open after a use, an error's included."""

from __future__ import annotations

import threading
import weakref

import psycopg
import pytest

from era5etl import settings
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
    # The local server found from its state file, not asked through db up's subprocesses.
    assert looked_up == [] if not settings.load().database_url else len(looked_up) <= 1
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


def test_no_subprocess_finds_the_database(monkeypatch: pytest.MonkeyPatch) -> None:
    """A first call in a new process and every later one find the running server without a subprocess."""
    import subprocess

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a subprocess was started: {args[0] if args else kwargs}")

    monkeypatch.setattr(session, "_default", None)
    monkeypatch.setattr(subprocess, "Popen", refused)
    monkeypatch.setattr(subprocess, "run", refused)
    session.close()
    try:
        for _ in range(2):
            with session.session() as conn:
                assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        session.close()


def test_threads_past_the_limit_keep_no_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_KEPT kept connections a thread's use opens its own and closes it after."""
    session.close()
    monkeypatch.setattr(session, "MAX_KEPT", 1)
    monkeypatch.setattr(session, "kept_connections", weakref.WeakSet())
    with session.session() as conn:
        mine = conn
    used: list[psycopg.Connection[object]] = []

    def other() -> None:
        with session.session() as theirs:
            assert theirs.execute("SELECT 1").fetchone() == (1,)
            used.append(theirs)

    worker = threading.Thread(target=other)
    worker.start()
    worker.join(30)
    try:
        assert used and used[0] is not mine and used[0].closed  # used once, then closed
        assert not mine.closed  # this thread's, kept
    finally:
        session.close()
