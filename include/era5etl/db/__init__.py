"""Database access: where the database is, connections, the schema from the repository's sql/.

When ``ERA5_DATABASE_URL`` is set that server is used and nothing is provisioned. Otherwise the
checkout runs its own PostgreSQL 17 + TimescaleDB Community server (``db.local``), a copy of the
machine's server image (``db.image``: TimescaleDB built from its release source once per machine).

This package's names are re-exported from the modules that define them: ``connect`` (connections),
``tables`` (a table's names and the sql/ files), ``schema`` (making and dropping tables) and ``urls``
(where the databases are). Modules inside ``db`` import those modules, never this package, so the
package imports its modules and none of them imports it back.
"""

from era5etl.db.connect import SESSION_OPTIONS, connect, open_connection, redact, session_options, with_database
from era5etl.db.errors import DatabaseError
from era5etl.db.local import LocalTimescale
from era5etl.db.schema import (
    BOOKKEEPING_SQL,
    MONTHLY_MEANS_CHUNK,
    discard_new,
    drop_table,
    ensure_schema,
    new_layout,
)
from era5etl.db.tables import (
    LEVEL_COLUMN,
    LEVEL_ORDERBY,
    MAX_IDENTIFIER,
    ROLLUP_STEPS,
    SQL_DIR,
    columnstore_available,
    columnstore_enabled,
    has_level_column,
    licence,
    render,
    rollup_tables,
    split_table,
    table_ident,
)
from era5etl.db.urls import airflow_database_url, database_url

__all__ = ["BOOKKEEPING_SQL", "LEVEL_COLUMN", "LEVEL_ORDERBY", "MAX_IDENTIFIER", "MONTHLY_MEANS_CHUNK",
           "ROLLUP_STEPS", "SESSION_OPTIONS", "SQL_DIR", "DatabaseError", "LocalTimescale", "airflow_database_url",
           "columnstore_available", "columnstore_enabled", "connect", "database_url", "discard_new", "drop_table",
           "ensure_schema", "has_level_column", "licence", "new_layout", "open_connection", "redact", "render",
           "rollup_tables", "session_options", "split_table", "table_ident", "with_database"]
