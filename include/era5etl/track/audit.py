"""``table check``: a whole table audited against its ledger, month by month, and what differs said.

What the ledger (``era5_months``) and the copy records (``era5_year_copies``) claim, against what the
tables hold, counted afresh:

* **every ledger month**: the rows the table holds in the month and the area's box against the rows
  the ledger records (``loaded``, ``validated``) and, for a validated month, the rows it expected;
  a month in any other state is listed as open, not as a difference;
* **rows no ledger month covers**: a month's rows beyond those inside its ledger areas' boxes;
* **the rollups**: each month's daily rollup against its hourly rows (one row per UTC day and grid
  point, and level where the table has levels, and its ``hours`` adding up to the hourly rows on the
  lattice), as the loader writes them;
* **the copies of years**: each copied year's rows in ``<table>_years`` and in the table against the
  rows its record says were copied.

Every count is a scan of the month's chunks (the columnstore answers counts from its batches'
metadata, but a filter on the box decodes them): on a global table the whole audit reads the table
once, so ``--from``/``--to`` narrow it to months.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any

import psycopg
from psycopg import sql

from era5etl.core.grid import Area
from era5etl.core.months import Month
from era5etl.db import connect, has_level_column, rollup_tables, table_ident
from era5etl.db.years import copy_name

EPS = 1e-4  # degrees: a float4 latitude or longitude on the box's edge is inside it


@dataclass
class Audit:
    """What ``table check`` found: the months checked, the open ones, and every difference."""

    table: str
    months: int = 0
    copies: int = 0
    open: list[str] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def audit(url: str, table: str, first: Month | None = None, last: Month | None = None) -> Audit:
    """The audit of the pipeline's ``table`` (see the module's docstring), its months from ``first`` to
    ``last`` (both included; default all)."""
    found = Audit(table)
    with connect(url, autocommit=True) as conn:
        ledger = _ledger(conn, table, first, last)
        by_month: dict[date, list[dict[str, Any]]] = {}
        for row in ledger:
            by_month.setdefault(row["month"], []).append(row)
        daily = _daily_rollup(conn, table)
        for month, rows in sorted(by_month.items()):
            _month(conn, table, Month(month.year, month.month), rows, found, daily)
        for stray in _months_without_ledger(conn, table, set(by_month), first, last):
            found.differences.append(f"{stray}: the table holds rows of this month; the ledger has no month of it")
        _copies(conn, table, found, first, last)
    return found


def _ledger(conn: psycopg.Connection[Any], table: str, first: Month | None, last: Month | None
            ) -> list[dict[str, Any]]:
    cur = conn.execute(
        "SELECT month, area, state, rows, expected_rows FROM era5_months WHERE table_name = %s"
        " AND month >= COALESCE(%s, month) AND month <= COALESCE(%s, month) ORDER BY month, area",
        (table, first.start.date() if first else None, last.start.date() if last else None))
    keys = [d.name for d in cur.description or []]
    return [dict(zip(keys, r, strict=True)) for r in cur.fetchall()]


def _count(conn: psycopg.Connection[Any], table: str, month: Month, area: Area | None = None) -> int:
    where: sql.Composable = sql.SQL("time >= %s AND time < %s")
    params: list[Any] = [month.start, month.end]
    if area is not None:
        where = where + sql.SQL(" AND latitude BETWEEN %s AND %s AND longitude BETWEEN %s AND %s")
        params += [float(area.south) - EPS, float(area.north) + EPS, float(area.west) - EPS, float(area.east) + EPS]
    row = conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE ").format(table_ident(table)) + where,
                       params).fetchone()
    return int(row[0]) if row else 0


def _month(conn: psycopg.Connection[Any], table: str, month: Month, rows: list[dict[str, Any]], found: Audit,
           daily: tuple[str, bool] | None) -> None:
    inside = 0
    for row in rows:
        found.months += 1
        held = _count(conn, table, month, Area.parse(row["area"]))
        inside += held
        where = f"{month} {row['area']}"
        if row["state"] not in ("loaded", "validated"):
            found.open.append(f"{where}: {row['state']} (the table holds {held:,} rows there)")
            continue
        if row["rows"] is not None and held != row["rows"]:
            found.differences.append(f"{where}: the ledger says {row['state']} with {row['rows']:,} rows; the "
                                     f"table holds {held:,}")
        elif row["state"] == "validated" and row["expected_rows"] is not None and held != row["expected_rows"]:
            found.differences.append(f"{where}: validated, yet the table holds {held:,} rows of the "
                                     f"{row['expected_rows']:,} expected")
    total = _count(conn, table, month)
    if total > inside:
        found.differences.append(f"{month}: {total - inside:,} of the table's {total:,} rows lie outside every "
                                 "area the ledger has for the month")
    if daily is not None:
        _rollup(conn, table, month, found, *daily)


def _daily_rollup(conn: psycopg.Connection[Any], table: str) -> tuple[str, bool] | None:
    """The table's daily rollup and whether the table has levels; None when it has no rollup."""
    daily = rollup_tables(table)["day"]
    if conn.execute("SELECT to_regclass(%s)", (table_ident(daily).as_string(conn),)).fetchone() == (None,):
        return None
    return daily, bool(has_level_column(conn, table))


