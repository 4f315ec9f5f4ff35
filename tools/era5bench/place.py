"""``python -m era5bench place``: one place at global breadth, the layouts side by side (docs/table.md,
"Where the rows live"; docs/benchmarks.md, "A place at global breadth").

The same month (2023-03, every hour) loaded with the product's ``load-file`` three times:

* ``band``: a band of the globe, 32 latitude rows x 1,440 longitudes (46,080 points, 34,283,520 rows),
  once in each layout (``ERA5_LAYOUT=tiles``, the default, and ``time``, the layout before tiles);
* ``points``: 4 points, the same month (the breadth a place's read should cost).

On each: load rows/s, bytes a row, and the reads as the product and the documented SQL make them,
each the median of warm runs at three places (or three hours): a place's month of hourly rows (server
time from EXPLAIN ANALYZE, and the client's time for the rows), its daily month from the daily
rollup, and an hour's map (every point, one array per column).

Then the projection of one place's hourly history over 1940-2024 on a global table, from measured
parts, two ways:

* from the table's own chunks: a global table's months are chunks of global breadth (a global month
  is loaded a day per chunk and merged into one chunk once validated), so the read costs the
  planning of a query over 1,020 chunks (measured: the same query planned over a 4-point table of
  1,020 monthly chunks) plus, per chunk, the execution of a place's month at the band's breadth
  (measured above). A global chunk has 22.5 times the band's tiles; a place's batches are found
  through the compressed chunk's B-tree index on its tile, whose depth that does not change by more
  than a level.
* from the copy of finished years (``table years``, ``load.years``): the product's read of a place's
  1940-2024 on the 4-point table of 1,020 monthly chunks with its 85 years copied (server planning +
  execution), its execution scaled by the breadth's cost in the copy: a place's month read from the
  band's copy of 2023 against from the 4 points' copy (in the copy a place's batches are its own at
  any breadth; the breadth adds depth to the index on location_id). The same for a place's days: its
  1940-2024 from the daily rollup's 1,020 monthly chunks and from the rollup's copy of years.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import date
from typing import Any

from era5bench.common import copy_hypertable, log
from era5bench.downloads import cached_download, day_request
from era5bench.loadfile import decades_download, run

MONTH_DAYS = [date(2023, 3, d) for d in range(1, 32)]
BAND = (40.0, -180.0, 32.25, 179.75)  # 32 rows x 1,440 points
POINTS = (50.0, 5.0, 49.75, 5.25)  # 4 points
MONTH = ("2023-03-01T00:00:00+00:00", "2023-04-01T00:00:00+00:00")
HOURS = ("2023-03-03T05:00:00+00:00", "2023-03-15T12:00:00+00:00", "2023-03-28T23:00:00+00:00")
GLOBAL_MONTHS = 1020  # 1940-01 .. 2024-12
COLUMNS = ("temperature_2m, zonal_wind_10m, meridional_wind_10m, total_cloud_cover, total_precipitation,"
           " snowfall")


def _place_sql(table: str, tiled: bool) -> str:
    # As docs/reading.md writes it: in tiles the point's tile beside it.
    tile = " AND tile = era5_tile(%(id)s)" if tiled else ""
    return (f"SELECT time, {COLUMNS} FROM {table} WHERE location_id = %(id)s{tile}"
            " AND time >= %(a)s AND time < %(b)s ORDER BY time")


def _daily_sql(table: str, tiled: bool) -> str:
    tile = " AND tile = era5_tile(%(id)s)" if tiled else ""
    return (f"SELECT bucket, temperature_2m_mean, temperature_2m_max FROM {table}_daily WHERE location_id = %(id)s"
            f"{tile} AND bucket >= %(a)s AND bucket < %(b)s ORDER BY bucket")


MAP_SQL = ("SELECT array_agg(location_id), array_agg(latitude), array_agg(longitude), array_agg(temperature_2m),"
           " array_agg(total_precipitation) FROM {table} WHERE time = %(t)s AND location_id IS NOT NULL")


def _server(conn: Any, query: str, params: dict[str, Any], runs: int) -> tuple[float, float]:
    """Median planning and execution ms of ``runs`` EXPLAIN ANALYZE (after one warm-up)."""
    conn.execute("EXPLAIN (ANALYZE) " + query, params).fetchall()
    plans = [conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + query, params).fetchone()[0][0] for _ in range(runs)]
    return (statistics.median(p["Planning Time"] for p in plans),
            statistics.median(p["Execution Time"] for p in plans))


def _client(conn: Any, query: str, params: dict[str, Any], runs: int) -> tuple[float, int]:
    rows = len(conn.execute(query, params).fetchall())
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        conn.execute(query, params).fetchall()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), rows


def reads(url: str, table: str, runs: int) -> dict[str, Any]:
    """The place's month, its daily month and an hour's map of ``table``, each at three picks."""
    from era5etl.db import connect
    from era5etl.db.layout import in_tiles, table_layout

    with connect(url) as conn:
        tiled = in_tiles(conn, table)
        ids = sorted(r[0] for r in conn.execute(
            f"SELECT location_id FROM {table} WHERE time = %s AND location_id IS NOT NULL", (HOURS[1],)))
        picks = [ids[len(ids) // 7], ids[len(ids) // 2 + 17 if len(ids) > 40 else len(ids) // 2], ids[-1]]
        out: dict[str, Any] = {"table": table, "layout": table_layout(conn, table), "points": len(ids)}
        for name, query, params in (
            ("place_month", _place_sql(table, tiled), [{"id": i, "a": MONTH[0], "b": MONTH[1]} for i in picks]),
            ("place_daily_month", _daily_sql(table, tiled), [{"id": i, "a": MONTH[0], "b": MONTH[1]} for i in picks]),
            ("map_hour", MAP_SQL.format(table=table), [{"t": h} for h in HOURS]),
        ):
            server = [_server(conn, query, p, runs) for p in params]
            client = [_client(conn, query, p, runs) for p in params]
            out[name] = {"plan_ms": round(statistics.median(s[0] for s in server), 3),
                         "exec_ms": round(statistics.median(s[1] for s in server), 3),
                         "client_ms": round(statistics.median(c[0] for c in client), 3), "rows": client[0][1]}
        size = conn.execute("SELECT hypertable_size(%s::regclass), (SELECT count(*) FROM " + table + ")",
                            (table,)).fetchone()
        out["bytes_per_row"] = round(size[0] / size[1], 2) if size and size[1] else None
    return out


def _monthly_chunks(url: str, table: str) -> None:
    """The 4-point file of 1940-2024 loaded a chunk a month (ERA5_CHUNK_ROWS of one month's 4 points):
    a table with a global table's chunk count, to plan a place's history over."""
    from era5etl.db import connect

    with connect(url) as conn:
        found = conn.execute("SELECT count(*) FROM timescaledb_information.chunks WHERE hypertable_name = %s",
                             (table,)).fetchone()
    if found and found[0] >= GLOBAL_MONTHS:
        return
    path = decades_download()
    env = {**os.environ, "ERA5_CHUNK_ROWS": str(4 * 744)}
    log(f"bench: loading {path.name} a chunk a month into {table} ...")
    subprocess.run([sys.executable, "-m", "era5etl", "load-file", str(path), "--table", table], check=True,
                   env=env, stdout=subprocess.DEVNULL)


def planning_over_chunks(url: str, table: str, runs: int) -> dict[str, Any]:
    from era5etl.db import connect
    from era5etl.db.layout import in_tiles

    with connect(url) as conn:
        counted = conn.execute("SELECT count(*) FROM timescaledb_information.chunks WHERE hypertable_name = %s",
                               (table,)).fetchone()
        first = conn.execute(f"SELECT min(location_id) FROM {table}").fetchone()
        assert counted is not None and first is not None
        chunks, point = counted[0], first[0]
        query = _place_sql(table, in_tiles(conn, table))
        plan_ms, exec_ms = _server(conn, query, {"id": point, "a": "1940-01-01", "b": "2025-01-01"}, runs)
    return {"table": table, "chunks": int(chunks), "plan_ms": round(plan_ms, 2), "exec_ms": round(exec_ms, 2)}


DAILY_COLUMNS = ["temperature_2m_mean", "temperature_2m_max"]


def product_read(conn: Any, table: str, a: str, b: str, step: str = "hour", copies: bool = True) -> str:
    """The product's read of a place's hours (``step`` "day": days, from the daily rollup) in [a, b) on
    ``table`` (``read.series``: from the copy of years where it holds them; ``copies`` False: from the
    table or rollup alone, as before the copies), as SQL with ``%(id)s`` for the place."""
    from datetime import datetime

    from era5etl.db import rollup_tables
    from era5etl.db.layout import in_tiles
    from era5etl.read.series import series_statement
    from era5etl.read.years import Part, parts_of

    relation, time_column = (table, "time") if step == "hour" else (rollup_tables(table)["day"], "bucket")
    start, end = datetime.fromisoformat(a), datetime.fromisoformat(b)
    parts = (parts_of(conn, relation, start, end) if copies
             else [Part(relation, start, end, in_tiles(conn, relation))])
    columns = [c.strip() for c in COLUMNS.split(",")] if step == "hour" else DAILY_COLUMNS
    statement, params = series_statement(parts, time_column, columns)
    text = statement.as_string(conn)
    for key, value in params.items():  # the bounds as literals, so _server binds the place alone
        text = text.replace(f"%({key})s", f"'{value.isoformat()}'")
    return text


def copied(url: str, runs: int) -> dict[str, Any]:
    """The copy of years measured: a place's month of 2023 (hours, and days) from the band's and the 4
    points' copies, and a place's whole 1940-2024 through the product's read on the 1,020-chunk table,
    its years copied: its hours, and its days from the daily rollup and from its copy."""
    from era5etl.db import connect
    from era5etl.load.years import copy_years

    out: dict[str, Any] = {"copies": {}}
    for table, years in (("bench_band_tiles", [2023]), ("bench_points_tiles", [2023]), ("bench_chunks_1020", None)):
        made = copy_years(url, table, years)
        out["copies"][table] = {"years": len(made), "rows": sum(c.rows for c in made),
                                "daily_rows": sum(c.daily_rows for c in made),
                                "seconds": round(sum(c.seconds for c in made), 2)}
    with connect(url) as conn:
        for table in ("bench_band_tiles", "bench_points_tiles"):
            ids = sorted(r[0] for r in conn.execute(
                f"SELECT location_id FROM {table} WHERE time = %s AND location_id IS NOT NULL", (HOURS[1],)))
            picks = [ids[len(ids) // 7], ids[len(ids) // 2], ids[-1]]
            for step in ("hour", "day"):
                query = product_read(conn, table, *MONTH, step=step)
                server = [_server(conn, query, {"id": i}, runs) for i in picks]
                out[f"{table} {step}"] = {"plan_ms": round(statistics.median(p for p, _ in server), 3),
                                          "exec_ms": round(statistics.median(e for _, e in server), 3)}
        first = conn.execute("SELECT min(location_id) FROM bench_chunks_1020").fetchone()
        place = {"id": first[0] if first else 0}
        span = ("1940-01-01T00:00:00+00:00", "2025-01-01T00:00:00+00:00")
        query = product_read(conn, "bench_chunks_1020", *span)
        plan, run_ms = _server(conn, query, place, runs)
        client, _ = _client(conn, query, place, runs)
        days = {}
        for source, copies in (("rollup", False), ("copy", True)):
            days[source] = _server(conn, product_read(conn, "bench_chunks_1020", *span, "day", copies), place, runs)
    for step in ("hour", "day"):
        breadth = max(1.0, out[f"bench_band_tiles {step}"]["exec_ms"] / out[f"bench_points_tiles {step}"]["exec_ms"])
        out[f"breadth_factor_{step}"] = round(breadth, 2)
    breadth = out["breadth_factor_hour"]
    out["history"] = {"plan_ms": round(plan, 2), "exec_ms": round(run_ms, 2), "client_ms": round(client, 1),
                      "breadth_factor": round(breadth, 2), "projected_ms": round(plan + run_ms * breadth, 1)}
    out["daily_history"] = {source: {"plan_ms": round(p, 2), "exec_ms": round(e, 2)} for source, (p, e) in days.items()}
    p, e = days["copy"]
    out["daily_history"]["projected_ms"] = round(p + e * out["breadth_factor_day"], 1)
    return out


def yearly_copy(url: str, source: str, target: str) -> None:
    """``target``: ``source``'s rows in chunks of a year (365 days), segmented by tile and ordered by
    (location_id, time), written tile by tile in that order: the shape of a place-major copy of
    finished years, where a place's year is ~9 batches of its own rows."""
    from era5etl.db import connect

    with connect(url, autocommit=True) as conn:
        have = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (target,)).fetchone()
        if have and have[0]:
            return
        log(f"bench: copying {source} into {target} in yearly chunks ...")
        copy_hypertable(conn, source, target, "time", "365 days", "tile", "location_id, time")


