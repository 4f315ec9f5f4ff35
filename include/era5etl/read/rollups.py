"""A weather table's daily and monthly rollups, refreshed for exactly one window (a month the pipeline
has validated).

Two kinds, made by ``db.ensure_schema`` from one query (sql/rollup_select.sql):

* **continuous aggregates** (the Community licence): ``CALL refresh_continuous_aggregate`` over the
  window, which cannot run inside a transaction (an autocommit connection), the daily one first (the
  monthly one aggregates it). ``force`` re-materializes every bucket of the window whatever
  TimescaleDB's invalidation log says, so a reload's rollups follow its rows even where a write path
  logged no invalidation. The daily refresh goes a day at a time (``buckets_per_batch`` 1, each day
  replaced in a transaction of its own): one pass over a global month would hash ~32 million groups.
* **plain tables** (the Apache licence): DELETE of the window and INSERT ... SELECT of it a day at a
  time, then the monthly from the daily, both rollups in one transaction.

Memory: the refresh's session sets ``work_mem`` to :data:`WORK_MEM`. A global day's hash aggregate
(1,038,240 groups) needs ~570 MB; at the server's 64 MB it spilled 4.4 GB to disk and took twice as
long (``EXPLAIN ANALYZE`` of the daily query over a loaded global day: 59.4 s, 31.2 s at 1 GB).

Two refreshes of the same window would collide (TimescaleDB refuses a refresh of a window another
one is refreshing), so each holds an advisory lock on (table, window start): a second run of the same
month waits and then refreshes again; different months of a table refresh side by side.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

import psycopg
from psycopg import sql

from era5etl.core.errors import InputError
from era5etl.db import connect, rollup_query, rollup_tables, split_table, table_ident
from era5etl.read.columns import ROLLUP_COLUMNS

Kind = Literal["continuous aggregate", "table"]
# The daily rollup a day per batch (TimescaleDB's default for a manual refresh is 10 buckets); the
# monthly one's window is one bucket.
REFRESH_OPTIONS = {"day": json.dumps({"buckets_per_batch": 1}), "month": json.dumps({"buckets_per_batch": 0})}
# Enough for one global day's hash aggregate in memory (hash_mem_multiplier lets a hash use twice it).
WORK_MEM = "1GB"


class RollupError(RuntimeError):
    """The rollups cannot be refreshed or do not match the hourly rows; the message says which."""


@dataclass
class Refresh:
    """What refreshing a window did: each rollup's kind, seconds and rows in the window afterwards."""

    kinds: dict[str, Kind] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    bytes: int = 0  # both rollups, every window

    def as_dict(self) -> dict[str, Any]:
        return {"kinds": self.kinds, "seconds": self.seconds, "rows": self.rows, "bytes": self.bytes}


def kind_of(conn: psycopg.Connection[Any], relation: str) -> Kind | None:
    """Whether ``relation`` is a continuous aggregate or a plain table (None: it does not exist)."""
    schema, name = split_table(relation)
    row = conn.execute(
        "SELECT c.relkind, EXISTS (SELECT FROM timescaledb_information.continuous_aggregates a"
        " WHERE a.view_schema = n.nspname AND a.view_name = c.relname)"
        " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = COALESCE(%s, current_schema()) AND c.relname = %s", (schema, name)).fetchone()
    if row is None:
        return None
    return "continuous aggregate" if row[1] else "table"


def _bytes(conn: psycopg.Connection[Any], relation: str, kind: Kind) -> int:
    if kind == "table":
        row = conn.execute("SELECT pg_total_relation_size(%s::regclass)", (table_ident(relation).as_string(conn),))
    else:
        schema, name = split_table(relation)
        row = conn.execute(
            "SELECT hypertable_size(format('%%I.%%I', materialization_hypertable_schema,"
            " materialization_hypertable_name)::regclass) FROM timescaledb_information.continuous_aggregates"
            " WHERE view_schema = COALESCE(%s, current_schema()) AND view_name = %s", (schema, name))
    found = row.fetchone()
    return int(found[0]) if found and found[0] is not None else 0


def _days(start: datetime, end: datetime) -> list[dict[str, datetime]]:
    """[start, end) as one window a UTC day."""
    out = []
    day = start
    while day < end:
        out.append({"start": day, "end": min(day + timedelta(days=1), end)})
        day += timedelta(days=1)
    return out


def refresh(url: str, table: str, start: datetime, end: datetime) -> Refresh:
    """Recompute both rollups of ``table`` for [start, end) (whole UTC days and months) from its rows."""
    try:
        names = rollup_tables(table)
    except InputError as exc:
        raise RollupError(str(exc)) from None
    result = Refresh()
    with connect(url, autocommit=True) as conn:
        for step, name in names.items():
            kind = kind_of(conn, name)
            if kind is None:
                raise RollupError(f"{table} has no rollup {name}: db.ensure_schema makes it (the pipeline's "
                                  "prepare step, run-month)")
            result.kinds[step] = kind
        key = (f"era5etl.rollup {table}", start.isoformat())
        conn.execute(sql.SQL("SET work_mem = {}").format(sql.Literal(WORK_MEM)))
        conn.execute("SELECT pg_advisory_lock(hashtext(%s), hashtext(%s))", key)
        try:
            window = {"start": start, "end": end}
            plain = [(step, name) for step, name in names.items() if result.kinds[step] == "table"]
            for step, name in names.items():
                if result.kinds[step] == "continuous aggregate":
                    t0 = time.perf_counter()
                    conn.execute("CALL refresh_continuous_aggregate(%s::regclass, %s::timestamptz, %s::timestamptz,"
                                 " force => true, options => %s::jsonb)",
                                 (table_ident(name).as_string(conn), start, end, REFRESH_OPTIONS[step]))
                    result.seconds[step] = round(time.perf_counter() - t0, 3)
            if plain:
                columns = sql.SQL(", ").join(map(sql.Identifier, ROLLUP_COLUMNS))
                with conn.transaction():
                    for step, name in plain:
                        t0 = time.perf_counter()
                        ident = table_ident(name)
                        conn.execute(sql.SQL("DELETE FROM {} WHERE bucket >= %(start)s AND bucket < %(end)s")
                                     .format(ident), window)
                        insert = sql.SQL("INSERT INTO {} ({}) {}").format(
                            ident, columns, rollup_query(table, step, windowed=True))
                        for part in _days(start, end) if step == "day" else [window]:
                            conn.execute(insert, part)
                        result.seconds[step] = round(time.perf_counter() - t0, 3)
        finally:
            conn.execute("SELECT pg_advisory_unlock(hashtext(%s), hashtext(%s))", key)
        for step, name in names.items():
            row = conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE bucket >= %(start)s AND bucket < %(end)s")
                               .format(table_ident(name)), {"start": start, "end": end}).fetchone()
            result.rows[step] = int(row[0]) if row else 0
            result.bytes += _bytes(conn, name, result.kinds[step])
    return result
