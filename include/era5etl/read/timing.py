"""The reads people make of the table, timed: one place's history (over a year, over every loaded
year) and one hour's slice; and the same reads as the CLI and the HTTP API make them
(:func:`measure_api`): a place's series, hourly and daily, an hour's map drawn to a PNG, and an
area's daily series over every loaded year (``series --area 50/5/45/10 --daily``).

``python -m era5etl reads`` picks grid points and hours at random (seeded) among what the table
holds and reports latency per query (median, min, max, warm: after one unmeasured run) with the
plan's scan (the columnstore's ColumnarScan, or the row store's chunk indexes), so the layout's
effect is measured rather than assumed. A place's history comes to the client as binary COPY, as a
program that reads many rows does (a Python tuple per row costs more than the read: 1.7 s against
0.65 s for 745,128 rows of one place); an hour's slice as one array per column (``read.hour.hour_columns``).
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from era5etl.core.grid import Area
from era5etl.db import connect, table_ident
from era5etl.read.area import area_series
from era5etl.read.columns import Step
from era5etl.read.errors import ReadError
from era5etl.read.hour import HOUR_COLUMNS, hour_statement
from era5etl.read.maps import hour_map
from era5etl.read.plots import plot_map
from era5etl.read.points import coordinates, nearest_point
from era5etl.read.series import series
from era5etl.read.years import parts_of


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


# Targets of the columnstore issue, warm reads on the final layout (docs/benchmarks.md, "Reads").
TARGETS_MS = {"place, one year (hourly)": 100.0, "place, all years (hourly)": 1000.0,
              "hour slice (all points)": 500.0}


def _timed(conn: psycopg.Connection[Any], select: sql.Composed, params: Any, as_copy: bool) -> tuple[float, int]:
    """Milliseconds to bring the rows to the client and the bytes that came: as binary COPY, or (an
    hour's columns) as one binary row."""
    t0 = time.perf_counter()
    if not as_copy:
        row = conn.cursor(binary=True).execute(select, params).fetchone()
        return (time.perf_counter() - t0) * 1000, sum(len(b or b"") for b in row or ())
    size = 0
    with conn.cursor().copy(sql.SQL("COPY ({}) TO STDOUT (FORMAT BINARY)").format(select), params) as cp:
        for data in cp:
            size += len(data)
    return (time.perf_counter() - t0) * 1000, size


def _picks(conn: psycopg.Connection[Any], table: str) -> tuple[datetime, datetime, list[int], list[datetime]]:
    """The table's span, and the grid points and hours to pick reads from: the last day's (cheap to
    find), read then across the whole table."""
    ident = table_ident(table)
    span = conn.execute(sql.SQL("SELECT min(time), max(time) FROM {}").format(ident)).fetchone()
    if span is None or span[0] is None:
        raise ValueError(f"{table} is empty: load something first")
    first, last = span
    ids = [r[0] for r in conn.execute(
        sql.SQL("SELECT DISTINCT location_id FROM {} WHERE time = %s AND location_id IS NOT NULL").format(ident),
        (last,))]
    hours = [r[0] for r in conn.execute(
        sql.SQL("SELECT DISTINCT time FROM {} WHERE time > %s - interval '1 day'").format(ident), (last,))]
    return first, last, ids, hours


def documented_history(conn: psycopg.Connection[Any], table: str) -> sql.Composed:
    """A place's hourly rows from ``%(t0)s`` to ``%(t1)s`` as docs/reading.md writes them: in tiles the
    point's tile beside it (sql/007_tiles.sql), and the years the copy of years holds (``table years``,
    read.years) read from ``<table>_years``, each part a SELECT of its own stretch, in time order."""
    selects = []
    for part in parts_of(conn, table, None, None):
        where: list[sql.Composable] = [sql.SQL("location_id = %(id)s")]
        if part.tiled:
            where.append(sql.SQL("tile = era5_tile(%(id)s)"))
        where.append(sql.SQL("time >= %(t0)s AND time <= %(t1)s"))
        if part.start is not None:
            where.append(sql.SQL("time >= {}").format(sql.Literal(part.start)))
        if part.end is not None:
            where.append(sql.SQL("time < {}").format(sql.Literal(part.end)))
        selects.append(sql.SQL(
            "SELECT time, temperature_2m, zonal_wind_10m, meridional_wind_10m, total_cloud_cover,"
            " total_precipitation, snowfall FROM {} WHERE {}").format(table_ident(part.relation),
                                                                      sql.SQL(" AND ").join(where)))
    return sql.SQL("{} ORDER BY time").format(sql.SQL(" UNION ALL ").join(selects))


def measure(url: str, table: str, runs: int = 20, seed: int = 1) -> list[ReadFigures]:
    """The reads people make, each ``runs`` times (after one warm-up) on random picks."""
    ident = table_ident(table)
    rng = random.Random(seed)
    with connect(url) as conn:
        first, last, ids, hours = _picks(conn, table)
        history = documented_history(conn, table)
        slice_ = hour_statement(table, list(HOUR_COLUMNS))
        slice_rows = sql.SQL("SELECT 1 FROM {} WHERE time = %s AND location_id IS NOT NULL").format(ident)
        year_ago = max(first, last - timedelta(days=365))
        out = []
        for name, stmt, as_copy, pick in (
            ("place, one year (hourly)", history, True, lambda: {"id": rng.choice(ids), "t0": year_ago, "t1": last}),
            ("place, all years (hourly)", history, True, lambda: {"id": rng.choice(ids), "t0": first, "t1": last}),
            ("hour slice (all points)", slice_, False, lambda: (rng.choice(hours),)),
        ):
            plan = "\n".join(r[0] for r in conn.execute(sql.SQL("EXPLAIN ") + stmt, pick()))
            _timed(conn, stmt, pick(), as_copy)  # warm-up
            timings = [_timed(conn, stmt, pick(), as_copy)[0] for _ in range(runs)]
            params = pick()
            count = conn.execute(sql.SQL("SELECT count(*) FROM ({}) q").format(
                stmt if as_copy else slice_rows), params).fetchone()
            used = sorted({w for w in ("ColumnarScan", "location_time", "time_brin", "Seq Scan") if w in plan})
            out.append(ReadFigures(name, runs, int(count[0]) if count else 0, round(statistics.median(timings), 2),
                                   round(min(timings), 2), round(max(timings), 2), ", ".join(used)))
    return out


# Targets of the reads issue (series and maps), warm, on the final layout: a series includes finding
# its grid point (read.points.nearest_point), a map its PNG.
API_TARGETS_MS = {"series, one year (hourly)": 100.0, "series, all years (hourly)": 1000.0,
                  "series, all years (daily)": 200.0, "map, one hour (PNG)": 1000.0,
                  "area, all years (daily)": 1000.0}
# The area an area's series is timed over (``series --area 50/5/45/10 --daily``): 441 grid points,
# 5 x 5 degrees; a table that does not hold all of it is not timed (the reason is printed).
AREA = "50/5/45/10"


def measure_api(url: str, table: str, runs: int = 20, seed: int = 1) -> tuple[list[ReadFigures], list[str]]:
    """The reads behind ``series`` and ``map`` (and the HTTP API), each ``runs`` times after one
    warm-up, on random grid points and hours; and why any of them could not be timed."""
    rng = random.Random(seed)
    out: list[ReadFigures] = []
    skipped: list[str] = []
    with connect(url) as conn, tempfile.TemporaryDirectory(prefix="era5-reads-") as tmp:
        first, last, ids, hours = _picks(conn, table)
        year_ago, after = max(first, last - timedelta(days=365)), last + timedelta(hours=1)

        def place(start: Any, end: Any, step: Step) -> Any:
            def read() -> int:
                lat, lon = coordinates(np.array([rng.choice(ids)]))
                point = nearest_point(conn, table, float(lat[0]), float(lon[0]))
                return len(series(conn, table, point, start, end, None, step).time)
            return read

        def hour_png() -> int:
            m = hour_map(conn, table, rng.choice(hours), "temperature_2m", None)
            plot_map(m, f"{tmp}/map.png")
            return int(m.values.size)

        def area_days() -> int:
            return len(area_series(conn, table, Area.parse(AREA), None, None, None, "day").time)

        for name, read, how in (
            ("series, one year (hourly)", place(year_ago, after, "hour"), "nearest_point + series, hypertable"),
            ("series, all years (hourly)", place(None, None, "hour"), "nearest_point + series, hypertable"),
            ("series, all years (daily)", place(None, None, "day"), "nearest_point + series, daily rollup"),
            ("map, one hour (PNG)", hour_png, "hour_map + plot_map"),
            ("area, all years (daily)", area_days, f"area_series {AREA}, daily rollup"),
        ):
            try:
                rows = read()  # warm-up
            except ReadError as exc:
                skipped.append(f"{name}: {exc}")
                continue
            timings = []
            for _ in range(runs):
                t0 = time.perf_counter()
                rows = read()
                timings.append((time.perf_counter() - t0) * 1000)
            out.append(ReadFigures(name, runs, rows, round(statistics.median(timings), 2), round(min(timings), 2),
                                   round(max(timings), 2), how))
    return out, skipped
