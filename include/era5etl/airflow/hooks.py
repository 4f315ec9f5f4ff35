"""Airflow connections, the conventional way: hooks that turn a connection into what the core takes.

- The database: the Postgres connection ``era5_timescale`` through the provider's ``PostgresHook``
  (its extras, e.g. ``sslmode``, ``sslrootcert``, ``application_name``, become libpq parameters of
  the URL the core connects with); without that connection, ``ERA5_DATABASE_URL`` or the local server.
- The CDS: the connection ``era5_cds`` (host: the API URL, or scheme/host/port/path parts; password:
  the key) through :class:`CdsHook`, sync for the operator and async for the trigger; without it,
  ``CDSAPI_URL``/``CDSAPI_KEY`` or ``~/.cdsapirc`` as the cdsapi client reads them.
"""

# Imports inside functions: the DAG files import this package at every parse, and the core (numpy,
# psycopg, the pipeline) loads only in a task or a trigger's thread (Airflow's best practice on top-
# level code).

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode, urlunsplit

from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowNotFoundException

if TYPE_CHECKING:  # the core loads in the task or the trigger's thread, never at import (DAG parsing, triggerer)
    from era5etl.fetch import Credentials

DB_CONN_ID = "era5_timescale"
READER_CONN_ID = "era5_timescale_reader"  # the HTTP reads' read-only role (db.reader)
CDS_CONN_ID = "era5_cds"
# Connection extras that configure the hook itself, not libpq.
_HOOK_EXTRAS = {"cursor", "iam", "redshift", "redshift-serverless", "aws_conn_id", "azure_conn_id",
                "sqlalchemy_scheme", "sqlalchemy_query", "log_sql", "enable_log_db_messages"}


def database_url(conn_id: str = DB_CONN_ID) -> str:
    """The database as a libpq URL: the Postgres connection ``conn_id`` when defined, else
    ``ERA5_DATABASE_URL`` or the local server (``era5etl.db.database_url``)."""
    from airflow.providers.postgres.hooks.postgres import PostgresHook

    from era5etl import db

    hook = PostgresHook(postgres_conn_id=conn_id)
    try:
        conn = hook.connection
    except AirflowNotFoundException:
        return db.database_url()
    return connection_url(conn, ignored=set(hook.ignored_extra_options) | _HOOK_EXTRAS)


def reader_url(conn_id: str = READER_CONN_ID) -> str:
    """The read-only URL of the HTTP reads: the Postgres connection ``conn_id`` when defined, else
    ``ERA5_READER_DATABASE_URL``, the local server's ``era5_reader`` or ``ERA5_DATABASE_URL``
    (``era5etl.db.urls.reader_url``)."""
    from airflow.providers.postgres.hooks.postgres import PostgresHook

    from era5etl.db.urls import reader_url as core_reader_url

    hook = PostgresHook(postgres_conn_id=conn_id)
    try:
        conn = hook.connection
    except AirflowNotFoundException:
        return core_reader_url()
    return connection_url(conn, ignored=set(hook.ignored_extra_options) | _HOOK_EXTRAS)


def connection_url(conn: Any, ignored: set[str] = _HOOK_EXTRAS) -> str:
    """A Postgres connection's libpq URL; its extras (other than the hook's own) as URL parameters."""
    auth = quote(conn.login or "", safe="")
    if conn.password:
        auth += ":" + quote(conn.password, safe="")
    host = conn.host or "localhost"
    netloc = f"{auth + '@' if auth else ''}{host}{f':{conn.port}' if conn.port else ''}"
    extras = {k: v for k, v in conn.extra_dejson.items() if k not in ignored and v is not None}
    return urlunsplit(("postgresql", netloc, "/" + (conn.schema or ""), urlencode(extras), ""))


class CdsHook(BaseHook):
    """The Copernicus CDS credentials of an Airflow connection (or of the environment)."""

    conn_name_attr = "cds_conn_id"
    default_conn_name = CDS_CONN_ID
    conn_type = "http"
    hook_name = "Copernicus CDS (ERA5)"

    def __init__(self, cds_conn_id: str = CDS_CONN_ID, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cds_conn_id = cds_conn_id

    def get_credentials(self) -> Credentials:
        from era5etl.fetch import Credentials

        try:
            conn = self.get_connection(self.cds_conn_id)
        except AirflowNotFoundException:
            return Credentials.from_env()
        return self.credentials_from_connection(conn)

    async def aget_credentials(self) -> Credentials:
        """The same, on the triggerer's event loop."""
        from era5etl.fetch import Credentials

        try:
            conn = await self.aget_connection(self.cds_conn_id)
        except AirflowNotFoundException:
            return Credentials.from_env()
        return self.credentials_from_connection(conn)

    @staticmethod
    def credentials_from_connection(conn: Any) -> Credentials:
        """The URL and key of a connection (host: the API URL, or its parts; password: the key)."""
        from era5etl.fetch import Credentials

        host = conn.host or ""
        if "://" not in host:  # given as parts (e.g. from an AIRFLOW_CONN_ URI): scheme, host, port, path
            scheme = conn.conn_type if conn.conn_type in ("http", "https") else "https"
            host = f"{scheme}://{host}{f':{conn.port}' if conn.port else ''}/{conn.schema or 'api'}"
        return Credentials(url=host, key=conn.password)
