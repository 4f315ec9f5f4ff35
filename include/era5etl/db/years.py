"""A table's place-major copies of finished years: their names, the years they hold whole, dropping them.

A weather table's chunks are time-major: a global table's month keeps a place's hours in batches of
its neighbours' (in tiles a batch is a tile's day), so one place's 85 years decode 1,020 chunks' worth
of other places' rows. ``<table>_years`` (written by ``load.years``) holds each copied calendar year
in one chunk segmented by ``location_id`` and ordered by time (by level, then time, on levels): a
place's year is two batches of its own rows (5,000 rows a batch), whatever the table's breadth. The
daily rollup, whose chunks at global breadth are the table's months too, has its own copy the same
way, ``<table>_daily_years`` (a place's year there is one batch). The monthly rollup needs none: its
chunks are decades already.

``era5_year_copies`` (sql/011) has a row for each (relation, year) a copy holds whole and current. A
load that rewrites any hour of a year deletes the table's and its daily rollup's rows of that year in
the chunk's own transaction (which writes both), under the year's lock (``load.years.forget_years``),
and ``load.years`` takes the same lock alone while it copies: so a read (``read.years``) takes a year
from a copy only while the copy equals the rows it was made from.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from era5etl.core.errors import InputError
from era5etl.core.names import fitted
from era5etl.db.facts import kept
from era5etl.db.tables import rollup_tables, split_table, table_ident

YEARS_SUFFIX = "_years"
# What marks a table as the pipeline's copy of another's years (and nothing a user made).
COPY_COMMENT = "era5etl: the place-major copy of {}'s finished years"


def copy_name(relation: str) -> str:
    """``<relation>_years``, in the relation's schema (``core.names`` keeps a table's within PostgreSQL's 63
    bytes; a long table's daily rollup's copy is ``core.names.fitted``)."""
    schema, name = split_table(relation)
    return f"{schema}.{fitted(name + YEARS_SUFFIX)}" if schema else fitted(name + YEARS_SUFFIX)


def copy_sources(table: str) -> list[tuple[str, str]]:
    """What of a weather table has a copy of years, with its time column: the table's hours and its
    daily rollup's days (a name too long to have rollups: the hours alone)."""
    try:
        return [(table, "time"), (rollup_tables(table)["day"], "bucket")]
    except InputError:
        return [(table, "time")]


def is_copy(conn: psycopg.Connection[Any], table: str) -> bool | None:
    """Whether ``<table>_years`` is the pipeline's copy of ``table`` (a weather table or its daily
    rollup); None when there is no such relation."""
    rel = table_ident(copy_name(table)).as_string(conn)
    row = conn.execute("SELECT obj_description(to_regclass(%s), 'pg_class'), to_regclass(%s) IS NOT NULL",
                       (rel, rel)).fetchone()
    if not row or not row[1]:
        return None
    return bool(row[0] == COPY_COMMENT.format(table))


@kept
def copied_years(conn: psycopg.Connection[Any], table: str) -> list[int]:
    """The years of ``table`` (a weather table or its daily rollup) its copy holds whole and current,
    ascending; [] when none (or before sql/011)."""
    if conn.execute("SELECT to_regclass('era5_year_copies') IS NULL").fetchone() == (True,):
        return []
    return [int(r[0]) for r in conn.execute(
        "SELECT year FROM era5_year_copies WHERE table_name = %s ORDER BY year", (table,))]


def drop_copy(conn: psycopg.Connection[Any], table: str) -> list[str]:
    """Drop the copies of years of ``table`` and of its daily rollup, with their records; the copies
    dropped. A relation of a copy's name that is not the pipeline's copy is left alone."""
    return _drop(conn, copy_sources(table))


def drop_daily_copy(conn: psycopg.Connection[Any], table: str) -> list[str]:
    """Drop the copy of years of ``table``'s daily rollup alone, with its records (the rollup rebuilt)."""
    return _drop(conn, [s for s in copy_sources(table) if s[0] != table])


def _drop(conn: psycopg.Connection[Any], sources: list[tuple[str, str]]) -> list[str]:
    dropped = []
    records = conn.execute("SELECT to_regclass('era5_year_copies') IS NOT NULL").fetchone() == (True,)
    for relation, _ in sources:
        if records:
            conn.execute("DELETE FROM era5_year_copies WHERE table_name = %s", (relation,))
        if is_copy(conn, relation):
            conn.execute(sql.SQL("DROP TABLE {} CASCADE").format(table_ident(copy_name(relation))))
            dropped.append(copy_name(relation))
    return dropped
