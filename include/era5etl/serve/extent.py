"""Which table a read is of, and the span of time it holds, from catalogs only (no weather row is read).

The span fills a series' missing ``from``/``to`` ("everything loaded") before the size of the answer
is checked. It comes from TimescaleDB's chunk catalog: the first chunk's start to the last chunk's end,
an upper bound of the loaded hours (a chunk may be a whole year holding a few months), found without
touching the hypertable, whatever its size.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from typing import Any

import psycopg

from era5etl import settings
from era5etl.db import registry, table_ident
from era5etl.db.facts import kept
from era5etl.serve.errors import NotFoundError
from era5etl.track import ledger

HOUR = timedelta(hours=1)


def default_table(conn: psycopg.Connection[Any]) -> str:
    """``ERA5_TABLE`` when set; else the pipeline's table with the most recently validated month (a
    table whose only run failed never becomes the default); else the one the ledger updated last;
    else ``weather``."""
    if os.environ.get(settings.env_name("table")):
        return settings.load().table
    if ledger.exists(conn):
        validated = ledger.latest_validated_table(conn)
        if validated is not None:
            return validated
        targets = ledger.targets(conn)
        if targets:
            return str(targets[0]["table_name"])
    return settings.load().table


@kept
def pipeline_tables(conn: psycopg.Connection[Any]) -> list[str]:
    """The tables the pipeline loads: those the ledger (``era5_months``) names that exist as weather
    hypertables, most recently updated first, then those it made without a ledger row (load-file's,
    ``era5_tables``) that exist; none when there is no ledger yet."""
    if not ledger.exists(conn):
        return []
    known = [str(r["table_name"]) for r in ledger.targets(conn)]
    made = [n for n in registry.names(conn) if conn.execute(
        "SELECT to_regclass(%s) IS NOT NULL", (table_ident(n).as_string(conn),)).fetchone() == (True,)]
    return list(dict.fromkeys([*known, *made]))


def resolve_table(conn: psycopg.Connection[Any], table: str | None) -> tuple[str, str, str]:
    """(the name to read, its schema, its relation name) of ``table`` (default: :func:`default_table`);
    NotFoundError if there is no such table, or if it is not one of :func:`pipeline_tables`: the HTTP
    reads answer for the pipeline's tables only, never for any relation the database user may see
    (``table=pg_class``)."""
    name = table or default_table(conn)
    row = conn.execute(
        "SELECT n.nspname, c.relname, c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE c.oid = to_regclass(%s)", (table_ident(name).as_string(conn),)).fetchone()
    if row is None:
        raise NotFoundError(f"table {name!r} does not exist")
    known = pipeline_tables(conn)
    # The same relation however it is spelled (weather, public.weather): compared by oid.
    oids = conn.execute("SELECT array_agg(to_regclass(t)::oid) FROM unnest(%s::text[]) AS t",
                        ([table_ident(t).as_string(conn) for t in known],)).fetchone()
    if row[2] not in ((oids[0] if oids else None) or []):
        listed = ", ".join(known) if known else "none yet: run the era5_monthly DAG or era5etl run-month"
        raise NotFoundError(f"table {name!r} is not one of the pipeline's tables (those in the ledger era5_months: "
                            f"{listed})")
    return name, str(row[0]), str(row[1])


@kept
def time_span(conn: psycopg.Connection[Any], schema: str, name: str) -> tuple[datetime, datetime] | None:
    """(first hour, last hour) the table's chunks cover, or None when it has no chunk (holds nothing)."""
    row = conn.execute(
        "SELECT min(range_start), max(range_end) FROM timescaledb_information.chunks"
        " WHERE hypertable_schema = %s AND hypertable_name = %s", (schema, name)).fetchone()
    if row is None or row[0] is None:
        return None
    return row[0], row[1] - HOUR