def history(url: str, table: str, runs: int, jit: str) -> dict[str, Any]:
    """A place's whole hourly history from ``table`` with ``jit`` (on/off; the product's sessions run
    with it off): chunks, the server's planning and execution (EXPLAIN ANALYZE) and the client's time
    for the rows as tuples, medians of ``runs`` after one warm-up, at the table's first point."""
    from era5etl.db import connect

    with connect(url) as conn:
        conn.execute(f"SET jit = {'on' if jit == 'on' else 'off'}")
        counted = conn.execute("SELECT count(*) FROM show_chunks(%s)", (table,)).fetchone()
        first = conn.execute(f"SELECT min(location_id) FROM {table} WHERE time = '2000-01-01'").fetchone()
        assert counted is not None and first is not None
        params = {"id": first[0], "a": "1940-01-01", "b": "2025-01-01"}
        plan_ms, exec_ms = _server(conn, _place_sql(table, True), params, runs)
        client_ms, rows = _client(conn, _place_sql(table, True), params, runs)
    return {"table": table, "jit": jit, "chunks": int(counted[0]), "rows": rows, "plan_ms": round(plan_ms, 1),
            "exec_ms": round(exec_ms, 1), "client_ms": round(client_ms)}


def copies(url: str, runs: int) -> int:
    """``--copies``: a place's 1940-2024 from the monthly chunks against a yearly place-major copy,
    each with JIT on (PostgreSQL's default) and off."""
    _monthly_chunks(url, "bench_chunks_1020")
    yearly_copy(url, "bench_chunks_1020", "bench_years")
    for table in ("bench_chunks_1020", "bench_years"):
        for jit in ("on", "off"):
            r = history(url, table, runs, jit)
            print(f"{table}, jit {jit}: {r['chunks']:,} chunks, {r['rows']:,} rows a place; server "
                  f"{r['plan_ms']:.1f} ms planning + {r['exec_ms']:.1f} ms execution; client {r['client_ms']:,} ms")
    return 0


