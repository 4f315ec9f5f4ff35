"""``python -m era5bench``: the ingest comparison of the published PostgreSQL/TimescaleDB studies,
rerun on this machine, and the long end-to-end load that the product's throughput targets are about.

Comparison. Every method loads the same rows: one synthetic CDS download (``cds.synth``, the local CDS
server's generator) of a region over ``--days`` days, sized to about ``--rows`` rows, cached under
``.local/bench/``. Each run writes into a fresh table (dropped and recreated before every run, with a
CHECKPOINT first so one run does not pay for the previous run's dirty pages), then the table's
``count(*)`` must equal the rows the method says it wrote. Repeats are interleaved (every method once,
then every method again) so that drift on a shared machine spreads over all methods instead of landing
on whichever ran last.

What is timed: the methods that take rows (the INSERTs and the CSV/binary COPYs) start from the rows
in memory as numpy columns, the form the stager hands out, and their time includes turning those into
whatever they send. ``blog_copy`` starts from the opened dataset (unzipping and ``open_dataset`` are
reported apart, not timed: that can only flatter the blog's path). ``end_to_end`` is the product's
path, ``open_download`` + ``load.load`` from the file on disk, and its time includes opening.

Sustained (``--sustained N``): ``load.load`` from global day files on disk into a fresh hypertable with
the product's indexes, in a child process so its peak RSS is the loader's own. Progress is recorded
each time the loader asks the staged download for its next block (the previous block has been handed
to COPY by then) and at each chunk's commit; rates per tenth of the rows come from those points.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import itertools
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg import sql

from era5etl.core.grid import location_ids
from era5etl.core.variables import DEFAULT_VARIABLES, VARIABLES
from era5etl.db import PROJECT_ROOT, connect, ensure_schema, redact, table_ident
from era5etl.load import encode as pgcopy

if TYPE_CHECKING:  # the stager pulls in xarray, which the CLI's other commands never need
    from era5etl.stage import Block, StagedDownload

CACHE_DIR = PROJECT_ROOT / ".local" / "bench"
DEFAULT_CHART = CACHE_DIR / "ingest.png"
# A fixed "now" makes synth's output (history stamp, ZIP timestamps, expver) the same on every run,
# so the cache key, the request, says everything about a file.
SYNTH_NOW = datetime(2025, 1, 1, tzinfo=UTC)
FIRST_DAY = date(2020, 1, 1)
GLOBAL_POINTS = 721 * 1440
# The comparison region starts here (north-west corner) and grows south; Europe, as in the samples.
REGION_NORTH, REGION_WEST, REGION_MAX_WIDTH = 70.0, -10.0, 120

KINDS = ("plain", "hypertable")
TARGET_ROWS_PER_S = 1_200_000
TARGET_X_DOWNLOAD = 1.5
TARGET_MIN_ROWS = 100_000_000
TARGET_RATIO_VS_BLOG = 10.0
TARGET_RSS_MB = 1024.0
TARGET_TENTH_BAND = 0.2

F32 = npt.NDArray[np.float32]
Conn = psycopg.Connection[tuple[Any, ...]]


class BenchError(RuntimeError):
    """The benchmark could not measure what it set out to (a table that does not hold what was sent)."""


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# -- input files ---------------------------------------------------------------------------------


def day_request(days: Sequence[date], area: Sequence[float] | None = None) -> dict[str, Any]:
    """A CDS request for all six variables, every hour of ``days`` (one month), ``area`` N/W/S/E or global."""
    if len({(d.year, d.month) for d in days}) != 1:
        raise ValueError("the days of one request must be in one month")
    req: dict[str, Any] = {
        "product_type": ["reanalysis"],
        "variable": list(DEFAULT_VARIABLES),
        "year": [f"{days[0].year}"],
        "month": [f"{days[0].month:02d}"],
        "day": [f"{d.day:02d}" for d in days],
        "time": [f"{h:02d}:00" for h in range(24)],
        "data_format": "netcdf",
        "download_format": "unarchived",
        "grid": ["0.25", "0.25"],
    }
    if area is not None:
        req["area"] = [f"{a:g}" for a in area]
    return req


def cached_download(request: dict[str, Any], cache_dir: Path = CACHE_DIR, seed: int = 0) -> Path:
    """The synthetic download for ``request``, generated once and reused (keyed by request and seed)."""
    from localcds.synth import parse_request, write_download

    key = hashlib.sha256(json.dumps({"request": request, "seed": seed}, sort_keys=True).encode()).hexdigest()[:16]
    path = cache_dir / f"{key}.{parse_request(request).extension}"
    if path.exists():
        return path
    cache_dir.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    _log(f"bench: generating {path.name} ({', '.join(request['day'])} {request['year']}-{request['month']}, "
         f"area {request.get('area', 'global')}) ...")
    # write_download replaces the file atomically, so a concurrent bench never reads half a file.
    write_download(request, path, seed=seed, now=SYNTH_NOW)
    (cache_dir / f"{key}.json").write_text(json.dumps({"request": request, "seed": seed}, indent=1))
    _log(f"bench: generated {path.name}: {path.stat().st_size / 2**20:,.0f} MiB in "
         f"{time.perf_counter() - began:.1f} s")
    return path


def region_area(rows: int, days: int) -> tuple[float, float, float, float]:
    """An N/W/S/E box on the 0.25 grid whose ``days`` x 24 hours hold about ``rows`` rows."""
    points = max(1, math.ceil(rows / (24 * days)))
    width = min(points, REGION_MAX_WIDTH)
    height = max(1, round(points / width))
    south = REGION_NORTH - (height - 1) * 0.25
    east = REGION_WEST + (width - 1) * 0.25
    return REGION_NORTH, REGION_WEST, south, east


def comparison_download(rows: int, days: int, cache_dir: Path = CACHE_DIR) -> Path:
    if not 1 <= days <= 28:
        raise ValueError(f"--days must be 1..28 (one month), not {days}")
    dates = [FIRST_DAY + timedelta(days=k) for k in range(days)]
    return cached_download(day_request(dates, region_area(rows, days)), cache_dir)


# -- the rows in memory --------------------------------------------------------------------------


@dataclass(frozen=True)
class Rows:
    """Rows as columns, in the table's units, sorted by time: what every row-taking method is given."""

    time: npt.NDArray[np.datetime64]  # datetime64[us], UTC
    location_id: npt.NDArray[np.int32]
    latitude: F32
    longitude: F32
    values: dict[str, F32]

    def __len__(self) -> int:
        return len(self.time)

    def part(self, a: int, b: int) -> Rows:
        return Rows(self.time[a:b], self.location_id[a:b], self.latitude[a:b], self.longitude[a:b],
                    {c: v[a:b] for c, v in self.values.items()})

    @property
    def columns(self) -> tuple[str, ...]:
        return ("time", "location_id", "latitude", "longitude", *self.values)

    def day_ranges(self) -> list[tuple[int, int]]:
        """Index ranges of the rows of each UTC day: each one hypertable chunk (1-day interval)."""
        day = self.time.astype("datetime64[D]")
        cuts = np.flatnonzero(day[1:] != day[:-1]) + 1
        edges = [0, *cuts.tolist(), len(self)]
        return list(itertools.pairwise(edges))


