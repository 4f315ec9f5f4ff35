"""The read-only role the HTTP reads connect as: SELECT on the pipeline's tables, nothing else.

``db up`` makes it on the local server (:func:`ensure_reader`, role :data:`ROLE`, its password kept
with the superuser's in ``.local/server.json``, mode 0600): it may connect to the ``era5`` database
and SELECT from every table of its ``public`` schema, those made later included (default privileges
of the role that makes them). :func:`era5etl.db.urls.reader_url` is the URL the reads use.
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