def nearest(url: str, tables: list[str], runs: int) -> int:
    """How long the product takes to find a place's grid point on each table (``read.points.
    nearest_point``, which every place's read starts with: the loaded box, then probes of the
    monthly rollup around the place), at a place near the middle of the table's box. Medians of
    ``runs`` after a warm-up."""
    from psycopg import sql

    from era5etl.db import connect
    from era5etl.read.points import loaded_bounds, nearest_point

    for table in tables:
        with connect(url) as conn:
            rollup = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(f"{table}_monthly"))
                                  ).fetchone()
            box = loaded_bounds(conn, table)  # a place a little off the middle of the loaded box
            lat, lon = round((box.north + box.south) / 2 + 0.3, 2), round((box.west + box.east) / 2 + 0.2, 2)
            nearest_point(conn, table, lat, lon)
            times = []
            for _ in range(runs):
                began = time.perf_counter()
                point = nearest_point(conn, table, lat, lon)
                times.append((time.perf_counter() - began) * 1000)
        print(f"{table} ({rollup[0] if rollup else 0:,} monthly rollup rows): the point of {lat}, {lon} is "
              f"{point.location_id}, found in {statistics.median(times):.1f} ms (median of {runs}; min "
              f"{min(times):.1f}, max {max(times):.1f})")
    return 0