def read_rows(paths: Sequence[Path]) -> Rows:
    """A download's rows through the product's stager (so the values are exactly what load() sends)."""
    from era5etl.stage import open_download

    with open_download(list(paths)) as staged:
        if staged.location_id is None:
            raise BenchError("the bench's grid must be on the 0.25 degree lattice (location_id)")
        times, ids, lat, lon = [], [], [], []
        values: dict[str, list[F32]] = {v.column: [] for v in staged.variables}
        for block in staged.blocks(hours=max(1, len(staged.valid_time))):
            assert block.location_id is not None
            t, p = len(block.valid_time), len(block.latitude)
            times.append(np.repeat(block.valid_time.astype("datetime64[us]"), p))
            ids.append(np.tile(block.location_id, t))
            lat.append(np.tile(block.latitude, t))
            lon.append(np.tile(block.longitude, t))
            for c, a in block.values.items():
                values[c].append(a.reshape(-1))
    return Rows(np.concatenate(times), np.concatenate(ids), np.concatenate(lat), np.concatenate(lon),
                {c: np.concatenate(a) for c, a in values.items()})


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


def _cols(columns: Sequence[str]) -> sql.Composable:
    return sql.SQL(", ").join(map(sql.Identifier, columns))


# -- the methods ---------------------------------------------------------------------------------


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
        table_ident(table), _cols(rows.columns), sql.SQL(", ").join([sql.Placeholder()] * len(rows.columns)))
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
    head = sql.SQL("INSERT INTO {} ({}) VALUES ").format(table_ident(table), _cols(rows.columns))
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
        table_ident(table), _cols(rows.columns),
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
    stmt = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT CSV)").format(table_ident(table), _cols(rows.columns))
    with connect(ctx.url) as conn, conn.cursor() as cur:
        for a, b in _batches(len(rows), batch):
            with cur.copy(stmt) as cp:
                cp.write(_csv(rows.part(a, b)))
            conn.commit()
    return len(rows)


def _binary_copy(conn: Conn, table: str, rows: Rows, batch: int | None) -> None:
    stmt = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
        table_ident(table), _cols(pgcopy.COPY_COLUMNS))
    with conn.cursor() as cur:
        for a, b in _batches(len(rows), batch):
            part = rows.part(a, b)
            with cur.copy(stmt) as cp:
                cp.write(pgcopy.HEADER)
                cp.write(pgcopy.encode_rows(part.time, part.location_id, part.latitude, part.longitude,
                                            part.values))
                cp.write(pgcopy.TRAILER)
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


@dataclass
class BlogTiming:
    rows: int = 0
    open_seconds: float = 0.0
    # The post's two timers: its loader's (each hour's frame built, copied and committed) and its
    # copy_timer (the write_row loop alone). The ratio target is against the first, as the post's own
    # figures (up to its 462k rows/s) are; the second is printed beside it.
    seconds: float = 0.0
    copy_seconds: float = 0.0


def blog_frame(ds: Any, tdim: str, hour: int, present: Sequence[Any], columns: Sequence[str]) -> Any:
    """One hour as the post's ``weather_dataframe`` builds it: ``isel(time=n).to_dataframe()`` and
    ``reset_index()``, units converted column by column, longitude remapped with a per-row
    ``Series.apply(lambda ...)``, ids computed from the coordinates, the table's columns picked.

    Only what keeps the rows identical to the product's is changed: units are computed in float64
    and rounded to float4 once (the post subtracts in float32), the lambda also maps -180 to 180
    (the table's (-180, 180]), and times are the naive UTC the post sends, in a UTC session.
    """
    df = ds.isel({tdim: hour}).to_dataframe().reset_index()
    df = df.rename(columns={tdim: "time", **{v.short_name: v.column for v in present}})
    for v in present:
        df[v.column] = (df[v.column].to_numpy(np.float64) * v.scale + v.offset).astype(np.float32)
    df["longitude"] = df["longitude"].apply(lambda x: x - 360.0 if x > 180.0 else x + 360.0 if x <= -180.0 else x)
    df["location_id"] = location_ids(df["latitude"].to_numpy(), df["longitude"].to_numpy())
    df["latitude"] = df["latitude"].astype(np.float32)
    df["longitude"] = df["longitude"].astype(np.float32)
    return df[list(columns)]


