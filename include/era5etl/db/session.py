"""A connection kept open between calls, for the Python API (``era5etl.api``): a notebook that reads a
thousand places pays for its reads, not for finding the database and logging in each time.

* :func:`default_url` finds the database once a process and keeps the answer while
  ``ERA5_DATABASE_URL`` says the same: the setting, else the local server's state file; only when
  the server does not answer there is :func:`era5etl.db.database_url` asked (it provisions and
  starts the local server, through subprocesses: ~80 ms when it is up already);
* :func:`session` hands out this thread's open connection to a URL, opened on first use. Before it
  is reused it is checked with one round trip (a server restarted in between gets a new connection,
  and for the default URL the server is looked up again), and after every use its transaction is
  ended, so each call reads a fresh snapshot and an error leaves nothing open. What a read learns
  of a table is kept on it while the server has written nothing since (:mod:`era5etl.db.facts`).

Threads never share a connection (psycopg connections are not for concurrent use), and at most
:data:`MAX_KEPT` threads of a process keep one; :func:`close` closes this thread's.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import psycopg

from era5etl import settings
from era5etl.db import facts
from era5etl.db.connect import open_connection
from era5etl.db.errors import DatabaseError
from era5etl.db.local import LocalTimescale
from era5etl.db.urls import database_url

_lock = threading.Lock()
_default: tuple[str | None, str] | None = None  # (ERA5_DATABASE_URL as it was, the URL it gave)
_local = threading.local()
# At most this many connections kept by a process's threads: the HTTP reads run in a pool of up to 40
# threads per api-server worker, and a server allows max_connections in all (100 by default; the local
# server 200). A thread past it opens a connection for its use and closes it, as every read did before.
MAX_KEPT = 8
kept_connections: weakref.WeakSet[Connection] = weakref.WeakSet()  # the kept ones (a thread's end lets go of its own)

Connection = psycopg.Connection[tuple[Any, ...]]


def default_url() -> str:
    """The pipeline's database, looked up once while ``ERA5_DATABASE_URL`` holds: the setting, else
    the local server's URL from its state file (no subprocess: ``db up`` asks the server through
    several), else :func:`era5etl.db.database_url`, which provisions and starts it."""
    global _default
    configured = settings.load().database_url
    with _lock:
        if _default is None or _default[0] != configured:
            state = None if configured else LocalTimescale().state()
            _default = (configured, configured or (state.url() if state is not None else database_url()))
        return _default[1]


def _started() -> str:
    """The local server's URL once :func:`era5etl.db.database_url` has started it (it was not up)."""
    global _default
    with _lock:
        _default = (settings.load().database_url, database_url())
        return _default[1]


def _open(url: str | None, target: str) -> tuple[str, Connection]:
    """A new connection to ``target`` (``url``, or the default URL when ``url`` is None)."""
    try:
        return target, open_connection(target)
    except DatabaseError:
        if url is not None:
            raise
        target = _started()  # the local server is not up (or moved): start it, and ask again
        return target, open_connection(target)


def _usable(conn: Connection) -> bool:
    """Whether the kept connection still works; the round trip that asks also tells what it keeps of
    the tables whether the server has written since (:func:`era5etl.db.facts.check`)."""
    if conn.closed or conn.broken:
        return False
    try:
        facts.check(conn)
    except psycopg.Error:
        return False
    return True


@contextlib.contextmanager
def session(url: str | None = None) -> Iterator[Connection]:
    """This thread's connection to ``url`` (default: :func:`default_url`), reused from call to call."""
    conns: dict[str, Connection] = _local.__dict__.setdefault("conns", {})
    target = url or default_url()
    conn = conns.get(target)
    if conn is None or not _usable(conn):
        if conn is not None:
            with contextlib.suppress(psycopg.Error):
                conn.close()
            del conns[target]
        target, conn = _open(url, target)
        with _lock:
            keep = sum(1 for c in kept_connections if not c.closed) < MAX_KEPT
            if keep:
                kept_connections.add(conn)
        if not keep:  # as many threads keep one as may: this use has its own, closed after it
            try:
                yield conn
            finally:
                conn.close()
            return
        facts.keep(conn)
        facts.check(conn)
        conns[target] = conn
    try:
        yield conn
    finally:
        if conn.closed or conn.broken:
            conns.pop(target, None)
        else:
            with contextlib.suppress(psycopg.Error):
                conn.rollback()


def close() -> None:
    """Close this thread's connections (the next call opens new ones)."""
    conns: dict[str, Connection] = _local.__dict__.setdefault("conns", {})
    for conn in conns.values():
        with contextlib.suppress(psycopg.Error):
            conn.close()
    conns.clear()
