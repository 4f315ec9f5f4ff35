"""The pipeline's tables: the ones its ledger names, what each holds, and dropping one with its records.

A weather table is the pipeline's when it made it (``era5_tables``, :mod:`era5etl.db.registry`: every
table ``run-month`` and ``load-file`` create) or ``era5_months`` has rows for it: that is what ``table
list`` shows and what ``table drop`` may remove. Any other table
of the database (Airflow's, a user's) is never one of them, whatever its name, and is refused.

Dropping goes through ``db.drop_table`` (which knows how the table's rollups are made and removed),
in one transaction with the table's ledger, metrics and validation rows: either all of it is gone or
nothing is (a failure halfway leaves no ledger claiming months of a table that no longer exists).
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from typing import Any

import psycopg
from psycopg import sql

from era5etl.core.errors import InputError
from era5etl.db import connect, drop_table, registry, rollup_tables, table_ident
from era5etl.db.layout import table_layout
from era5etl.db.years import copied_years, copy_name, copy_sources, is_copy

log = logging.getLogger(__name__)

# The pipeline's own records of a table, each keyed by ``table_name`` (sql/002, sql/004, sql/006, sql/008, sql/011).
RECORDS = ("era5_months", "era5_metrics", "era5_validation_days", "era5_tables", "era5_extents", "era5_year_copies")


@dataclass(frozen=True)
class PipelineTable:
    """One table of the ledger: its months and rows as the ledger has them (no scan of the table),
    whether it exists, and its size on disk when it does."""

    name: str
    months: int
    areas: int
    rows: int
    validated: int
    first_month: str
    last_month: str
    exists: bool
    bytes: int | None
    layout: str | None = None  # db.layout: tiles, moving, time or rowstore; None when the table is missing
    years_copied: list[int] = field(default_factory=list)  # the years its copy holds (db.years)
    copies_bytes: int | None = None  # the size of its copies of years, hours and days; None when it has none

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def pipeline_tables(url: str) -> list[PipelineTable]:
    """Every table named in the ledger, by name; [] when the pipeline never ran on this database."""
    with connect(url, autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('era5_months') IS NULL").fetchone() == (True,):
            return []
        rows = conn.execute(
            "SELECT table_name, count(DISTINCT month), count(DISTINCT area), coalesce(sum(rows), 0),"
            " count(*) FILTER (WHERE state = 'validated'), to_char(min(month), 'YYYY-MM'),"
            " to_char(max(month), 'YYYY-MM') FROM era5_months GROUP BY table_name ORDER BY table_name").fetchall()
        # The tables the pipeline made that the ledger does not name (load-file's): no months.
        in_ledger = {r[0] for r in rows}
        rows = sorted([*rows, *((n, 0, 0, 0, 0, "-", "-") for n in registry.names(conn) if n not in in_ledger)])
        # A load holds its chunk's ACCESS EXCLUSIVE lock (TRUNCATE) while it writes it; a size is not
        # worth waiting for, so a table busy that way is listed without one.
        conn.execute("SET lock_timeout = '2s'")
        out = []
        for name, months, areas, total, validated, first, last in rows:
            rel = table_ident(name).as_string(conn)
            found = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (rel,)).fetchone()
            exists = found == (True,)
            size, layout, years, copies = None, None, [], None
            if exists:
                layout, years = table_layout(conn, name), copied_years(conn, name)
                copies = _copies_bytes(conn, name)
                try:
                    # hypertable_size: the chunks and their columnstore parts; NULL for a plain table.
                    got = conn.execute("SELECT coalesce(hypertable_size(%s::regclass),"
                                       " pg_total_relation_size(%s::regclass))", (rel, rel)).fetchone()
                    size = int(got[0]) if got and got[0] is not None else None
                except psycopg.errors.LockNotAvailable:
                    log.info("%s is busy (a load holds a chunk's lock): listed without its size", name)
            out.append(PipelineTable(str(name), int(months), int(areas), int(total), int(validated), str(first),
                                     str(last), exists, size, layout, years, copies))
    return out


def _copies_bytes(conn: psycopg.Connection[Any], name: str) -> int | None:
    """The bytes of ``name``'s copies of years (``db.years``: its hours' and its daily rollup's); None
    when it has none, or one is busy (a copy holds its year's new chunk while it writes it)."""
    copies = [copy_name(r) for r, _ in copy_sources(name) if is_copy(conn, r)]
    if not copies:
        return None
    try:
        got = conn.execute("SELECT sum(coalesce(hypertable_size(c::regclass), 0)) FROM unnest(%s::text[]) c",
                           ([table_ident(c).as_string(conn) for c in copies],)).fetchone()
    except psycopg.errors.LockNotAvailable:
        return None
    return int(got[0]) if got and got[0] is not None else None


def find(url: str, name: str) -> PipelineTable:
    """The pipeline's table ``name``; InputError naming the ones there are when the ledger has no such table."""
    known = {t.name: t for t in pipeline_tables(url)}
    if name not in known:
        listed = ", ".join(sorted(known)) or "none"
        raise InputError(f"{name!r} is not one of the pipeline's tables (those it made, era5_tables, or its ledger "
                         f"era5_months names: {listed}); no other table is dropped")
    return known[name]


def drop(url: str, name: str) -> dict[str, Any]:
    """Drop the pipeline's table ``name`` with its rollups and its copies of years, and delete its ledger,
    metrics, validation and copy rows, in one transaction. InputError, touching nothing, when the ledger
    does not name ``name``."""
    table = find(url, name)
    try:
        rollups = list(rollup_tables(name).values())
    except InputError:  # a name too long to have rollups
        rollups = []
    deleted: dict[str, int] = {}
    with connect(url) as conn, conn.transaction():
        present = [t for t in (name, *rollups)
                   if conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table_ident(t).as_string(conn),)
                                   ).fetchone() == (True,)]
        present += [copy_name(r) for r, _ in copy_sources(name) if is_copy(conn, r)]
        for record in RECORDS:
            if conn.execute("SELECT to_regclass(%s) IS NOT NULL", (record,)).fetchone() != (True,):
                continue
            # The copies' records name the copied relations: the table and its daily rollup.
            names = [r for r, _ in copy_sources(name)] if record == "era5_year_copies" else [name]
            cur = conn.execute(sql.SQL("DELETE FROM {} WHERE table_name = ANY(%s)").format(sql.Identifier(record)),
                               (names,))
            deleted[record] = max(cur.rowcount, 0)
        drop_table(conn, name)
    return {"table": name, "dropped": present, "deleted": deleted, "months": table.months, "rows": table.rows}