def blog_path(url: str, table: str, paths: Sequence[Path], hours: int | None = None,
              timing: BlogTiming | None = None) -> int:
    """The trillion-rows post's psycopg3 loader (``copy_data_using_psycopg3`` over ``weather_dataframe``):
    per hour, the frame (``blog_frame``), then ``copy.write_row(row)`` for each of
    ``df.itertuples(index=False, name=None)`` in a text COPY, and a commit.

    Done to the same table columns and units as the product so both load the same rows. A new-CDS
    ZIP is unpacked and its members merged first, as anyone opening such a download with xarray has
    to. Opening is not timed (the post reopens its files every hour: leaving that out can only
    flatter the blog's path); each hour's frame, COPY and commit are.
    """
    import xarray as xr

    timing = timing if timing is not None else BlogTiming()
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="era5-bench-blog-") as tmp:
        files: list[Path] = []
        for path in paths:
            if zipfile.is_zipfile(path):
                with zipfile.ZipFile(path) as zf:
                    for i, member in enumerate(zf.namelist()):
                        target = Path(tmp) / f"{i:03d}.nc"
                        target.write_bytes(zf.read(member))
                        files.append(target)
            else:
                files.append(Path(path))
        datasets = [xr.open_dataset(f) for f in files]
        try:
            ds = datasets[0] if len(datasets) == 1 else xr.merge(datasets, compat="override", join="exact")
            tdim = "valid_time" if "valid_time" in ds.dims else "time"
            present = [v for v in VARIABLES if v.short_name in ds.data_vars]
            columns = ["time", "location_id", "latitude", "longitude", *(v.column for v in present)]
            stmt = sql.SQL("COPY {} ({}) FROM STDIN").format(table_ident(table), _cols(columns))
            steps = ds.sizes[tdim] if hours is None else min(hours, ds.sizes[tdim])
            timing.open_seconds = time.perf_counter() - began
            with connect(url) as conn, conn.cursor() as cur:
                cur.execute("SET TIME ZONE 'UTC'")  # the post's naive times are UTC
                conn.commit()
                for i in range(steps):
                    t0 = time.perf_counter()
                    df = blog_frame(ds, tdim, i, present, columns)
                    t1 = time.perf_counter()
                    with cur.copy(stmt) as cp:
                        for row in df.itertuples(index=False, name=None):
                            cp.write_row(row)
                    t2 = time.perf_counter()
                    conn.commit()
                    timing.seconds += time.perf_counter() - t0
                    timing.copy_seconds += t2 - t1
                    timing.rows += len(df)
        finally:
            for d in datasets:
                d.close()
    return timing.rows


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


# -- tables --------------------------------------------------------------------------------------


def product_indexes() -> list[tuple[str, str]]:
    """The indexes the product keeps on every chunk, as (name suffix, definition after ``ON table``)."""
    from era5etl import load

    return list(getattr(load, "CHUNK_INDEXES", ()))


def create_table(url: str, name: str, kind: str, template: str, *, bare: bool = False) -> None:
    """A fresh table: the product's hypertable (ensure_schema), or a plain one with the same columns and
    indexes (``LIKE`` the product's hypertable: its indexes, no TimescaleDB trigger). Unless ``bare``, the
    table also gets the indexes the loader builds per chunk, so every method ends with the same indexes."""
    drop_table(url, name)
    if kind == "hypertable":
        ensure_schema(url, name)
    else:
        with connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE TABLE {} (LIKE {} INCLUDING ALL)").format(table_ident(name),
                                                                                   table_ident(template)))
    if bare:
        return
    base = name.split(".")[-1]
    with connect(url, autocommit=True) as conn:
        for suffix, definition in product_indexes():
            conn.execute(sql.SQL("CREATE INDEX {} ON {} " + definition).format(  # definition: load's constant
                sql.Identifier(f"{base}_{suffix}"), table_ident(name)))


def drop_table(url: str, name: str) -> None:
    with connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(table_ident(name)))


def _cleanup(url: str, names: Sequence[str]) -> None:
    """Drop the bench's tables on the way out without hiding why the run stopped (often the server went away)."""
    for name in names:
        try:
            drop_table(url, name)
        except Exception as exc:
            _log(f"bench: could not drop {name} ({exc}); drop it by hand")


def count_rows(url: str, table: str) -> int:
    with connect(url) as conn:
        row = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(table_ident(table))).fetchone()
    return int(row[0]) if row else 0


def checkpoint(url: str) -> bool:
    """Flush dirty pages outside the timed part; False when not allowed (not a superuser)."""
    try:
        with connect(url, autocommit=True) as conn:
            conn.execute("CHECKPOINT")
    except psycopg.Error:
        return False
    return True


def server_settings(url: str) -> dict[str, str]:
    names = ("fsync", "synchronous_commit", "full_page_writes", "wal_level", "shared_buffers", "max_wal_size",
             "server_version", "timescaledb.license")
    out: dict[str, str] = {}
    with connect(url) as conn:
        for n in names:
            try:
                row = conn.execute(sql.SQL("SHOW {}").format(sql.Identifier(n))).fetchone()
            except psycopg.Error:
                conn.rollback()
                continue
            out[n] = str(row[0]) if row else ""
        ext = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'").fetchone()
        out["timescaledb"] = str(ext[0]) if ext else ""
    return out


def durable(settings: dict[str, str]) -> bool:
    return (settings.get("fsync") == "on" and settings.get("full_page_writes") == "on"
            and settings.get("synchronous_commit") in ("on", "remote_write", "remote_apply"))


def table_facts(url: str, table: str) -> dict[str, Any]:
    """What the loaded hypertable holds besides rows: its indexes (its own and its chunks'), whether it
    is WAL-logged, its size."""
    schema, _, base = table.rpartition(".")
    with connect(url) as conn:
        regclass = table_ident(table).as_string(conn)
        own = conn.execute("SELECT indexdef FROM pg_indexes WHERE tablename = %s ORDER BY indexname",
                           (base,)).fetchall()
        chunks = conn.execute(
            "SELECT c.chunk_schema, c.chunk_name, (SELECT count(*) FROM pg_indexes i WHERE i.schemaname ="
            " c.chunk_schema AND i.tablename = c.chunk_name) FROM timescaledb_information.chunks c"
            " WHERE c.hypertable_schema = COALESCE(NULLIF(%s, ''), current_schema()) AND c.hypertable_name = %s"
            " ORDER BY c.range_start", (schema, base)).fetchall()
        first = conn.execute("SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND tablename = %s"
                             " ORDER BY indexname", (chunks[0][0], chunks[0][1])).fetchall() if chunks else []
        persistence = conn.execute("SELECT relpersistence FROM pg_class WHERE oid = %s::regclass",
                                   (regclass,)).fetchone()
        size = conn.execute("SELECT pg_size_pretty(hypertable_size(%s::regclass))", (regclass,)).fetchone()
    return {"indexes": [r[0] for r in own], "chunk_count": len(chunks),
            "indexes_per_chunk": sorted({int(c[2]) for c in chunks}),
            "first_chunk_indexes": [r[0] for r in first],
            "logged": bool(persistence and persistence[0] == "p"), "size": size[0] if size else None}


