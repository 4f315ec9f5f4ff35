"""``python -m era5bench daily-chunks``: a place's daily series over a table's years, read from its daily
rollup as the loader made it and from two copies the server makes of it, one in yearly chunks and one
in decade chunks (both compressed whole, in the rollup's own layout), each read in a new connection,
alternating, as ``series --daily`` reads it (``read.series``'s statement). What it shows: whether the
daily rollup's chunk count or its batches decide the read (docs/benchmarks.md#the-daily-rollup-in-decades)."""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

from psycopg import sql

from era5bench.common import copy_hypertable


def _copy(conn: Any, source: str, name: str, interval: str) -> int:
    """``source`` copied into a new hypertable ``name`` with chunks of ``interval``, laid out as it is; its chunks."""
    conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(name)))
    found = conn.execute("SELECT segmentby, orderby FROM timescaledb_information.hypertable_columnstore_settings"
                         " WHERE hypertable = %s::regclass", (source,)).fetchone()
    segmentby, orderby = (found[0] or "", found[1]) if found else ("", "bucket")
    return copy_hypertable(conn, source, name, "bucket", interval, segmentby, orderby)


def _explain(url: str, statement: str) -> tuple[float, float]:
    import psycopg

    with psycopg.connect(url) as conn:
        lines = [str(r[0]) for r in conn.execute("EXPLAIN (ANALYZE) " + statement).fetchall()]
    plan = next(float(x.split(": ")[1].split()[0]) for x in lines if x.startswith("Planning Time"))
    run = next(float(x.split(": ")[1].split()[0]) for x in lines if x.startswith("Execution Time"))
    return plan, run


def main(argv: list[str]) -> int:
    import psycopg

    from era5etl.db import connect, database_url, rollup_tables
    from era5etl.db.rollups import rollup_columns
    from era5etl.read.series import series_statement
    from era5etl.read.years import Part

    p = argparse.ArgumentParser(prog="python -m era5bench daily-chunks",
                                description="a place's daily series from the daily rollup in yearly and decade chunks")
    p.add_argument("--table", required=True, help="a loaded table with its rollups, e.g. the 441 points of 1940-2024")
    p.add_argument("--runs", type=int, default=7)
    args = p.parse_args(argv)
    url = database_url()
    daily = rollup_tables(args.table)["day"]
    copies = {"yearly": f"{daily}_bench_yearly", "decades": f"{daily}_bench_decades"}
    with connect(url, autocommit=True) as conn:
        columns = list(rollup_columns(conn, args.table))
        ids = [r[0] for r in conn.execute(sql.SQL("SELECT DISTINCT location_id FROM {} WHERE bucket = (SELECT"
                                                  " min(bucket) FROM {}) ORDER BY 1").format(
            sql.Identifier(daily), sql.Identifier(daily))).fetchall()]
        for kind, interval in (("yearly", "365 days"), ("decades", "3650 days")):
            began = time.perf_counter()
            n = _copy(conn, daily, copies[kind], interval)
            print(f"{copies[kind]}: {n} chunks, made in {time.perf_counter() - began:.1f} s", flush=True)
        loaded = conn.execute("SELECT count(*) FROM timescaledb_information.chunks WHERE hypertable_name = %s",
                              (daily,)).fetchone()
        tiled = conn.execute("SELECT count(*) FROM pg_attribute WHERE attrelid = %s::regclass AND attname = 'tile'",
                             (daily,)).fetchone() == (1,)
    relations = {f"as loaded ({loaded[0] if loaded else 0} chunks)": daily, **copies}
    point = ids[len(ids) // 2]
    times: dict[str, list[float]] = {k: [] for k in relations}
    for _ in range(args.runs):
        for kind, relation in relations.items():
            statement, _ = series_statement([Part(relation, None, None, tiled)], "bucket", [*columns, "hours"])
            with psycopg.connect(url) as conn:  # a new backend, as a series call opens
                began = time.perf_counter()
                conn.cursor(binary=True).execute(statement, {"id": point}).fetchone()
                times[kind].append((time.perf_counter() - began) * 1000)
    print(f"location_id {point}, {args.runs} runs each, alternating, a new connection each:")
    for kind, relation in relations.items():
        with psycopg.connect(url) as conn:
            statement, _ = series_statement([Part(relation, None, None, tiled)], "bucket", [*columns, "hours"])
            text = statement.as_string(conn)
        plan, run = _explain(url, text.replace("%(id)s", str(point)))
        ms = times[kind]
        print(f"  {kind}: median {statistics.median(ms):.1f} ms ({min(ms):.1f}-{max(ms):.1f}); in a new backend"
              f" planning {plan:.1f} ms, execution {run:.1f} ms")
    with connect(url, autocommit=True) as conn:
        for name in copies.values():
            conn.execute(sql.SQL("DROP TABLE {}").format(sql.Identifier(name)))
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0