def csv_cost(url: str, table: str, runs: int) -> int:
    """The CPU and wall time of writing one place's whole hourly history on ``table`` as the CSV
    ``series --csv`` prints (``read.series.series_csv``), the rows read once beforehand."""
    from era5etl.db import connect
    from era5etl.read.points import loaded_bounds, nearest_point
    from era5etl.read.series import series, series_csv

    with connect(url) as conn:
        box = loaded_bounds(conn, table)
        s = series(conn, table, nearest_point(conn, table, box.north, box.west), None, None, None, "hour")
    for _ in range(runs):
        cpu, wall = time.process_time(), time.perf_counter()
        text = series_csv(s)
        print(f"series_csv of {s.time.size:,} rows of {table}: {time.process_time() - cpu:.2f} s of CPU, "
              f"{time.perf_counter() - wall:.2f} s, {len(text):,} characters")
    return 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m era5bench place",
                                description="a place's month at global breadth in each layout, and the projection of "
                                            "its 1940-2024 history on a global table")
    p.add_argument("--runs", type=int, default=9, help="warm runs of each read (default 9)")
    p.add_argument("--reload", action="store_true", help="load the tables again even if they are there")
    p.add_argument("--json", action="store_true", help="end with one JSON object")
    p.add_argument("--copies", action="store_true",
                   help="only a place's 1940-2024 from monthly chunks against a copy in yearly chunks")
    p.add_argument("--nearest", metavar="TABLE,...", type=lambda text: text.split(","),
                   help="only the time to find a place's grid point on each of these loaded tables")
    p.add_argument("--csv", metavar="TABLE", help="only the time to write a place's whole hourly history on TABLE "
                                                  "as series --csv does")
    args = p.parse_args(argv)
    from era5etl.db import connect, database_url

    url = database_url()
    if args.csv:
        return csv_cost(url, args.csv, args.runs)
    if args.nearest:
        return nearest(url, args.nearest, args.runs)
    if args.copies:
        return copies(url, args.runs)
    band = cached_download(day_request(MONTH_DAYS, BAND))
    points = cached_download(day_request(MONTH_DAYS, POINTS))
    out: dict[str, Any] = {"loads": {}, "reads": {}}
    for table, path, layout in (("bench_band_tiles", band, "tiles"), ("bench_band_time", band, "time"),
                                ("bench_points_tiles", points, "tiles")):
        with connect(url) as conn:
            have = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()
        if args.reload or not (have and have[0]):
            os.environ["ERA5_LAYOUT"] = layout  # run() passes the environment to load-file
            out["loads"][table] = run(path, table)
            os.environ.pop("ERA5_LAYOUT")
            log(f"bench: {table}: {out['loads'][table]['rows_per_s_process']:,} rows/s")
        out["reads"][table] = reads(url, table, args.runs)
    _monthly_chunks(url, "bench_chunks_1020")
    planning = planning_over_chunks(url, "bench_chunks_1020", args.runs)
    tiles = out["reads"]["bench_band_tiles"]["place_month"]
    projected = planning["plan_ms"] + GLOBAL_MONTHS * tiles["exec_ms"]
    out["projection"] = {"planning_over_chunks": planning, "per_chunk_exec_ms": tiles["exec_ms"],
                         "months": GLOBAL_MONTHS, "projected_ms": round(projected, 1)}
    out["copy_of_years"] = copied(url, args.runs)
    if not args.json:
        for table, r in out["loads"].items():
            print(f"load {table}: {r['rows']:,} rows, {r['rows_per_s_process']:,} rows/s for the process, "
                  f"hourly {r['hourly_bytes'] / r['rows']:.2f} bytes a row, peak RSS {r['peak_rss_mb']} MB")
        for table, r in out["reads"].items():
            print(f"{table} ({r['layout']}, {r['points']:,} points, {r['bytes_per_row']} bytes a row with indexes):")
            for name in ("place_month", "place_daily_month", "map_hour"):
                f = r[name]
                print(f"  {name:<18} server {f['plan_ms']:.2f} plan + {f['exec_ms']:.2f} exec ms, "
                      f"client {f['client_ms']:.2f} ms, {f['rows']:,} rows")
        pr = out["projection"]
        print(f"projection, a place's hourly 1940-2024 on a global table: planning over "
              f"{planning['chunks']:,} chunks {planning['plan_ms']:.1f} ms + {GLOBAL_MONTHS:,} chunks x "
              f"{pr['per_chunk_exec_ms']:.3f} ms = {pr['projected_ms']:,.0f} ms")
        cy = out["copy_of_years"]
        for table, c in cy["copies"].items():
            print(f"table years {table}: {c['years']} year(s), {c['rows']:,} hourly and {c['daily_rows']:,} daily "
                  f"rows in {c['seconds']:.2f} s")
        for table in ("bench_band_tiles", "bench_points_tiles"):
            for step, what in (("hour", "month"), ("day", "daily month")):
                f = cy[f"{table} {step}"]
                print(f"  a place's {what} from {table}'s copy: server {f['plan_ms']:.2f} plan + "
                      f"{f['exec_ms']:.2f} exec ms")
        h = cy["history"]
        print(f"projection from the copy of years: a place's hourly 1940-2024 on the 1,020-chunk table, its years "
              f"copied, server {h['plan_ms']:.1f} ms planning + {h['exec_ms']:.1f} ms execution (client "
              f"{h['client_ms']:,.0f} ms for the packed rows); execution x {h['breadth_factor']:.2f} for the "
              f"breadth = {h['projected_ms']:,.0f} ms")
        d = cy["daily_history"]
        print(f"a place's daily 1940-2024 on the 1,020-chunk table: from the daily rollup server "
              f"{d['rollup']['plan_ms']:.1f} ms planning + {d['rollup']['exec_ms']:.1f} ms execution; from its copy "
              f"{d['copy']['plan_ms']:.1f} + {d['copy']['exec_ms']:.1f} ms; execution x {cy['breadth_factor_day']:.2f} "
              f"for the breadth = {d['projected_ms']:,.0f} ms")
    if args.json:
        print(json.dumps(out))
    return 0