# -- the comparison ------------------------------------------------------------------------------


@dataclass
class Result:
    method: str
    label: str
    kind: str
    batch: int | None
    rows: int = 0
    seconds: list[float] = field(default_factory=list)

    @property
    def rates(self) -> list[float]:
        return [self.rows / s for s in self.seconds if s > 0]

    @property
    def median(self) -> float:
        return statistics.median(self.rates) if self.rates else 0.0

    @property
    def min(self) -> float:
        return min(self.rates, default=0.0)

    @property
    def max(self) -> float:
        return max(self.rates, default=0.0)

    def as_dict(self) -> dict[str, Any]:
        return {"method": self.method, "label": self.label, "table": self.kind, "batch": self.batch,
                "rows": self.rows, "seconds": [round(s, 4) for s in self.seconds],
                "median_rows_per_s": round(self.median), "min_rows_per_s": round(self.min),
                "max_rows_per_s": round(self.max)}


def run_comparison(url: str, ctx: Context, *, methods: Sequence[str] = tuple(BY_NAME),
                   batch_sizes: Sequence[int] = (1000, 10_000, 100_000), kinds: Sequence[str] = KINDS,
                   repeat: int = 3, run_id: str | None = None, flush: bool = True,
                   keep_tables: bool = False) -> list[Result]:
    """Every (method, table kind, batch size) ``repeat`` times, interleaved; each into a fresh table whose
    row count afterwards must be what the method wrote."""
    run_id = run_id or uuid.uuid4().hex[:8]
    template = f"bench_{run_id}_template"
    names = {k: f"bench_{run_id}_{k}" for k in kinds}
    results: list[Result] = []
    for name in methods:
        m = BY_NAME[name]
        for kind in kinds:
            if kind not in m.kinds:
                continue
            for b in (batch_sizes if m.batched else [None]):
                results.append(Result(m.name, m.label, kind, b))
    ensure_schema(url, template)
    try:
        for r in range(repeat):
            for res in results:
                table = names[res.kind]
                create_table(url, table, res.kind, template, bare=BY_NAME[res.method].bare)
                if flush:
                    checkpoint(url)
                began = time.perf_counter()
                rows = BY_NAME[res.method].fn(ctx, table, res.batch)
                seconds = time.perf_counter() - began
                held = count_rows(url, table)
                if held != rows:
                    raise BenchError(f"{res.method} into the {res.kind} table says it wrote {rows} rows but the "
                                     f"table holds {held}")
                if res.seconds and rows != res.rows:
                    raise BenchError(f"{res.method}: {rows} rows this time, {res.rows} before")
                res.rows = rows
                res.seconds.append(seconds)
                _log(f"bench [{r + 1}/{repeat}] {res.method:<21} {res.kind:<10} {_batch(res.batch):>7}: "
                     f"{rows:>9,} rows {seconds:8.3f} s {rows / seconds if seconds > 0 else 0:>12,.0f} rows/s")
    finally:
        if not keep_tables:
            _cleanup(url, [*names.values(), template])
    return results


def _batch(b: int | None) -> str:
    return "-" if b is None else f"{b:,}"


def blog_rate(results: Sequence[Result], kind: str) -> float | None:
    for r in results:
        if r.method == BLOG and r.kind == kind and r.median > 0:
            return r.median
    return None


def format_table(results: Sequence[Result]) -> str:
    head = (f"{'method':<36} {'table':<10} {'batch':>7} {'rows':>9} {'median rows/s':>14} {'min':>12} "
            f"{'max':>12} {'x blog':>7}")
    lines = [head, "-" * len(head)]
    for r in results:
        base = blog_rate(results, r.kind)
        ratio = f"{r.median / base:7.2f}" if base else f"{'-':>7}"
        lines.append(f"{r.label:<36} {r.kind:<10} {_batch(r.batch):>7} {r.rows:>9,} {r.median:>14,.0f} "
                     f"{r.min:>12,.0f} {r.max:>12,.0f} {ratio}")
    return "\n".join(lines)


# -- sustained -----------------------------------------------------------------------------------


def sustained_plan(total_rows: int, area: Sequence[float] | None = None, cache_dir: Path = CACHE_DIR
                   ) -> list[tuple[Path, str | None]]:
    """Day files (each a distinct day) holding at least ``total_rows`` rows in whole hours, and where to
    stop in the last one (an ISO end time, or None for the whole day)."""
    from localcds.synth import parse_request

    points = len(parse_request(day_request([FIRST_DAY], area)).latitudes) * len(
        parse_request(day_request([FIRST_DAY], area)).longitudes)
    hours = max(1, math.ceil(total_rows / points))
    plan: list[tuple[Path, str | None]] = []
    for k in range(math.ceil(hours / 24)):
        day = FIRST_DAY + timedelta(days=k)
        left = hours - 24 * k
        end = (datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(hours=left)).isoformat() \
            if left < 24 else None
        plan.append((cached_download(day_request([day], area), cache_dir), end))
    return plan


