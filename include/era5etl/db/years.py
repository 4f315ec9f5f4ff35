"""A table's place-major copy of finished years: its name, the years it holds whole, and forgetting one.

A weather table's chunks are time-major: a global table's month keeps a place's hours in batches of
its neighbours' (in tiles a batch is a tile's day), so one place's 85 years decode 1,020 chunks' worth
of other places' rows. ``<table>_years`` (written by ``load.years``) holds each copied calendar year
in one chunk segmented by ``location_id`` and ordered by time (by level, then time, on levels): a
place's year is two batches of its own rows (5,000 rows a batch), whatever the table's breadth.

``era5_year_copies`` (sql/011) has a row for each year the copy holds whole and current. A load that
rewrites any hour of a year deletes that row in the chunk's own transaction, under the year's lock
(``load.years.forget_years``), and ``load.years`` takes the same lock alone while it copies: so a read
(``read.years``) takes a year from the copy only while the copy equals the table's rows.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from era5etl.db import split_table, table_ident

YEARS_SUFFIX = "_years"
# What marks a table as the pipeline's copy of another's years (and nothing a user made).
COPY_COMMENT = "era5etl: the place-major copy of {}'s finished years"


def copy_name(table: str) -> str:
    """``<table>_years``, in the table's schema (``core.names`` keeps it within PostgreSQL's 63 bytes)."""
    schema, name = split_table(table)
    return f"{schema}.{name}{YEARS_SUFFIX}" if schema else name + YEARS_SUFFIX


def is_copy(conn: psycopg.Connection[Any], table: str) -> bool | None:
    """Whether ``<table>_years`` is the pipeline's copy of ``table``; None when there is no such relation."""
    rel = table_ident(copy_name(table)).as_string(conn)
    row = conn.execute("SELECT obj_description(to_regclass(%s), 'pg_class'), to_regclass(%s) IS NOT NULL",
                       (rel, rel)).fetchone()
    if not row or not row[1]:
        return None
    return bool(row[0] == COPY_COMMENT.format(table))


def copied_years(conn: psycopg.Connection[Any], table: str) -> list[int]:
    """The years of ``table`` its copy holds whole and current, ascending; [] when none (or before sql/011)."""
    if conn.execute("SELECT to_regclass('era5_year_copies') IS NULL").fetchone() == (True,):
        return []
    return [int(r[0]) for r in conn.execute(
        "SELECT year FROM era5_year_copies WHERE table_name = %s ORDER BY year", (table,))]


def drop_copy(conn: psycopg.Connection[Any], table: str) -> bool:
    """Drop ``table``'s copy of years and its records; True if there was one. A relation of that name
    that is not the pipeline's copy is left alone."""
    if conn.execute("SELECT to_regclass('era5_year_copies') IS NOT NULL").fetchone() == (True,):
        conn.execute("DELETE FROM era5_year_copies WHERE table_name = %s", (table,))
    if not is_copy(conn, table):
        return False
    conn.execute(sql.SQL("DROP TABLE {} CASCADE").format(table_ident(copy_name(table))))
    return True
