"""``python -m era5bench --layouts``: the storage layouts compared on the same rows, as the
compression seed's table does (plain table, hypertable, compressed hypertable), plus the product's
direct-to-columnstore load, and the server alone (COPY from a file on the server into the same layout).

Each layout gets a fresh table and the same download (by default one global day, 24.9M rows):

* ``plain``: one binary COPY stream into a plain table, then the product's two read indexes;
* ``hypertable``: the product's loader into a row-store hypertable (per-chunk indexes, ANALYZE);
* ``compressed``: the same row-store load, then ``convert_to_columnstore`` of every chunk (load + compress timed);
* ``columnstore``: the product's loader into the columnstore (what a month gets on the local server);
* ``server alone``: the columnstore load's rows written as binary COPY files inside the server's
  root, then ``COPY chunk FROM 'file'`` with the loader's settings, as many at once as the loader
  ran writers: what the server does with no client, no network, no reading of NetCDF.

For each: rows/s, sizes (heap, TOAST, indexes, total), bytes a row and the multiple of the download,
and two reads: one place's history over the data and one hour's slice (one array per column).
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from psycopg import sql

from era5etl import settings
from era5etl.db import connect, drop_table, ensure_schema, table_ident
from era5etl.load import encode
from era5etl.read.hour import HOUR_COLUMNS, hour_columns

GLOBAL_HOURS_1940_ON = 727_080  # 1940-01-01 .. 2022-12-31: the 754 billion rows over 1,038,240 points
GLOBAL_POINTS = 1_038_240
LAYOUTS = ("plain", "hypertable", "compressed", "columnstore")
# Columnstore settings tried against the product's (sql/020_columnstore.sql), on request (--layout-kinds):
# one place's rows together in each batch, or batches ordered by place first.
ALTERNATIVES: dict[str, str] = {
    "segmentby": "timescaledb.segmentby = 'location_id', timescaledb.orderby = 'time'",
    "placefirst": "timescaledb.segmentby = '', timescaledb.orderby = 'location_id, time'",
}


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _sizes(url: str, table: str, hypertable: bool) -> dict[str, int]:
    with connect(url) as conn:
        reg = table_ident(table).as_string(conn)
        if hypertable:
            row = conn.execute("SELECT table_bytes, index_bytes, toast_bytes, total_bytes"
                               " FROM hypertable_detailed_size(%s::regclass)", (reg,)).fetchone()
        else:
            row = conn.execute(
                "SELECT pg_relation_size(c.oid), pg_indexes_size(c.oid),"
                " coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0), pg_total_relation_size(c.oid)"
                " FROM pg_class c WHERE c.oid = %s::regclass", (reg,)).fetchone()
    assert row is not None
    return dict(zip(("table_bytes", "index_bytes", "toast_bytes", "total_bytes"), (int(v or 0) for v in row),
                    strict=True))


def column_bytes(url: str, table: str) -> dict[str, float]:
    """Bytes a row of each column in the table's compressed chunks (their compressed datums, as stored):
    where the columnstore's bytes go."""
    totals: dict[str, int] = {}
    rows = 0
    with connect(url) as conn:
        # Internal, and the only way: no public view names a chunk's compressed relation, whose datums
        # this measures column by column (chunks_detailed_size gives only totals).
        compressed = [r[0] for r in conn.execute(
            "SELECT s.compress_relid::regclass::text FROM _timescaledb_catalog.compression_settings s"
            " WHERE s.compress_relid IS NOT NULL AND s.relid IN (SELECT show_chunks(%s::regclass))",
            (table_ident(table).as_string(conn),)).fetchall()]
        for rel in compressed:
            cols = [r[0] for r in conn.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped"
                " AND attname NOT LIKE '\\_ts\\_meta%%'", (rel,)).fetchall()]
            select = sql.SQL(", ").join(sql.SQL("coalesce(sum(pg_column_size({})), 0)").format(sql.Identifier(c))
                                        for c in cols)
            sizes = conn.execute(sql.SQL("SELECT sum(_ts_meta_count), {} FROM {}").format(
                select, sql.SQL(rel))).fetchone()  # rel: a regclass TimescaleDB named
            assert sizes is not None
            rows += int(sizes[0] or 0)
            for c, n in zip(cols, sizes[1:], strict=True):
                totals[c] = totals.get(c, 0) + int(n)
    return {c: round(n / rows, 3) for c, n in totals.items()} if rows else {}


