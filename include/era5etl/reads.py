"""The two reads people make of the table, timed: one place's history and one hour's slice.

``python -m era5etl reads`` picks grid points and hours at random (seeded) among what the table
holds and reports latency per query (median, min, max) with the plan's index use, so the effect of
the chunk indexes the loader builds is measured rather than assumed.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import sql

from era5etl.db import connect, database_url, table_ident


@dataclass
class ReadFigures:
    query: str
    runs: int
    rows: int
    median_ms: float
    min_ms: float
    max_ms: float
    plan: str

    def as_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


def _timed(conn: Any, stmt: sql.Composed, params: tuple[Any, ...]) -> tuple[float, int]:
    t0 = time.perf_counter()
    rows = conn.execute(stmt, params).fetchall()
    return (time.perf_counter() - t0) * 1000, len(rows)


def measure(url: str, table: str, runs: int = 20, seed: int = 1) -> list[ReadFigures]:
    ident = table_ident(table)
    rng = random.Random(seed)
    with connect(url) as conn:
        span = conn.execute(sql.SQL("SELECT min(time), max(time) FROM {}").format(ident)).fetchone()
        if span is None or span[0] is None:
            raise ValueError(f"{table} is empty: load something first")
        first, last = span
        # Sample ids and hours from the first chunk's rows (cheap), then read across the whole table.
        ids = [r[0] for r in conn.execute(
            sql.SQL("SELECT DISTINCT location_id FROM {} WHERE time = %s AND location_id IS NOT NULL").format(ident),
            (first,))]
        hours = [r[0] for r in conn.execute(
            sql.SQL("SELECT DISTINCT time FROM {} WHERE time >= %s AND time < %s + interval '2 days'").format(ident),
            (first, first))]
        history = sql.SQL(
            "SELECT time, temperature_2m, zonal_wind_10m, meridional_wind_10m, total_cloud_cover,"
            " total_precipitation, snowfall FROM {} WHERE location_id = %s AND time >= %s AND time <= %s"
            " ORDER BY time").format(ident)
        slice_ = sql.SQL(
            "SELECT location_id, latitude, longitude, temperature_2m, total_precipitation FROM {}"
            " WHERE time = %s").format(ident)
        out = []
        for name, stmt, pick in (
            ("point history (one location_id, all hours)", history,
             lambda: (rng.choice(ids), first, last)),
            ("time slice (all points, one hour)", slice_, lambda: (rng.choice(hours),)),
        ):
            plan = "\n".join(r[0] for r in conn.execute(sql.SQL("EXPLAIN ") + stmt, pick()))
            timings, counts = [], []
            for _ in range(runs):
                ms, n = _timed(conn, stmt, pick())
                timings.append(ms)
                counts.append(n)
            used = sorted({w for w in ("location_time", "time_brin", "Seq Scan") if w in plan})
            out.append(ReadFigures(name, runs, int(statistics.median(counts)), round(statistics.median(timings), 2),
                                   round(min(timings), 2), round(max(timings), 2), ", ".join(used)))
    return out


def add_parser(sub: Any) -> None:
    p = sub.add_parser("reads", help="time the two reads people make: a place's history, an hour's slice")
    p.add_argument("--table", default="weather")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd)


def _cmd(args: argparse.Namespace) -> int:
    url = database_url()
    figures = measure(url, args.table, runs=args.runs)
    with connect(url) as conn:
        row = conn.execute(
            "SELECT count(*), pg_size_pretty(hypertable_size(%s::regclass)) FROM timescaledb_information.chunks"
            " WHERE hypertable_name = %s", (args.table, args.table.split(".")[-1])).fetchone()
    chunks, size = (row or (0, "?"))
    print(f"{args.table}: {chunks} chunks, {size}; {args.runs} runs each, random picks ({datetime.now():%Y-%m-%d})")
    for f in figures:
        print(f"  {f.query:<44} rows {f.rows:>9,}  median {f.median_ms:9.2f} ms  "
              f"min {f.min_ms:9.2f}  max {f.max_ms:9.2f}  [{f.plan}]")
    if args.json:
        print(json.dumps({"table": args.table, "chunks": chunks, "reads": [f.as_dict() for f in figures]}))
    return 0
