"""The ingest methods compared: INSERTs, COPYs, the blog's path and the product's load, each a function of
(Context, table, rows per batch) returning the rows it wrote.

What is timed: the methods that take rows (the INSERTs and the CSV/binary COPYs) start from the rows
in memory as numpy columns, the form the stager hands out, and their time includes turning those into
whatever they send. ``blog_copy`` starts from the opened dataset (unzipping and ``open_dataset`` are
reported apart, not timed: that can only flatter the blog's path). ``end_to_end`` is the product's
path, ``open_download`` + ``load.load`` from the file on disk, and its time includes opening.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg import sql

from era5bench.blog import blog_path
from era5bench.rows import Rows
from era5bench.tables import column_list
from era5etl.db import connect, table_ident
from era5etl.load import encode

Conn = psycopg.Connection[tuple[Any, ...]]


def _pylist(a: npt.NDArray[Any]) -> list[Any]:
    out: list[Any] = a.tolist()
    if a.dtype.kind == "f":
        nan = np.flatnonzero(np.isnan(a))
        for i in nan.tolist():  # NULL, as the binary encoder sends NaN; rare, so a loop is fine
            out[i] = None
    return out


def _py_columns(rows: Rows) -> list[list[Any]]:
    """Python objects per column: aware datetimes (the session's TimeZone must not matter), ints, floats."""
    times = [t.replace(tzinfo=UTC) for t in rows.time.tolist()]
    return [times, rows.location_id.tolist(), _pylist(rows.latitude), _pylist(rows.longitude),
            *(_pylist(v) for v in rows.values.values())]


def _batches(n: int, batch: int | None) -> Iterator[tuple[int, int]]:
    step = batch or n
    for a in range(0, n, max(step, 1)):
        yield a, min(n, a + step)


@dataclass
class Context:
    url: str
    rows: Rows
    paths: list[Path]
    workers: int = 2
    single_rows: int = 20_000


MethodFn = Callable[[Context, str, "int | None"], int]


def insert_row(ctx: Context, table: str, batch: int | None) -> int:
    """One INSERT per row (psycopg prepares it after a few), one commit per ``batch`` rows."""
    rows = ctx.rows.part(0, min(len(ctx.rows), ctx.single_rows))
    stmt = sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
        table_ident(table), column_list(rows.columns), sql.SQL(", ").join([sql.Placeholder()] * len(rows.columns)))
    with connect(ctx.url) as conn, conn.cursor() as cur:
        tuples = list(zip(*_py_columns(rows), strict=True))
        for a, b in _batches(len(rows), batch):
            for row in tuples[a:b]:
                cur.execute(stmt, row)
            conn.commit()
    return len(rows)


def insert_values(ctx: Context, table: str, batch: int | None) -> int:
    """One multi-row ``INSERT ... VALUES (...), (...)`` per batch, one commit per batch.

    Client-side binding: server-side parameters stop at 65535 per statement (6553 rows of ten
    columns), and the method is the one statement per batch that the studies time."""
    rows = ctx.rows
    head = sql.SQL("INSERT INTO {} ({}) VALUES ").format(table_ident(table), column_list(rows.columns))
    one = "(" + ", ".join(["%s"] * len(rows.columns)) + ")"
    with connect(ctx.url) as conn, psycopg.ClientCursor(conn) as cur:
        head_text = head.as_string(conn)
        cols = _py_columns(rows)
        for a, b in _batches(len(rows), batch):
            params = [v for row in zip(*(c[a:b] for c in cols), strict=True) for v in row]
            cur.execute(head_text + ", ".join([one] * (b - a)), params)
            conn.commit()
    return len(rows)


def insert_unnest(ctx: Context, table: str, batch: int | None) -> int:
    """A prepared ``INSERT ... SELECT * FROM unnest($1::timestamptz[], ...)``, one array per column per batch."""
    rows = ctx.rows
    types = ["timestamptz", "int4", *(["float4"] * (len(rows.columns) - 2))]
    stmt = sql.SQL("INSERT INTO {} ({}) SELECT * FROM unnest({})").format(
        table_ident(table), column_list(rows.columns),
        sql.SQL(", ").join(sql.SQL("{}::{}[]").format(sql.Placeholder(), sql.SQL(t)) for t in types))
    with connect(ctx.url) as conn, conn.cursor() as cur:
        cols = _py_columns(rows)
        for a, b in _batches(len(rows), batch):
            cur.execute(stmt, [c[a:b] for c in cols], prepare=True)
            conn.commit()
    return len(rows)


