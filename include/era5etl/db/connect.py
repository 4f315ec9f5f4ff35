"""Connections: opening one (with the project's session options) and a URL fit for a log line."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict

from era5etl.core.errors import first_line
from era5etl.db.errors import DatabaseError


def redact(url: str) -> str:
    """The URL with its password replaced, for logs and error messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def with_database(url: str, dbname: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path="/" + dbname))


# No JIT: a read over a table's months plans one scan per chunk, and a plan's cost over 1,020 monthly
# chunks passes jit_above_cost, so PostgreSQL compiled ~10,000 functions before returning a place's
# 85 years (17.7 s of 18.6 s; 0.8 s without). docs/benchmarks.md, "JIT over many chunks".
SESSION_OPTIONS = "-c jit=off"


def session_options(url: str) -> str:
    """The URL's own ``options`` (kept) followed by :data:`SESSION_OPTIONS`."""
    own = str(conninfo_to_dict(url).get("options") or "")
    return f"{own} {SESSION_OPTIONS}".strip()


@contextlib.contextmanager
def connect(url: str, *, autocommit: bool = False) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
    conn = open_connection(url, autocommit=autocommit)
    try:
        yield conn
    finally:
        conn.close()


def open_connection(url: str, *, autocommit: bool = False) -> psycopg.Connection[tuple[Any, ...]]:
    """A new connection, as :func:`connect` opens it (the caller closes it); DatabaseError when none can be."""
    try:
        return psycopg.connect(url, autocommit=autocommit, connect_timeout=10, application_name="era5etl",
                               options=session_options(url))
    except psycopg.OperationalError as exc:
        raise DatabaseError(f"cannot connect to the database at {redact(url)}: {first_line(exc)}") from None
