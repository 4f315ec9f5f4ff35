"""The advisory locks that order writers of a table's chunks: one on a chunk, one on its calendar month,
one on its calendar year (against the copy of years)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import psycopg


def lock_chunk(cur: psycopg.Cursor[tuple[Any, ...]], table: str, start: datetime) -> None:
    """The transaction's lock on one chunk of ``table``: whoever rewrites or compresses it takes this first."""
    cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))", (table, start.astimezone(UTC).isoformat()))


def lock_month(cur: psycopg.Cursor[tuple[Any, ...]], table: str, moment: datetime, *, shared: bool) -> None:
    """The transaction's lock on the calendar month holding ``moment``: shared by every writer of a
    chunk in it, taken alone by whoever changes the month's chunks themselves (merging them)."""
    month = moment.astimezone(UTC).strftime("month %Y-%m")
    fn = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
    cur.execute(f"SELECT {fn}(hashtext(%s), hashtext(%s))", (table, month))  # fn: one of two names above


def lock_year(cur: psycopg.Cursor[Any], table: str, year: int, *, shared: bool) -> None:
    """The transaction's lock on a calendar year of ``table``: shared by every writer of its rows (which
    forgets the year's copy, db.years), taken alone by whoever copies the year place-major (load.years)."""
    fn = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
    cur.execute(f"SELECT {fn}(hashtext(%s), hashtext(%s))", (table, f"year {year}"))  # fn: one of two names above