def _rollup(conn: psycopg.Connection[Any], table: str, month: Month, found: Audit, daily: str, levels: bool) -> None:
    key = sql.SQL(", level" if levels else "")
    want = conn.execute(sql.SQL(
        "SELECT count(*), COALESCE(sum(n), 0) FROM (SELECT count(*) AS n FROM {} WHERE time >= %s AND time < %s"
        " AND location_id IS NOT NULL GROUP BY time_bucket('1 day', time), location_id{}) d").format(
            table_ident(table), key), (month.start, month.end)).fetchone()
    got = conn.execute(sql.SQL("SELECT count(*), COALESCE(sum(hours), 0) FROM {} WHERE bucket >= %s AND bucket < %s"
                               ).format(table_ident(daily)), (month.start, month.end)).fetchone()
    if want is not None and got is not None and tuple(map(int, got)) != tuple(map(int, want)):
        found.differences.append(f"{month}: the daily rollup has {int(got[0]):,} rows for {int(got[1]):,} hours; "
                                 f"the hourly rows make {int(want[0]):,} days of points for {int(want[1]):,} hours")


def _months_without_ledger(conn: psycopg.Connection[Any], table: str, ledger: set[date], first: Month | None,
                           last: Month | None) -> list[Month]:
    rows = conn.execute(sql.SQL(
        "SELECT DISTINCT date_trunc('month', time AT TIME ZONE 'UTC')::date FROM {}"
        " WHERE time >= COALESCE(%s, '-infinity'::timestamptz) AND time < COALESCE(%s, 'infinity'::timestamptz)"
        " ORDER BY 1").format(table_ident(table)),
        (first.start if first else None, last.end if last else None)).fetchall()
    return [Month(d.year, d.month) for (d,) in rows if d not in ledger]


def _copies(conn: psycopg.Connection[Any], table: str, found: Audit, first: Month | None, last: Month | None) -> None:
    records = conn.execute("SELECT year, rows FROM era5_year_copies WHERE table_name = %s ORDER BY year",
                           (table,)).fetchall()
    copy = copy_name(table)
    for year, rows in records:
        if (first and year < first.year) or (last and year > last.year):
            continue
        found.copies += 1
        span = (Month(year, 1).start, Month(year, 12).end)
        # Rows off the lattice (no location_id) are not copied (load.years).
        counts = [conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE time >= %s AND time < %s"
                                       " AND location_id IS NOT NULL").format(table_ident(name)), span).fetchone()
                  for name in (copy, table)]
        held, source = (int(c[0]) if c else 0 for c in counts)
        if not held == source == rows:
            found.differences.append(f"{year}: its copy is recorded with {rows:,} rows; {copy} holds {held:,} and "
                                     f"the table {source:,} of the year")
