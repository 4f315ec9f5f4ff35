"""The read-only role the HTTP reads connect as: SELECT on the pipeline's tables, nothing else.

``db up`` makes it on the local server (:func:`ensure_reader`, role :data:`ROLE`, its password kept
with the superuser's in ``.local/server.json``, mode 0600): it may connect to the ``era5`` database
and SELECT from every table of its ``public`` schema, those made later included (default privileges
of the role that makes them). :func:`reader_url` is the URL the reads use: ``ERA5_READER_DATABASE_URL``
when set (a managed server: make such a role there, docs/configuration.md), else the local server's
reader, else - a managed server without one - the pipeline's own URL.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

ROLE = "era5_reader"


def ensure_reader(conn: psycopg.Connection[Any], password: str, database: str = "era5") -> None:
    """The role, able to log in with ``password`` and to read (only) ``database``'s public tables;
    ``conn``: a superuser's autocommit connection to ``database``."""
    role = sql.Identifier(ROLE)
    exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ROLE,)).fetchone() is not None
    verb = "ALTER" if exists else "CREATE"
    conn.execute(sql.SQL(verb + " ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD {}").format(
        role, sql.Literal(password)))
    conn.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(sql.Identifier(database), role))
    conn.execute(sql.SQL("REVOKE CREATE ON SCHEMA public FROM {}").format(role))
    conn.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(role))
    conn.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA public TO {}").format(role))
    # Tables the pipeline makes later (as this superuser) are readable too; TimescaleDB gives a
    # hypertable's chunks its grants.
    conn.execute(sql.SQL("ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO {}").format(role))


def reader_url() -> str:
    """The URL the HTTP reads connect with (see the module's docstring)."""
    from era5etl import settings
    from era5etl.db import database_url
    from era5etl.db.local import LocalTimescale

    s = settings.load()
    if s.reader_database_url:
        return s.reader_database_url
    local = LocalTimescale().state()
    if s.database_url:
        # `airflow up` hands its components the local server's URL as ERA5_DATABASE_URL: still ours.
        ours = local is not None and local.reader_password and s.database_url == local.url()
        return local.reader_url() if ours and local is not None else s.database_url
    url = database_url()  # the local server, started if needed (and its reader made)
    local = LocalTimescale().state()
    return local.reader_url() if local is not None and local.reader_password else url