class _Progress:
    """(rows written, seconds) points: at each block the loader asks for, at each commit, at each file's end."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.block_rows = 0
        self.chunk_rows = 0
        self.points: list[tuple[int, float]] = [(0, 0.0)]
        self.lock = threading.Lock()

    def mark(self, rows: int | None = None) -> None:
        with self.lock:
            if rows is not None:
                self.block_rows += rows
            self.points.append((self.block_rows, time.perf_counter() - self.t0))

    def chunk(self, rows: int) -> None:
        with self.lock:
            self.chunk_rows += rows
            # A loader that stops reading through blocks() still leaves its commits as measured points.
            self.block_rows = max(self.block_rows, self.chunk_rows)
        self.mark()


class _TimedStaged:
    """The staged download as load() sees it, noting when each block has been consumed."""

    def __init__(self, staged: StagedDownload, progress: _Progress) -> None:
        self._staged = staged
        self._progress = progress

    def __getattr__(self, name: str) -> Any:
        return getattr(self._staged, name)

    def blocks(self, start: datetime | None = None, end: datetime | None = None, hours: int = 1
               ) -> Iterator[Block]:
        return self._timed(self._staged.blocks(start, end, hours))

    def _timed(self, inner: Iterator[Block]) -> Iterator[Block]:
        pending = 0
        for block in inner:
            if pending:
                self._progress.mark(pending)  # asked for the next one: the previous one is written
            pending = block.rows
            yield block
        if pending:
            self._progress.mark(pending)


def sustained_child() -> None:
    """Run in a fresh interpreter: reads a JSON spec on stdin, loads, prints a JSON result as its last line."""
    import psutil

    from era5etl.load import ChunkResult, load
    from era5etl.stage import open_download

    spec = json.loads(sys.stdin.read())
    proc = psutil.Process()
    peak = [proc.memory_info().rss]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(spec.get("sample_s", 0.1)):
            peak[0] = max(peak[0], proc.memory_info().rss)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    progress = _Progress()
    chunks: list[dict[str, Any]] = []
    opens: list[float] = []
    total = 0

    def on_chunk(c: ChunkResult) -> None:
        progress.chunk(c.rows)
        chunks.append({**asdict(c), "rows_per_s": round(c.rows_per_s)})
        _log(f"bench sustained: chunk {c.start[:10]} {c.rows:,} rows in {c.seconds:.1f} s "
             f"({c.rows_per_s:,.0f} rows/s); {progress.block_rows:,} rows so far")

    # The day files are opened as one download split in parts by days, as a month over the CDS cost
    # limit arrives, so one load() sees every chunk and runs its writers side by side throughout.
    paths = [Path(p) for p, _ in spec["files"]]
    last_end = spec["files"][-1][1]
    t = time.perf_counter()
    with open_download(paths) as staged:
        opens.append(time.perf_counter() - t)
        timed = cast("StagedDownload", _TimedStaged(staged, progress))
        result = load(spec["url"], spec["table"], timed, on_chunk=on_chunk,
                      end=datetime.fromisoformat(last_end) if last_end else None)
    total += result.rows
    progress.mark()
    seconds = time.perf_counter() - progress.t0
    done.set()
    sampler.join()
    peak[0] = max(peak[0], proc.memory_info().rss)
    print(json.dumps({
        "rows": total, "seconds": seconds, "points": progress.points, "chunks": chunks, "open_seconds": opens,
        "vm_hwm_mb": _vm_hwm_mb(), "psutil_peak_rss_mb": peak[0] / 2**20,
    }))


def _vm_hwm_mb() -> float:
    """This process's own peak RSS. ru_maxrss can be more: Linux keeps the peak of the memory image a
    process had before exec, here a fork of the bench, which may hold the comparison's rows."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def tenths(points: Sequence[tuple[int, float]], total: int) -> list[dict[str, float]]:
    """Rows per second over each tenth of the rows. The time a boundary was crossed is interpolated
    between the two measured points around it (a block apart: about a million rows)."""
    rows = np.array([p[0] for p in points], dtype=np.float64)
    secs = np.array([p[1] for p in points], dtype=np.float64)
    out = []
    prev_t = 0.0
    for k in range(1, 11):
        b = total * k / 10
        if k == 10:
            t = float(secs[-1])
        else:
            i = int(np.searchsorted(rows, b, "left"))
            r0, r1, t0, t1 = rows[i - 1], rows[i], secs[i - 1], secs[i]
            t = float(t0 + (t1 - t0) * (b - r0) / (r1 - r0)) if r1 > r0 else float(t1)
        dt = t - prev_t
        out.append({"tenth": k, "end_s": round(t, 3), "rows_per_s": round(total / 10 / dt) if dt > 0 else 0})
        prev_t = t
    return out


