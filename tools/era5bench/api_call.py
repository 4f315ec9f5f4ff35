"""``python -m era5bench api-call``: what a warm call of the Python API costs beside its SQL.

The table: ``tests/data/era5-samples/newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc``
(25 points, 288 hours), loaded by the product's ``load-file`` into ``--table`` when it is not there.
In one process, alternating round by round (``--runs`` rounds; each figure the median of its
rounds):

* ``api.series(lat=40.5, lon=-8.5)`` of the month, warm: the kept connection (``db.session``) and what
  it keeps of the table (``db.facts``);
* the same call with what is kept forgotten before it (``db.facts.forget``): every catalogue
  question asked again, as each call did before ``db.facts``;
* the call's own statement of rows (its last, as it sent it), alone on an open connection: the SQL
  the call cannot do without.

Each line also says how many statements the call sent (counted by a cursor of the connection).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

from era5etl import api
from era5etl.db import connect, database_url, facts, session
from era5etl.db.tables import rollup_of

SAMPLE = (Path(__file__).resolve().parents[2] / "tests" / "data" / "era5-samples"
          / "newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc")
PLACE = {"lat": 40.5, "lon": -8.5}


class Counting(psycopg.Cursor[Any]):
    """Counts the statements sent, and keeps the last one (the call's rows) to send it again alone."""

    sent = 0
    last: tuple[Any, Any, bool] | None = None

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        Counting.sent += 1
        Counting.last = (query, params, bool(kwargs.get("binary", self.format)))
        return super().execute(query, params, **kwargs)


def ensure_table(url: str, table: str) -> None:
    with connect(url) as conn:
        if rollup_of(conn, table, "month") is not None:
            return
    subprocess.run([sys.executable, "-m", "era5etl", "load-file", str(SAMPLE), "--table", table], check=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="era5bench api-call", description=__doc__.split("\n")[0])
    parser.add_argument("--table", default="bench_api", help="the table (loaded from the sample when missing)")
    parser.add_argument("--runs", type=int, default=30, help="rounds of the three calls (default 30)")
    args = parser.parse_args(argv)
    url = database_url()
    ensure_table(url, args.table)
    call: dict[str, Any] = {"step": "hour", "table": args.table, **PLACE}
    with session.session() as conn:
        conn.cursor_factory = Counting
    api.series(**call)  # warm: the connection opened, the table's answers kept
    assert Counting.last is not None
    query, params, binary = Counting.last  # the call's last statement: its rows
    plain = psycopg.connect(url, cursor_factory=Counting)

    def rows_sql() -> None:
        plain.cursor(binary=binary).execute(query, params).fetchall()

    times: dict[str, list[float]] = {"kept": [], "forgotten": [], "sql": []}
    sent: dict[str, int] = {}

    def forgotten() -> None:
        with session.session() as kept_conn:
            facts.forget(kept_conn)
        api.series(**call)

    steps = {"kept": lambda: api.series(**call), "forgotten": forgotten, "sql": rows_sql}
    for _ in range(args.runs):
        for label, step in steps.items():
            before = Counting.sent
            began = time.perf_counter()
            step()
            times[label].append((time.perf_counter() - began) * 1000)
            sent[label] = Counting.sent - before - (1 if label == "forgotten" else 0)  # forget's own check
    plain.close()
    sql_ms = statistics.median(times["sql"])
    names = {"kept": "api.series, warm (db.facts kept)", "forgotten": "api.series, nothing kept",
             "sql": "its rows' SQL, open connection"}
    for label, name in names.items():
        ms = statistics.median(times[label])
        print(f"{name}: median {ms:.2f} ms (min {min(times[label]):.2f}), {sent[label]} statements,"
              f" {ms - sql_ms:+.2f} ms over the SQL")
    return 0