def _csv(rows: Rows) -> str:
    import pandas as pd

    frame = pd.DataFrame({"time": pd.DatetimeIndex(rows.time).tz_localize("UTC"), "location_id": rows.location_id,
                          "latitude": rows.latitude, "longitude": rows.longitude, **rows.values})
    buf = io.StringIO()
    frame.to_csv(buf, header=False, index=False)  # NaN -> empty field -> NULL in CSV COPY
    return buf.getvalue()


def csv_copy(ctx: Context, table: str, batch: int | None) -> int:
    """pandas ``to_csv`` into a buffer, ``COPY ... (FORMAT CSV)``: one COPY and commit per batch."""
    rows = ctx.rows
    stmt = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT CSV)").format(table_ident(table), column_list(rows.columns))
    with connect(ctx.url) as conn, conn.cursor() as cur:
        for a, b in _batches(len(rows), batch):
            with cur.copy(stmt) as cp:
                cp.write(_csv(rows.part(a, b)))
            conn.commit()
    return len(rows)


def _binary_copy(conn: Conn, table: str, rows: Rows, batch: int | None) -> None:
    stmt = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
        table_ident(table), column_list(encode.COPY_COLUMNS))
    with conn.cursor() as cur:
        for a, b in _batches(len(rows), batch):
            part = rows.part(a, b)
            with encode.binary_copy(cur, stmt) as cp:
                cp.write(encode.encode_rows(part.time, part.location_id, part.latitude, part.longitude,
                                            part.values))
            conn.commit()


def binary_copy(ctx: Context, table: str, batch: int | None) -> int:
    """era5etl.load.encode's vectorised binary COPY on one connection: one COPY and commit per batch."""
    with connect(ctx.url) as conn:
        _binary_copy(conn, table, ctx.rows, batch)
    return len(ctx.rows)


def worker_ranges(rows: Rows, workers: int) -> list[tuple[int, int]]:
    """Row ranges, one per worker: whole days (so each writes its own chunks) when there are enough."""
    days = rows.day_ranges()
    if len(days) >= workers:
        groups = np.array_split(np.arange(len(days)), workers)
        return [(days[int(g[0])][0], days[int(g[-1])][1]) for g in groups if len(g)]
    edges = np.linspace(0, len(rows), workers + 1).astype(int).tolist()
    return [(a, b) for a, b in itertools.pairwise(edges) if b > a]


def parallel_binary_copy(ctx: Context, table: str, batch: int | None) -> int:
    """``workers`` threads, each with its own connection and its own range of days."""

    def work(span: tuple[int, int]) -> None:
        with connect(ctx.url) as conn:
            _binary_copy(conn, table, ctx.rows.part(*span), batch)

    spans = worker_ranges(ctx.rows, ctx.workers)
    with ThreadPoolExecutor(max_workers=len(spans)) as pool:
        for f in [pool.submit(work, s) for s in spans]:
            f.result()
    return len(ctx.rows)


def blog_copy(ctx: Context, table: str, batch: int | None) -> int:
    return blog_path(ctx.url, table, ctx.paths)


def end_to_end(ctx: Context, table: str, batch: int | None) -> int:
    """The product: ``open_download`` + ``load.load`` from the file on disk, opening included."""
    from era5etl.load import load
    from era5etl.stage import open_download

    with open_download(ctx.paths) as staged:
        return load(ctx.url, table, staged).rows


@dataclass(frozen=True)
class Method:
    name: str
    label: str
    fn: MethodFn
    batched: bool
    kinds: tuple[str, ...] = ("plain", "hypertable")
    # The product's loader builds each chunk's indexes itself, on a hypertable that has none; every
    # other method writes into a table that carries the same indexes and maintains them row by row.
    bare: bool = False


METHODS: tuple[Method, ...] = (
    Method("insert_row", "single-row INSERT", insert_row, True),
    Method("insert_values", "multi-row INSERT ... VALUES", insert_values, True),
    Method("insert_unnest", "prepared INSERT ... UNNEST", insert_unnest, True),
    Method("blog_copy", "text COPY write_row (blog's path)", blog_copy, False),
    Method("csv_copy", "CSV COPY (pandas to_csv)", csv_copy, True),
    Method("binary_copy", "binary COPY (era5etl.load.encode)", binary_copy, True),
    Method("parallel_binary_copy", "parallel binary COPY", parallel_binary_copy, True),
    # load() writes hypertables only (it loads chunk by chunk).
    Method("end_to_end", "end to end (era5etl.load)", end_to_end, False, ("hypertable",), bare=True),
)
BY_NAME = {m.name: m for m in METHODS}
# What the methods' timing is measured against: the blog's own loader.
BLOG = "blog_copy"
