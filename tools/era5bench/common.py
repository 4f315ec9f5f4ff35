"""What every part of the bench shares: its error, its progress messages (stderr), and a copy of a
table into a hypertable of another chunk interval or layout (the layouts it compares)."""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any


class BenchError(RuntimeError):
    """The benchmark could not measure what it set out to (a table that does not hold what was sent)."""


def timed(fn: Any, runs: int) -> tuple[float, list[float], Any]:
    """(the median in ms of ``runs`` calls of ``fn`` after one that warms the caches and is not counted,
    each run's ms, the last result)."""
    times, result = [], None
    for _ in range(runs + 1):
        began = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times[1:]), times[1:], result


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def copy_hypertable(conn: Any, source: str, target: str, column: str, interval: str, segmentby: str,
                    orderby: str) -> int:
    """``target``: a new hypertable of ``source``'s rows, chunked by ``column`` every ``interval``, in the
    columnstore segmented by ``segmentby`` ('' for none) and ordered by ``orderby``, its rows inserted in
    that order and every chunk converted (``conn`` in autocommit); returns its chunks."""
    from psycopg import sql

    src, dst = sql.Identifier(source), sql.Identifier(target)
    conn.execute(sql.SQL("CREATE TABLE {} (LIKE {} INCLUDING DEFAULTS)").format(dst, src))
    conn.execute("SELECT create_hypertable(%s::regclass, by_range(%s::name, %s::interval))", (target, column, interval))
    conn.execute(sql.SQL("ALTER TABLE {} SET (timescaledb.enable_columnstore, timescaledb.segmentby = {},"
                         " timescaledb.orderby = {})").format(dst, sql.Literal(segmentby), sql.Literal(orderby)))
    order = sql.SQL(", ").join(sql.SQL(c) for c in (segmentby, orderby) if c)  # the settings' own text
    conn.execute(sql.SQL("INSERT INTO {} SELECT * FROM {} ORDER BY {}").format(dst, src, order))
    chunks = [r[0] for r in conn.execute("SELECT show_chunks(%s::regclass)", (target,)).fetchall()]
    for chunk in chunks:
        conn.execute("CALL convert_to_columnstore(%s::regclass)", (chunk,))
    return len(chunks)