def run_sustained(url: str, total_rows: int, *, area: Sequence[float] | None = None, run_id: str | None = None,
                  cache_dir: Path = CACHE_DIR, keep_table: bool = False, blog_hours: int = 1) -> dict[str, Any]:
    """The product's load of ``total_rows`` rows (whole hours of distinct days) in a child process,
    plus the blog's path on the first hours of the same first file."""
    run_id = run_id or uuid.uuid4().hex[:8]
    plan = sustained_plan(total_rows, area, cache_dir)
    table = f"bench_{run_id}_sustained"
    blog_table = f"bench_{run_id}_blog"
    out: dict[str, Any] = {"requested_rows": total_rows, "files": [str(p) for p, _ in plan], "table": table}
    try:
        # The blog's path on the same data, first: the table it writes is dropped before the long load.
        create_table(url, blog_table, "hypertable", blog_table)
        checkpoint(url)
        timing = BlogTiming()
        blog_path(url, blog_table, [plan[0][0]], hours=blog_hours, timing=timing)
        held = count_rows(url, blog_table)
        if held != timing.rows:
            raise BenchError(f"the blog's path wrote {timing.rows} rows but the table holds {held}")
        drop_table(url, blog_table)
        out["blog"] = {"rows": timing.rows, "seconds": round(timing.seconds, 3),
                       "copy_seconds": round(timing.copy_seconds, 3),
                       "open_seconds": round(timing.open_seconds, 3),
                       "rows_per_s": round(timing.rows / timing.seconds) if timing.seconds > 0 else 0,
                       "copy_rows_per_s": round(timing.rows / timing.copy_seconds) if timing.copy_seconds > 0 else 0}
        _log(f"bench sustained: blog's path on the first {blog_hours} h of {plan[0][0].name}: "
             f"{out['blog']['rows_per_s']:,} rows/s (its write_row COPY alone {out['blog']['copy_rows_per_s']:,})")

        create_table(url, table, "hypertable", table, bare=True)
        checkpoint(url)
        spec = {"url": url, "table": table, "files": [[str(p), e] for p, e in plan]}
        _log(f"bench sustained: loading {len(plan)} day file(s) into {table} ...")
        proc = subprocess.run([sys.executable, "-c", "from era5bench.bench import sustained_child; sustained_child()"],
                              input=json.dumps(spec), stdout=subprocess.PIPE, text=True,
                              check=False)
        if proc.returncode != 0:
            raise BenchError(f"the sustained load failed (exit {proc.returncode}); its messages are above")
        child = json.loads(proc.stdout.strip().splitlines()[-1])
        held = count_rows(url, table)
        if held != child["rows"]:
            raise BenchError(f"the sustained load says {child['rows']} rows but {table} holds {held}")
        per_tenth = tenths(child["points"], child["rows"])
        first, last = per_tenth[0]["rows_per_s"], per_tenth[-1]["rows_per_s"]
        gaps = np.diff([p[0] for p in child["points"]])
        out.update({
            "rows": child["rows"], "seconds": round(child["seconds"], 3),
            "rows_per_s": round(child["rows"] / child["seconds"]),
            "tenths": per_tenth, "last_tenth_vs_first_tenth": round(last / first, 4) if first else None,
            "progress_points": len(child["points"]), "max_rows_between_points": int(gaps.max()) if gaps.size else 0,
            "chunks": child["chunks"], "open_seconds": [round(s, 3) for s in child["open_seconds"]],
            "client_peak_rss_mb": round(child["vm_hwm_mb"], 1),
            "psutil_peak_rss_mb": round(child["psutil_peak_rss_mb"], 1),
            **table_facts(url, table),
        })
    finally:
        _cleanup(url, [blog_table] if keep_table else [blog_table, table])
    return out


# -- report --------------------------------------------------------------------------------------


