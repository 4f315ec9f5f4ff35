"""A connection kept open between calls, for the Python API (``era5etl.api``): a notebook that reads a
thousand places pays for its reads, not for finding the database and logging in each time.

* :func:`default_url` asks :func:`era5etl.db.database_url` once a process (it may provision and
  start the local server, through subprocesses: ~80 ms a call here) and keeps the answer while
  ``ERA5_DATABASE_URL`` says the same;
* :func:`session` hands out this thread's open connection to a URL, opened on first use. Before it
  is reused it is checked with one round trip (a server restarted in between gets a new connection,
  and for the default URL the server is looked up again), and after every use its transaction is
  ended, so each call reads a fresh snapshot and an error leaves nothing open.

Threads never share a connection (psycopg connections are not for concurrent use); :func:`close`
closes this thread's.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import psycopg

from era5etl import settings
from era5etl.db.connect import open_connection
from era5etl.db.errors import DatabaseError
from era5etl.db.urls import database_url

_lock = threading.Lock()
_default: tuple[str | None, str] | None = None  # (ERA5_DATABASE_URL as it was, the URL it gave)
_local = threading.local()

Connection = psycopg.Connection[tuple[Any, ...]]


def default_url() -> str:
    """The pipeline's database (:func:`era5etl.db.database_url`), looked up once while the setting holds."""
    global _default
    configured = settings.load().database_url
    with _lock:
        if _default is None or _default[0] != configured:
            _default = (configured, database_url())
        return _default[1]


def _forget_default() -> None:
    global _default
    with _lock:
        _default = None


def _open(url: str | None, target: str) -> tuple[str, Connection]:
    """A new connection to ``target`` (``url``, or the default URL when ``url`` is None)."""
    try:
        return target, open_connection(target)
    except DatabaseError:
        if url is not None:
            raise
        _forget_default()  # the local server may have stopped: look it up (and start it) again
        target = default_url()
        return target, open_connection(target)


def _usable(conn: Connection) -> bool:
    if conn.closed or conn.broken:
        return False
    try:
        conn.execute("SELECT 1")
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
