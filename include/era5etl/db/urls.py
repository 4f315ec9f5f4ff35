"""Where the databases are: the pipeline's (``ERA5_DATABASE_URL``, else the checkout's local server,
provisioned on demand), Airflow's metadata database beside it, and the URL the HTTP reads connect
with as the read-only role (:mod:`era5etl.db.reader`)."""

from __future__ import annotations

from era5etl import settings
from era5etl.db.connect import with_database
from era5etl.db.local import LocalTimescale


def database_url() -> str:
    """The pipeline's database: ``ERA5_DATABASE_URL``, else the local server (provisioned on demand)."""
    url = settings.load().database_url
    if url:
        return url
    return LocalTimescale().up()


def airflow_database_url() -> str:
    """Airflow's metadata database on the same server, so LocalExecutor can run tasks in parallel."""
    return with_database(database_url(), "airflow")


def reader_url() -> str:
    """The URL the HTTP reads connect with: ``ERA5_READER_DATABASE_URL`` when set (a managed server:
    make such a role there, docs/configuration.md), else the local server's reader, else - a managed
    server without one - the pipeline's own URL."""
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