def write_chart(path: Path, results: Sequence[Result], sustained: dict[str, Any] | None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    configs = list(dict.fromkeys((r.method, r.batch) for r in results))
    by_key = {(r.method, r.batch, r.kind): r for r in results}
    label = {r.method: r.label for r in results}
    heights = ([max(len(configs), 1)] if results else []) + ([6] if sustained else [])
    fig, axes = plt.subplots(len(heights), 1, squeeze=False, gridspec_kw={"height_ratios": heights},
                             figsize=(11, 0.45 * len(configs) + 2.5 + (3.5 if sustained else 0)))
    if results:
        ax = axes[0][0]
        kinds = [k for k in KINDS if any(r.kind == k for r in results)]
        h = 0.8 / max(len(kinds), 1)
        for j, kind in enumerate(kinds):
            med, lo, hi, ys = [], [], [], []
            for i, (m, b) in enumerate(configs):
                r = by_key.get((m, b, kind))
                if r is None or r.median <= 0:
                    continue
                ys.append(i + (j - (len(kinds) - 1) / 2) * h)
                med.append(r.median)
                lo.append(r.median - r.min)
                hi.append(r.max - r.median)
            ax.barh(ys, med, height=h, xerr=[lo, hi], capsize=2, label=kind)
        ax.set_yticks(np.arange(len(configs)), [label[m] + (f" [{b:,}]" if b else "") for m, b in configs],
                      fontsize=8)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel("rows/s (median of repeats; bars min..max; [rows per batch])")
        ax.set_title(f"Ingest into PostgreSQL/TimescaleDB, {max(r.rows for r in results):,} ERA5-shaped rows"
                     " (single-row INSERT: fewer, see the table)")
        ax.grid(axis="x", which="both", alpha=0.3)
        ax.legend(loc="lower right")
    if sustained:
        ax2 = axes[-1][0]
        rates = [t["rows_per_s"] for t in sustained["tenths"]]
        ax2.bar(range(1, 11), rates, color="tab:green")
        ax2.axhline(TARGET_ROWS_PER_S, color="tab:red", linestyle="--", label=f"target {TARGET_ROWS_PER_S:,}/s")
        ax2.set_xticks(range(1, 11))
        ax2.set_xlabel("tenth of the rows")
        ax2.set_ylabel("rows/s")
        ax2.set_title(f"End to end (era5etl.load), {sustained['rows']:,} rows: {sustained['rows_per_s']:,} rows/s")
        ax2.legend(loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def summarize(results: Sequence[Result], sustained: dict[str, Any] | None, settings: dict[str, str]
              ) -> dict[str, Any]:
    """The headline figures and the targets, each with what it was measured on."""
    def median_of(method: str) -> float | None:
        for r in results:
            if r.method == method and r.kind == "hypertable" and r.median > 0:
                return r.median
        return None

    if sustained:
        e2e: float | None = sustained["rows_per_s"]
        e2e_on = f"sustained load of {sustained['rows']:,} rows"
        blog: float | None = sustained["blog"]["rows_per_s"]
        blog_copy: float | None = sustained["blog"].get("copy_rows_per_s")
        blog_on = f"first {sustained['blog']['rows']:,} rows of the sustained data"
        rss = sustained["client_peak_rss_mb"]
        tenth = sustained["last_tenth_vs_first_tenth"]
    else:
        e2e, blog = median_of("end_to_end"), median_of(BLOG)
        blog_copy = None
        e2e_on = blog_on = "comparison rows, hypertable, median"
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        tenth = None
    ratio = e2e / blog if e2e and blog else None
    ratio_copy = e2e / blog_copy if e2e and blog_copy else None
    sustained_rows = sustained["rows"] if sustained else 0
    # None: not checked. The targets are about the sustained load; a comparison alone checks only the ratio.
    on_sustained = None if not sustained else True
    targets = {
        "end_to_end_rows_per_s": {
            "target": f">= {TARGET_ROWS_PER_S:,} over >= {TARGET_MIN_ROWS:,} rows, durable settings",
            "met": on_sustained and bool(e2e and e2e >= TARGET_ROWS_PER_S and sustained_rows >= TARGET_MIN_ROWS
                                         and durable(settings) and sustained and sustained.get("logged"))},
        "ratio_vs_blog": {"target": f">= {TARGET_RATIO_VS_BLOG:g}",
                          "met": None if ratio is None else ratio >= TARGET_RATIO_VS_BLOG},
        "client_peak_rss_mb": {"target": f"<= {TARGET_RSS_MB:g}", "met": on_sustained and rss <= TARGET_RSS_MB},
        "last_tenth_vs_first_tenth": {"target": f"{1 - TARGET_TENTH_BAND:g}..{1 + TARGET_TENTH_BAND:g}",
                                      "met": on_sustained and bool(tenth and abs(tenth - 1) <= TARGET_TENTH_BAND)},
    }
    return {
        "end_to_end_rows_per_s": round(e2e) if e2e else None, "end_to_end_measured_on": e2e_on,
        "blog_path_rows_per_s": round(blog) if blog else None, "blog_path_measured_on": blog_on,
        "ratio_vs_blog": round(ratio, 3) if ratio else None,
        # The post's copy_timer: its write_row loop without building each hour's frame.
        "blog_copy_loop_rows_per_s": round(blog_copy) if blog_copy else None,
        "ratio_vs_blog_copy_loop": round(ratio_copy, 3) if ratio_copy else None,
        "client_peak_rss_mb": round(rss, 1),
        "last_tenth_vs_first_tenth": tenth,
        "durable_settings": durable(settings),
        "targets": targets,
    }


# -- CLI -----------------------------------------------------------------------------------------


def _ints(text: str) -> list[int]:
    try:
        out = [int(v.replace("_", "")) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return out


def _names(choices: Sequence[str]) -> Callable[[str], list[str]]:
    def parse(text: str) -> list[str]:
        names = [v.strip() for v in text.split(",") if v.strip()]
        if names == ["all"]:
            return list(choices)
        if names == ["none"]:
            return []
        bad = [n for n in names if n not in choices]
        if bad or not names:
            raise argparse.ArgumentTypeError(f"unknown {bad or text!r}; choose from all, {', '.join(choices)}")
        return names
    return parse


def _area(text: str) -> list[float]:
    try:
        parts = [float(v) for v in text.replace(",", "/").split("/")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"area {text!r}: expected N/W/S/E") from None
    if len(parts) != 4:
        raise argparse.ArgumentTypeError(f"area {text!r}: expected N/W/S/E")
    return parts


def _positive(text: str) -> int:
    v = int(text.replace("_", ""))
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m era5bench",
        description="Rerun the PostgreSQL/TimescaleDB ingest comparison on this machine's database, on "
                    "ERA5-shaped rows from synthetic CDS downloads (cached in .local/bench/): load methods "
                    "(INSERT .. COPY), the sustained end-to-end load, storage layouts.")
    p.add_argument("--rows", type=_positive, default=200_000,
                   help="rows every method loads (rounded to whole grid rows; default 200000)")
    p.add_argument("--single-rows", type=_positive, default=20_000,
                   help="single-row INSERT loads only the first this many rows (default 20000)")
    p.add_argument("--days", type=_positive, default=4, help="days the comparison rows span (default 4)")
    p.add_argument("--batch-sizes", type=_ints, default=[1000, 10_000, 100_000],
                   help="rows per batch for the batched methods (default 1000,10000,100000)")
    p.add_argument("--repeat", type=_positive, default=3, help="runs of each (default 3)")
    p.add_argument("--workers", type=_positive, default=2, help="connections of parallel binary COPY (default 2)")
    p.add_argument("--methods", type=_names(list(BY_NAME)), default=list(BY_NAME),
                   help=f"comma-separated subset of: {', '.join(BY_NAME)}; or none (default all)")
    p.add_argument("--tables", type=_names(list(KINDS)), default=list(KINDS),
                   help="plain, hypertable or both (default both)")
    p.add_argument("--sustained", type=_positive, metavar="N",
                   help="also load N rows end to end (global day files) and report the rate per tenth")
    p.add_argument("--sustained-area", type=_area, metavar="N/W/S/E",
                   help="area of the sustained files (default global)")
    p.add_argument("--blog-hours", type=_positive, default=1,
                   help="hours of the sustained data the blog's path loads for the ratio (default 1)")
    p.add_argument("--layouts", action="store_true",
                   help="also compare the storage layouts (plain, hypertable, compressed, columnstore, the server "
                        "alone) on the same day(s): sizes, rates, reads, and the projected size of 1940-now")
    p.add_argument("--layout-days", type=_positive, default=1, help="days of the layout comparison (default 1)")
    p.add_argument("--layout-area", type=_area, metavar="N/W/S/E",
                   help="area of the layout comparison (default global)")
    p.add_argument("--layout-kinds", type=_names(["plain", "hypertable", "compressed", "columnstore", "segmentby",
                                                  "placefirst"]),
                   default=["plain", "hypertable", "compressed", "columnstore"],
                   help="layouts to compare (default plain,hypertable,compressed,columnstore; also segmentby: "
                        "one place a batch, placefirst: batches ordered by place then time)")
    p.add_argument("--chart", type=Path, default=DEFAULT_CHART, help=f"PNG to write (default {DEFAULT_CHART})")
    p.add_argument("--no-chart", action="store_true", help="write no PNG chart")
    p.add_argument("--no-checkpoint", action="store_true", help="no CHECKPOINT before each timed run")
    p.add_argument("--keep-tables", action="store_true", help="leave the bench tables in the database")
    p.add_argument("--check", action="store_true", help="exit 1 unless every target is met")
    p.add_argument("--json", action="store_true", help="end with one JSON object of the figures")
    p.set_defaults(func=cmd_bench)
    return p


def _run_layouts(url: str, args: argparse.Namespace) -> dict[str, Any]:
    from era5bench.layouts import projection, run_layouts
    from era5etl.settings import Settings

    days = [FIRST_DAY + timedelta(days=k) for k in range(args.layout_days)]
    path = cached_download(day_request(days, args.layout_area))
    figures = run_layouts(url, path, layouts=args.layout_kinds, keep=args.keep_tables)
    area = Settings.from_env().area
    figures["projection"] = projection(figures, area.points(Settings.from_env().grid))
    if figures["projection"]:
        figures["projection"]["area"]["name"] = str(area)
    return figures


def _print_layouts(figures: dict[str, Any]) -> None:
    from era5bench.layouts import format_layouts

    print(f"\nlayouts: {figures['rows']:,} rows from {Path(figures['download']).name} "
          f"({figures['download_bytes'] / 1e6:,.1f} MB downloaded); reads: median of 5 warm runs")
    print(format_layouts(figures))
    by = {f["layout"]: f for f in figures["layouts"]}
    col, server = by.get("columnstore"), by.get("server alone")
    if col and server and "rows_per_s" in server:
        ratio = col["rows_per_s"] / server["rows_per_s"]
        print(f"columnstore load vs the server alone (COPY from files on the server, {server['writers']} at once): "
              f"{col['rows_per_s']:,} / {server['rows_per_s']:,} rows/s = {ratio:.2f}")
    if col and col.get("column_bytes_per_row"):
        print("columnstore bytes a row by column: " + ", ".join(
            f"{c} {b}" for c, b in col["column_bytes_per_row"].items()))
    if col:
        verdict = "met" if col["x_download"] <= TARGET_X_DOWNLOAD else "NOT met"
        print(f"target storage: {col['x_download']}x the download (want <= {TARGET_X_DOWNLOAD}): {verdict}")
        for name, p in figures.get("projection", {}).items():
            where = "global" if name == "global" else f"area {p.get('name', '')}"
            print(f"1940-now, {where}: {p['rows']:,} rows, {p['bytes'] / 1e12:,.3f} TB in the columnstore, "
                  f"~{p['load_hours']:,} h of loading at {col['rows_per_s']:,} rows/s")


def cmd_bench(args: argparse.Namespace) -> int:
    from era5etl.db import database_url

    url = database_url()
    settings = server_settings(url)
    run_id = uuid.uuid4().hex[:8]
    results: list[Result] = []
    comparison: dict[str, Any] = {}
    if args.methods:
        path = comparison_download(args.rows, args.days)
        rows = read_rows([path])
        ctx = Context(url, rows, [path], workers=args.workers, single_rows=args.single_rows)
        comparison = {"file": str(path), "rows": len(rows), "days": len(rows.day_ranges()),
                      "single_row_insert_rows": min(len(rows), args.single_rows)}
        _log(f"bench: {len(rows):,} rows over {comparison['days']} day(s) from {path.name}; "
             f"server {settings.get('server_version', '?')}, TimescaleDB {settings.get('timescaledb', '?')}, "
             f"{redact(url)}")
        results = run_comparison(url, ctx, methods=args.methods, batch_sizes=args.batch_sizes, kinds=args.tables,
                                 repeat=args.repeat, run_id=run_id, flush=not args.no_checkpoint,
                                 keep_tables=args.keep_tables)
    sustained = None
    if args.sustained:
        sustained = run_sustained(url, args.sustained, area=args.sustained_area, run_id=run_id,
                                  keep_table=args.keep_tables, blog_hours=args.blog_hours)
    layouts = None
    if args.layouts:
        layouts = _run_layouts(url, args)
    summary = summarize(results, sustained, settings)

    if results:
        print(format_table(results))
        if comparison["single_row_insert_rows"] < comparison["rows"] and "insert_row" in args.methods:
            print(f"single-row INSERT loaded the first {comparison['single_row_insert_rows']:,} rows only; "
                  "its rate is the one measured on those")
    if sustained:
        print(f"\nend to end (era5etl.load): {sustained['rows']:,} rows in {sustained['seconds']:,.1f} s = "
              f"{sustained['rows_per_s']:,} rows/s; client peak RSS {sustained['client_peak_rss_mb']:,.0f} MB "
              f"(psutil {sustained['psutil_peak_rss_mb']:,.0f} MB)")
        print("per tenth (rows/s): " + ", ".join(f"{t['rows_per_s']:,}" for t in sustained["tenths"]))
        print(f"blog's path on the same data: {sustained['blog']['rows_per_s']:,} rows/s "
              f"({sustained['blog']['rows']:,} rows; the post's loader timer: frame, COPY, commit); its "
              f"write_row COPY alone (the post's copy_timer): {sustained['blog']['copy_rows_per_s']:,} rows/s")
        if summary["ratio_vs_blog_copy_loop"]:
            print(f"end to end vs the blog's COPY loop alone: {summary['ratio_vs_blog_copy_loop']:.2f}x")
    if layouts:
        _print_layouts(layouts)
    fmt = {"ratio_vs_blog": "{:.2f}x", "last_tenth_vs_first_tenth": "{:.3f}"}
    print(f"\nsettings: fsync={settings.get('fsync')} synchronous_commit={settings.get('synchronous_commit')} "
          f"full_page_writes={settings.get('full_page_writes')}")
    for name, t in summary["targets"].items():
        value = summary[name]
        shown = "-" if value is None else fmt.get(name, "{:,}").format(value)
        verdict = "not checked (needs --sustained)" if t["met"] is None else "met" if t["met"] else "NOT met"
        print(f"target {name}: {shown} (want {t['target']}): {verdict}")
    if (results or sustained) and not args.no_chart:
        write_chart(args.chart, results, sustained)
        print(f"chart: {args.chart}")
    if args.json:
        print(json.dumps({
            **summary, "settings": settings, "comparison": comparison, "repeat": args.repeat,
            "results": [r.as_dict() for r in results], "sustained": sustained, "layouts": layouts,
            "chart": None if args.no_chart or not (results or sustained) else str(args.chart),
            "client": {"pid": os.getpid(), "python": sys.version.split()[0]},
        }))
    if args.check and not all(t["met"] is True for t in summary["targets"].values()):
        return 1
    return 0