def _reads(url: str, table: str, location_id: int, hour: str, runs: int) -> dict[str, Any]:
    """Median ms of one place's history (all rows of one location_id, to Python) and of one hour's
    slice (every point, one array per column: ``era5etl.read.hour.hour_columns``)."""
    ident = table_ident(table)
    place = sql.SQL("SELECT time, temperature_2m, total_precipitation FROM {} WHERE location_id = %s"
                    " ORDER BY time").format(ident)
    out: dict[str, Any] = {}
    with connect(url) as conn:
        timings, rows = [], 0
        for _ in range(runs + 1):  # the first run warms the cache and is not counted
            t0 = time.perf_counter()
            rows = len(conn.execute(place, (location_id,)).fetchall())
            timings.append(time.perf_counter() - t0)
        out["place_history"] = {"rows": rows, "median_ms": round(statistics.median(timings[1:]) * 1000, 2)}
        timings, size = [], 0
        for _ in range(runs + 1):
            t0 = time.perf_counter()
            columns = hour_columns(conn, table, hour, list(HOUR_COLUMNS))
            timings.append(time.perf_counter() - t0)
            size = sum(a.nbytes for a in columns.values())
        count = conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE time = {}").format(ident, sql.Literal(hour)))
        out["hour_slice"] = {"rows": int(count.fetchone()[0]),  # type: ignore[index]
                             "bytes": size, "median_ms": round(statistics.median(timings[1:]) * 1000, 2)}
    return out


def run_layouts(url: str, path: Path, *, layouts: Sequence[str] = LAYOUTS, runs: int = 5,
                keep: bool = False) -> dict[str, Any]:
    """Every layout on the rows of the download at ``path``; returns the figures of each."""
    from era5etl import load as loader
    from era5etl.stage import open_download

    run_id = uuid.uuid4().hex[:6]
    download = path.stat().st_size
    results: list[dict[str, Any]] = []
    made: list[str] = []
    try:
        with open_download([path]) as staged:
            rows = staged.rows
            ids = staged.location_id
            location_id = int(ids[len(ids) // 2]) if ids is not None else 0
            hour = str(staged.valid_time[len(staged.valid_time) // 2]) + "+00"
            for layout in layouts:
                table = f"bench_{run_id}_{layout}"
                made.append(table)
                _log(f"bench layouts: {layout} ...")
                _checkpoint(url)
                extra: dict[str, Any] = {}
                if layout == "plain":
                    seconds = _plain_copy(url, table, staged)
                else:
                    ensure_schema(url, table)
                    with connect(url, autocommit=True) as conn:
                        if layout in ALTERNATIVES:
                            conn.execute(sql.SQL("ALTER TABLE {} SET (" + ALTERNATIVES[layout] + ")").format(
                                table_ident(table)))  # a constant above
                        elif layout != "columnstore":
                            conn.execute(sql.SQL("ALTER TABLE {} SET (timescaledb.enable_columnstore = false)").format(
                                table_ident(table)))
                    t0 = time.perf_counter()
                    result = loader.load(url, table, staged)
                    seconds = time.perf_counter() - t0
                    if layout == "compressed":
                        t1 = time.perf_counter()
                        with connect(url, autocommit=True) as conn:
                            conn.execute(sql.SQL("ALTER TABLE {} SET (timescaledb.enable_columnstore = true,"
                                                 " timescaledb.segmentby = '',"
                                                 " timescaledb.orderby = 'time, location_id')").format(
                                table_ident(table)))
                            for (chunk,) in conn.execute("SELECT show_chunks(%s::regclass)::text",
                                                         (table,)).fetchall():
                                conn.execute("CALL convert_to_columnstore(%s::regclass)", (chunk,))
                        extra["compress_seconds"] = round(time.perf_counter() - t1, 2)
                        seconds = time.perf_counter() - t0
                    extra["chunks"] = len(result.chunks)
                    extra["writers"] = min(2, len(result.chunks))
                sizes = _sizes(url, table, layout != "plain")
                figures = {"layout": layout, "rows": rows, "seconds": round(seconds, 2),
                           "rows_per_s": round(rows / seconds), **sizes,
                           "bytes_per_row": round(sizes["total_bytes"] / rows, 2),
                           "x_download": round(sizes["total_bytes"] / download, 3), **extra,
                           **_reads(url, table, location_id, hour, runs)}
                if layout == "columnstore":
                    figures["column_bytes_per_row"] = column_bytes(url, table)
                results.append(figures)
                _log(f"bench layouts: {layout}: {figures['rows_per_s']:,} rows/s, "
                     f"{figures['bytes_per_row']} bytes a row ({figures['x_download']}x the download)")
            if "columnstore" in layouts:
                results.append(_server_alone(url, f"bench_{run_id}_server", staged, made))
    finally:
        if not keep:
            with connect(url, autocommit=True) as conn:
                for table in made:
                    drop_table(conn, table)
    return {"download": str(path), "download_bytes": download, "rows": rows, "layouts": results}


def _checkpoint(url: str) -> None:
    with connect(url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")


def _plain_copy(url: str, table: str, staged: Any) -> float:
    from era5etl.load import CHUNK_INDEXES

    ident = table_ident(table)
    with connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL(
            "CREATE TABLE {} (time timestamptz NOT NULL, location_id int, latitude float4, longitude float4,"
            " temperature_2m float4, zonal_wind_10m float4, meridional_wind_10m float4, total_cloud_cover float4,"
            " total_precipitation float4, snowfall float4)").format(ident))
    t0 = time.perf_counter()
    with connect(url) as conn:
        with encode.binary_copy(conn.cursor(), sql.SQL("COPY {} FROM STDIN (FORMAT BINARY)").format(ident)) as cp:
            for block in staged.blocks(hours=max(1, 1_000_000 // staged.points)):
                cp.write(encode.encode_block(block))
        for suffix, definition in CHUNK_INDEXES:
            conn.execute(sql.SQL("CREATE INDEX {} ON {} " + definition).format(  # definition: load's constant
                sql.Identifier(f"{table}_{suffix}"), ident))
        conn.commit()
    return time.perf_counter() - t0


def _server_alone(url: str, table: str, staged: Any, made: list[str]) -> dict[str, Any]:
    """The columnstore load with no client: each chunk's COPY stream from a file on the server."""
    from era5etl.db.local import LocalTimescale
    from era5etl.load.chunks import chunk_plan
    from era5etl.load.loader import reordered
    from era5etl.load.session import COLUMNSTORE_COPY_SETTINGS

    server = LocalTimescale()
    if settings.load().database_url or not server.installed:
        return {"layout": "server alone", "skipped": "needs the local server (files are written into its root)"}
    ensure_schema(url, table)
    made.append(table)
    plan = chunk_plan(url, table, staged.valid_time, staged.points)
    folder = server.root / "var/lib/era5/bench"
    folder.mkdir(parents=True, exist_ok=True)
    order = staged.location_id.argsort(kind="stable") if staged.location_id is not None else None
    files = []
    try:
        for i, (start, end, _) in enumerate(plan):
            f = folder / f"{table}-{i}.bin"
            with open(f, "wb") as out:
                out.write(encode.HEADER)
                for block in staged.blocks(start=start, end=end, hours=max(1, 1_000_000 // staged.points)):
                    out.write(encode.encode_block(block if order is None else reordered(block, order)))
                out.write(encode.TRAILER)
            uid, gid = server._ids()
            os.chown(f, uid, gid)
            files.append((start, f))
        _checkpoint(url)
        writers = min(2, len(files))
        todo = list(files)
        lock = threading.Lock()
        errors: list[BaseException] = []

        def writer() -> None:
            try:
                with connect(url) as conn:
                    while True:
                        with lock:
                            if not todo:
                                return
                            start, f = todo.pop(0)
                        with conn.transaction():
                            name = conn.execute(
                                "SELECT format('%%I.%%I', chunk_schema, chunk_name) FROM timescaledb_information.chunks"
                                " WHERE hypertable_name = %s AND range_start = %s", (table, start)).fetchone()
                            assert name is not None
                            for k, v in COLUMNSTORE_COPY_SETTINGS.items():
                                conn.execute("SELECT set_config(%s, %s, true)", (k, v))
                            conn.execute(sql.SQL("COPY {} FROM {} (FORMAT BINARY)").format(
                                sql.SQL(name[0]), sql.Literal("/var/lib/era5/bench/" + f.name)))
            except BaseException as exc:
                errors.append(exc)

        t0 = time.perf_counter()
        threads = [threading.Thread(target=writer) for _ in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds = time.perf_counter() - t0
        if errors:
            raise errors[0]
        sizes = _sizes(url, table, True)
        return {"layout": "server alone", "rows": staged.rows, "seconds": round(seconds, 2),
                "rows_per_s": round(staged.rows / seconds), "writers": writers, **sizes,
                "bytes_per_row": round(sizes["total_bytes"] / staged.rows, 2)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def projection(figures: dict[str, Any], area_points: int) -> dict[str, Any]:
    """1940-now, global and for an area, at the columnstore's measured bytes a row and rows/s."""
    col = next((f for f in figures["layouts"] if f["layout"] == "columnstore"), None)
    if col is None:
        return {}
    out = {}
    for name, points in (("global", GLOBAL_POINTS), ("area", area_points)):
        rows = points * GLOBAL_HOURS_1940_ON
        out[name] = {"points": points, "rows": rows, "bytes": round(rows * col["bytes_per_row"]),
                     "load_hours": round(rows / col["rows_per_s"] / 3600, 1)}
    return out


def format_layouts(figures: dict[str, Any]) -> str:
    head = (f"{'layout':<14}{'rows/s':>11}{'heap MB':>10}{'toast MB':>10}{'index MB':>10}{'total MB':>10}"
            f"{'B/row':>8}{'x dl':>7}{'place ms':>10}{'hour ms':>9}")
    lines = [head, "-" * len(head)]
    for f in figures["layouts"]:
        if "skipped" in f:
            lines.append(f"{f['layout']:<14} skipped: {f['skipped']}")
            continue
        reads = (f"{f['place_history']['median_ms']:>10.1f}{f['hour_slice']['median_ms']:>9.1f}"
                 if "place_history" in f else f"{'':>10}{'':>9}")
        lines.append(
            f"{f['layout']:<14}{f['rows_per_s']:>11,}{f['table_bytes'] / 1e6:>10,.0f}{f['toast_bytes'] / 1e6:>10,.0f}"
            f"{f['index_bytes'] / 1e6:>10,.0f}{f['total_bytes'] / 1e6:>10,.0f}{f['bytes_per_row']:>8}"
            f"{f.get('x_download', ''):>7}{reads}")
    return "\n".join(lines)
