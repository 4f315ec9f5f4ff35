"""The table read back over HTTP and on the Data view, in a real Airflow API server, seen by headless Chromium.

Three months of a 25-point area are loaded for real (``era5etl run-month`` against the local CDS
server, side by side, while the API server starts): January, February and April, so March is a gap.
Then: ``/era5/series`` and ``/era5/map`` answer exactly what a direct SQL query of the table (and of
its daily rollup) returns, as JSON, CSV and Parquet; a request without a login is refused (401), one
over a limit is refused with the limit stated (422), bad input is a 400 with the reason, a relation
that is not one of the pipeline's tables a 404; the OpenAPI schema is served behind the login; and
the Data view, reached through its tab in the Airflow UI, draws the place's series with uPlot (its
script and uPlot served by the plugin: every other address is blocked), one row per day (then per
hour) with a break at March, drawn as a break (no pixel of the line or band over the gap), March
listed under the charts, and one cell per grid point of the hour's map, the counts taken from the
database. An area's series (``area=N/W/S/E``) over HTTP and on the Data view (a box dragged over the
map's grid points, then an area typed in) equals SQL over the hourly rows: per step the points'
mean weighted by cos(latitude), their min and max, the precipitation's mean total. A month of the
same area on two pressure levels (``run-month --dataset pressure-levels``) is read on the Data view at
the level picked in its forms: the series and the map at 500 hPa, then the series at 850 hPa, each
equal to SQL over that level's hourly rows; two months of ERA5's monthly means are read by month, their
rows. The API server machinery is ``test_ui.py``'s: its own AIRFLOW_HOME, its own process group, stopped
afterwards.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import numpy as np
import pytest

from era5etl.core.paths import PROJECT_ROOT
from era5etl.db import connect
from era5etl.serve import MAX_MAP_CELLS, MAX_SERIES_ROWS
from tests.e2e.apiserver import CHROMIUM, CHROMIUM_ARGS, PATH, STARTUP_TIMEOUT_S, api_server, clean, status

pytestmark = pytest.mark.e2e

AREA = "46/7/45/8"  # 25 grid points
MONTHS = ("2024-01", "2024-02", "2024-04")  # March not loaded: a gap
FIRST, LAST = datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 4, 30, 23, tzinfo=UTC)
DAYS = 31 + 29 + 30
LAT, LON = 45.5, 7.5  # the area's middle grid point: the Data view's first place
MAP_HOUR = datetime(2024, 2, 15, 12, tzinfo=UTC)
SCREENSHOT = PROJECT_ROOT / ".local" / "data-view-test.png"
LOAD_TIMEOUT_S = 150
BOX = "46/7/45.5/7.5"  # 9 of the area's grid points, its north-west corner to its middle
LEVELS_MONTH, LEVELS = "2024-01", ("500", "850")  # the table on pressure levels: one month, two levels
MEANS_MONTHS = ("2024-01", "2024-02")  # the table of monthly means


@dataclass(frozen=True)
class Stack:
    url: str
    password: str
    table: str
    token: str = ""
    levels_table: str = ""
    means_table: str = ""
    pid: int = 0  # the API server's process (its group holds its workers)

    def era5(self, path: str, **params: Any) -> str:
        return f"{self.url}/era5/{path}?" + urlencode({"table": self.table, **params})


def _drop_rollups(db_url: str, table: str) -> None:
    with connect(db_url, autocommit=True) as conn:
        for suffix in ("_monthly", "_daily"):
            row = conn.execute("SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)", (table + suffix,)).fetchone()
            if row is not None:
                kind = "MATERIALIZED VIEW" if row[0] in ("m", "v") else "TABLE"
                conn.execute(f'DROP {kind} IF EXISTS "{table}{suffix}" CASCADE')


def _load_months(db_url: str, cds: Any, table: str, levels_table: str, means_table: str, work: Path,
                 env_path: str) -> list[subprocess.Popen[str]]:
    """The three months, each by its own ``run-month`` process (they queue on the year's chunk lock),
    the month on pressure levels into ``levels_table`` and the monthly means into ``means_table``."""
    env = {**os.environ, "PATH": env_path, "ERA5_DATABASE_URL": db_url, "CDSAPI_URL": str(cds.url),
           "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(work / "staging"),
           "ERA5_VALIDATION_DIR": str(work / "validation")}
    runs = [[month, "--table", table] for month in MONTHS]
    runs.append([LEVELS_MONTH, "--table", levels_table, "--dataset", "pressure-levels", "--levels", ",".join(LEVELS)])
    runs += [[month, "--table", means_table, "--dataset", "monthly-means"] for month in MEANS_MONTHS]
    return [subprocess.Popen([sys.executable, "-m", "era5etl", "run-month", *run, "--area", AREA],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for run in runs]


def _token(url: str, password: str) -> str:
    body = json.dumps({"username": "admin", "password": password}).encode()
    request = urllib.request.Request(f"{url}/auth/token", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return str(json.load(response)["access_token"])


@pytest.fixture(scope="module")
def stack(db_url: str, cds: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    work = tmp_path_factory.mktemp("data-view")
    table, levels_table, means_table = (f"dv_{uuid.uuid4().hex[:10]}", f"dvpl_{uuid.uuid4().hex[:10]}",
                                        f"dvmm_{uuid.uuid4().hex[:10]}")
    loads: list[subprocess.Popen[str]] = []
    try:
        with api_server(work, db_url) as server:
            # The months load while the server starts.
            loads = _load_months(db_url, cds, table, levels_table, means_table, work, PATH)
            for month, proc in zip((*MONTHS, LEVELS_MONTH, *MEANS_MONTHS), loads, strict=True):
                output, _ = proc.communicate(timeout=LOAD_TIMEOUT_S)
                assert proc.returncode == 0, f"run-month {month}:\n{output[-4000:]}"
            server.wait_healthy(time.monotonic() + STARTUP_TIMEOUT_S)
            password = server.admin_password()
            yield Stack(url=server.url, password=password, table=table, token=_token(server.url, password),
                        levels_table=levels_table, means_table=means_table, pid=server.process.pid)
    finally:
        for proc in loads:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
        for made in (table, levels_table, means_table):
            _drop_rollups(db_url, made)
            clean(db_url, made, str(cds.url))
        shutil.rmtree(work, ignore_errors=True)


def _get(stack: Stack, url: str, token: str | None = None) -> tuple[int, str, bytes]:
    """(status, content type, body) with the stack's API token (or ``token``; "" for none)."""
    token = stack.token if token is None else token
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as response:
            return int(response.status), response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Content-Type", ""), exc.read()


def _ok_json(stack: Stack, url: str) -> Any:
    code, kind, body = _get(stack, url)
    assert code == 200, (code, body[:500])
    assert kind.startswith("application/json")
    return json.loads(body)


def _ok_csv(stack: Stack, url: str) -> list[dict[str, str]]:
    code, kind, body = _get(stack, url)
    assert code == 200, (code, body[:500])
    assert kind.startswith("text/csv")
    return list(csv.DictReader(io.StringIO(body.decode())))


def _ms(value: Any) -> datetime:
    text = str(value).replace(" ", "T").replace("Z", "+00:00")
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _f32(values: list[Any]) -> np.ndarray:
    return np.array([np.nan if v is None or v == "" else float(v) for v in values], dtype=np.float32)


def _series_columns(data: dict[str, Any]) -> tuple[list[datetime], dict[str, np.ndarray]]:
    """``series_json``'s answer as (times, one float32 array per column)."""
    times = data["time"]
    values = data["values"]
    return [_ms(t) for t in times], {c: _f32(values[c]) for c in values}


def _csv_columns(rows: list[dict[str, str]], time_key: str) -> tuple[list[datetime], dict[str, np.ndarray]]:
    columns = [k for k in rows[0] if k != time_key] if rows else []
    return [_ms(r[time_key]) for r in rows], {c: _f32([r[c] for r in rows]) for c in columns}


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.array_equal(a, b, equal_nan=True))


def _location_id(db_url: str, table: str) -> int:
    with connect(db_url) as conn:
        row = conn.execute(f'SELECT location_id FROM "{table}" WHERE latitude = %s AND longitude = %s LIMIT 1',
                           (LAT, LON)).fetchone()
    assert row is not None
    return int(row[0])


def _area_sql(db_url: str, table: str, area: str, step: str) -> dict[str, Any]:
    """The area's series from the hourly rows alone: each point's step (mean, min, max, total of its
    hours), then per step the points' cos(latitude)-weighted mean, min, max and weighted mean total."""
    north, west, south, east = (float(v) for v in area.split("/"))
    bucket = "time" if step == "hour" else f"date_trunc('{step}', time, 'UTC')"
    with connect(db_url) as conn:
        rows = conn.execute(
            f"WITH p AS (SELECT {bucket} AS b, location_id, cos(radians(latitude::float8)) AS w,"
            " avg(temperature_2m::float8) AS m, min(temperature_2m::float8) AS lo, max(temperature_2m::float8) AS hi,"
            f" sum(total_precipitation::float8) AS s FROM \"{table}\" WHERE latitude BETWEEN %s AND %s"
            " AND longitude BETWEEN %s AND %s GROUP BY 1, 2, 3)"
            " SELECT b, count(*), sum(m * w) / sum(w), min(lo), max(hi), sum(s * w) / sum(w) FROM p GROUP BY b"
            " ORDER BY b", (south, north, west, east)).fetchall()
    return {"time": [r[0] for r in rows], "points": [r[1] for r in rows],
            **{name: np.array([r[i] for r in rows], dtype=np.float64) for i, name in enumerate(
                ("temperature_2m_mean", "temperature_2m_min", "temperature_2m_max", "total_precipitation_sum"),
                start=2)}}


def _near(got: list[Any], want: np.ndarray) -> bool:
    a = np.array([np.nan if v is None or v == "" else float(v) for v in got], dtype=np.float64)
    return a.shape == want.shape and bool(np.allclose(a, want, rtol=1e-6, atol=1e-6))


def test_unauthenticated_reads_are_refused(stack: Stack) -> None:
    for url in (stack.era5("series", lat=LAT, lon=LON), stack.era5("map", time="2024-02-15T12:00"),
                stack.era5("data"), f"{stack.url}/era5/openapi.json", f"{stack.url}/era5/static/dataview.js",
                f"{stack.url}/era5/static/uPlot.iife.min.js"):
        assert status(url) == 401, url
        assert status(url, {"Authorization": "Bearer not.a.token"}) in (401, 403), url
        assert status(url, {"Cookie": "_token=forged"}) in (401, 403), url


def _group_rss(pid: int) -> int:
    """The resident bytes of every process in the API server's group."""
    import psutil

    total = 0
    for proc in psutil.process_iter(["pid"]):
        with contextlib.suppress(psutil.Error, ProcessLookupError):
            if os.getpgid(proc.pid) == pid:
                total += proc.memory_info().rss
    return total


def _post_streamed(stack: Stack, path: str, total: int, token: str = "", chunked: bool = False) -> tuple[int, str, int]:
    """POST ``total`` bytes to ``path`` a megabyte at a time, stopping as soon as the server answers:
    (status, detail, bytes sent)."""
    host, port = stack.url.removeprefix("http://").split(":")
    chunk = b"[" + b"0," * (2**19 - 1)  # a JSON array that never closes: the server must read it all to parse it
    head = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}", "Content-Type: application/json"]
    head.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {total}")
    if token:
        head.append(f"Authorization: Bearer {token}")
    sent = 0
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        while sent < total and not select.select([sock], [], [], 0)[0]:
            part = chunk[: total - sent]
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                sock.sendall(f"{len(part):x}\r\n".encode() + part + b"\r\n" if chunked else part)
            sent += len(part)
        reply = b""
        with contextlib.suppress(ConnectionResetError, TimeoutError):
            while b"\r\n\r\n" not in reply or len(reply.split(b"\r\n\r\n", 1)[1]) < _length(reply):
                data = sock.recv(65536)
                if not data:
                    break
                reply += data
    head_text, _, body = reply.partition(b"\r\n\r\n")
    return int(head_text.split()[1]), str(json.loads(body)["detail"]), sent


def _length(reply: bytes) -> int:
    found = re.search(rb"(?i)content-length: *(\d+)", reply)
    return int(found.group(1)) if found else 0


def test_a_body_is_read_only_after_the_login_and_up_to_the_limit(stack: Stack) -> None:
    """A 500 MB outline without a login is answered 401 before the server has read it (its resident
    memory grows by less than 50 MB); with a login a body over ERA5_HTTP_MAX_BODY_BYTES is refused
    with 413, declared or streamed."""
    from era5etl import settings

    limit = settings.load().http_max_body_bytes
    path = "/era5/series?" + urlencode({"table": stack.table, "region": "huge"})
    before = _group_rss(stack.pid)
    status_code, detail, sent = _post_streamed(stack, path, 500 * 2**20)
    grown = _group_rss(stack.pid) - before
    assert status_code == 401, detail
    assert grown < 50 * 2**20 and sent < 100 * 2**20, (grown, sent)
    status_code, detail, sent = _post_streamed(stack, path, 500 * 2**20, token=stack.token)
    assert (status_code, sent < 100 * 2**20) == (413, True), (detail, sent)
    assert f"is {500 * 2**20:,} bytes; at most {limit:,}" in detail, detail
    status_code, detail, sent = _post_streamed(stack, path, limit + 2**20, token=stack.token, chunked=True)
    assert status_code == 413 and f"at most {limit:,}" in detail, detail
    # Within the limit the body reaches the route, which reads it as it did (here: not JSON).
    status_code, detail, _ = _post_streamed(stack, path, 2**20, token=stack.token)
    assert status_code == 400, detail
    assert _group_rss(stack.pid) - before < 100 * 2**20


def test_hourly_series_equals_sql(stack: Stack, db_url: str) -> None:
    location = _location_id(db_url, stack.table)
    with connect(db_url) as conn:
        rows = conn.execute(
            f'SELECT time, temperature_2m, total_precipitation FROM "{stack.table}" WHERE location_id = %s'
            " AND time BETWEEN %s AND %s ORDER BY time", (location, FIRST, LAST)).fetchall()
    assert len(rows) == DAYS * 24
    expected_time = [r[0] for r in rows]
    params = {"lat": LAT, "lon": LON, "step": "hour", "from": "2024-01-01", "to": "2024-04-30",
              "variables": "temperature_2m,total_precipitation"}
    data = _ok_json(stack, stack.era5("series", **params))
    assert data["point"]["location_id"] == location
    times, cols = _series_columns(data)
    assert times == expected_time
    assert _same(cols["temperature_2m"], _f32([r[1] for r in rows]))
    assert _same(cols["total_precipitation"], _f32([r[2] for r in rows]))

    table = _ok_csv(stack, stack.era5("series", format="csv", **params))
    times, cols = _csv_columns(table, "time")
    assert times == expected_time
    assert _same(cols["temperature_2m"], _f32([r[1] for r in rows]))
    assert _same(cols["total_precipitation"], _f32([r[2] for r in rows]))


def test_daily_series_equals_the_rollup(stack: Stack, db_url: str) -> None:
    location = _location_id(db_url, stack.table)
    with connect(db_url) as conn:
        rows = conn.execute(
            f'SELECT bucket, temperature_2m_mean, temperature_2m_min, temperature_2m_max, total_precipitation_sum'
            f' FROM "{stack.table}_daily" WHERE location_id = %s ORDER BY bucket', (location,)).fetchall()
        days = conn.execute(f"SELECT count(DISTINCT date_trunc('day', time, 'UTC')) FROM \"{stack.table}\""
                            " WHERE location_id = %s", (location,)).fetchone()
    assert days is not None and len(rows) == days[0] == DAYS
    data = _ok_json(stack, stack.era5("series", lat=LAT, lon=LON))  # daily over everything loaded: the defaults
    times, cols = _series_columns(data)
    assert times == [r[0] for r in rows]
    for i, name in enumerate(("temperature_2m_mean", "temperature_2m_min", "temperature_2m_max",
                              "total_precipitation_sum"), start=1):
        assert _same(cols[name], _f32([r[i] for r in rows])), name
    table = _ok_csv(stack, stack.era5("series", lat=LAT, lon=LON, format="csv"))
    times, cols = _csv_columns(table, "time")
    assert len(times) == DAYS
    assert _same(cols["temperature_2m_mean"], _f32([r[1] for r in rows]))


def test_parquet_export_reads_back_as_the_csv(stack: Stack) -> None:
    """``format=parquet``: a file pyarrow reads back to the CSV's rows and values, typed."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for params in ({"step": "hour", "from": "2024-02-28", "to": "2024-04-01",
                    "variables": "temperature_2m,total_precipitation,wind_speed_10m"}, {}):
        rows = _ok_csv(stack, stack.era5("series", lat=LAT, lon=LON, format="csv", **params))
        code, kind, body = _get(stack, stack.era5("series", lat=LAT, lon=LON, format="parquet", **params))
        assert code == 200 and kind == "application/vnd.apache.parquet", (code, kind, body[:300])
        table = pq.read_table(io.BytesIO(body))
        assert table.schema.field("time").type == pa.timestamp("us", tz="UTC")
        assert table.column_names == list(rows[0])
        assert table.num_rows == len(rows) > 0
        times, cols = _csv_columns(rows, "time")
        assert table.column("time").to_pylist() == times
        for name, values in cols.items():
            back = table.column(name).to_numpy(zero_copy_only=False).astype(np.float32)  # a null as NaN
            assert _same(back, values), name


def test_map_equals_sql(stack: Stack, db_url: str) -> None:
    with connect(db_url) as conn:
        rows = conn.execute(f'SELECT latitude, longitude, temperature_2m FROM "{stack.table}" WHERE time = %s',
                            (MAP_HOUR,)).fetchall()
    assert len(rows) == 25
    expected = {(float(np.float32(r[0])), float(np.float32(r[1]))): np.float32(r[2]) for r in rows}
    params = {"time": "2024-02-15T12:00Z", "variable": "temperature_2m", "area": AREA}
    data = _ok_json(stack, stack.era5("map", **params))
    got = {(float(np.float32(a)), float(np.float32(o))): np.float32(v)
           for a, o, v in zip(data["latitude"], data["longitude"], data["values"], strict=True)}
    assert got == expected
    table = _ok_csv(stack, stack.era5("map", format="csv", **params))
    value_key = "temperature_2m" if "temperature_2m" in table[0] else "value"
    got = {(float(np.float32(r["latitude"])), float(np.float32(r["longitude"]))): np.float32(r[value_key])
           for r in table}
    assert got == expected
    # Without an area: every grid point loaded at that hour, the same 25.
    assert len(_ok_json(stack, stack.era5("map", time="2024-02-15T12:00Z"))["values"]) == 25


def _refusal(stack: Stack, url: str, code: int) -> str:
    got, kind, body = _get(stack, url)
    assert got == code, (got, body[:500])
    assert kind.startswith("application/json")
    return str(json.loads(body)["detail"])


def test_limits_and_bad_input_are_refused_with_the_reason(stack: Stack) -> None:
    # A quarter of a century hourly: over the limit, refused before reading, the limit stated.
    detail = _refusal(stack, stack.era5("series", lat=LAT, lon=LON, step="hour", **{"from": "2000-01-01",
                                                                                 "to": "2024-12-31"}), 422)
    assert f"limit of {MAX_SERIES_ROWS:,} hours" in detail and "219,168 hours" in detail and "from=" in detail
    # The same range daily fits, and answers the days that are loaded.
    data = _ok_json(stack, stack.era5("series", lat=LAT, lon=LON, **{"from": "2000-01-01", "to": "2024-12-31"}))
    assert len(data["time"]) == DAYS
    detail = _refusal(stack, stack.era5("map", time="2024-02-15T12:00", area="90/-180/-90/180"), 422)
    assert f"limit of {MAX_MAP_CELLS:,} cells" in detail and "area=" in detail

    assert "lat 'north'" in _refusal(stack, stack.era5("series", lat="north", lon=LON), 400)
    assert "lon '400'" in _refusal(stack, stack.era5("series", lat=LAT, lon=400), 400)
    assert "step 'week'" in _refusal(stack, stack.era5("series", lat=LAT, lon=LON, step="week"), 400)
    assert "not on the hour" in _refusal(stack, stack.era5("map", time="2024-02-15T12:30"), 400)
    # era5etl.read's own refusals (ReadError): a place outside the loaded area, an hour not loaded.
    assert _refusal(stack, stack.era5("series", lat=-33.9, lon=18.4), 400)
    assert _refusal(stack, stack.era5("map", time="2023-06-01T00:00"), 400)
    assert _refusal(stack, stack.era5("series", lat=LAT, lon=LON, variables="no_such_column"), 400)
    assert "needs both its latitude and its longitude" in _refusal(stack, f"{stack.url}/era5/series?lon=7", 400)
    assert "time is required" in _refusal(stack, f"{stack.url}/era5/map", 400)
    assert "format 'xml'" in _refusal(stack, stack.era5("series", lat=LAT, lon=LON, format="xml"), 400)
    assert "to '2023-12-31' is before from '2024-01-01'" in _refusal(
        stack, stack.era5("series", lat=LAT, lon=LON, **{"from": "2024-01-01", "to": "2023-12-31"}), 400)
    missing = f"{stack.url}/era5/series?" + urlencode({"table": "no_such_table_here", "lat": LAT, "lon": LON})
    assert "does not exist" in _refusal(stack, missing, 404)


def test_an_areas_series_equals_sql_over_the_hourly_rows(stack: Stack, db_url: str) -> None:
    columns = ("temperature_2m_min", "temperature_2m_max", "temperature_2m_mean", "total_precipitation_sum")
    for area, step in ((AREA, "day"), (BOX, "month"), (BOX, "hour")):
        want = _area_sql(db_url, stack.table, area, step)
        params = {"area": area, "step": step, "variables": "temperature_2m,total_precipitation"}
        data = _ok_json(stack, stack.era5("series", **params))
        assert [_ms(t) for t in data["time"]] == want["time"], (area, step)
        assert data["points"] == want["points"] and data["columns"] == list(columns)
        assert data["gaps"] == ["2024-03"]  # March not loaded, at every step
        for name in columns:
            assert _near(data["values"][name], want[name]), (area, step, name)
    rows = _ok_csv(stack, stack.era5("series", area=AREA, format="csv", variables="temperature_2m"))
    want = _area_sql(db_url, stack.table, AREA, "day")
    assert [_ms(r["time"]) for r in rows] == want["time"] and {r["points"] for r in rows} == {"25"}
    assert _near([r["temperature_2m_mean"] for r in rows], want["temperature_2m_mean"])
    # Refusals: the cost over the limit (points x steps), outside the loaded area, both a place and an area.
    detail = _refusal(stack, stack.era5("series", area="60/0/40/20", **{"from": "2000-01-01", "to": "2024-12-31"}),
                      422)
    assert "6,561 grid points x 9,132 days = 59,915,052 rows to read" in detail and "limit of 10,000,000" in detail
    assert "reaches outside the area" in _refusal(stack, stack.era5("series", area="50/5/45/10"), 400)
    assert "not more" in _refusal(stack, stack.era5("series", area=AREA, lat=LAT, lon=LON), 400)
    assert "format=parquet writes one place's series" in _refusal(
        stack, stack.era5("series", area=AREA, format="parquet"), 400)


def test_only_the_pipelines_tables_are_read(stack: Stack) -> None:
    """Any relation the database user can see is not a table to read: a system or bookkeeping name, or
    a schema-qualified one, is not a table name (400, core.names); another table is not the pipeline's (404)."""
    for table in ("pg_class", "pg_catalog.pg_authid", "era5_months", "timescaledb_information.chunks",
                  f"public.{stack.table}"):
        for path, params in (("series", {"lat": LAT, "lon": LON}), ("map", {"time": "2024-02-15T12:00"})):
            url = f"{stack.url}/era5/{path}?" + urlencode({"table": table, **params})
            detail = _refusal(stack, url, 400)
            assert f"table {table!r}" in detail, detail
    for path, params in (("series", {"lat": LAT, "lon": LON}), ("map", {"time": "2024-02-15T12:00"})):
        url = f"{stack.url}/era5/{path}?" + urlencode({"table": "not_the_pipelines", **params})
        detail = _refusal(stack, url, 404)
        assert "table 'not_the_pipelines'" in detail, detail
    assert _ok_json(stack, f"{stack.url}/era5/series?" + urlencode(
        {"table": stack.table, "lat": LAT, "lon": LON}))["time"]


def test_openapi_schema_behind_the_login(stack: Stack) -> None:
    url = f"{stack.url}/era5/openapi.json"
    assert status(url) == 401
    schema = _ok_json(stack, url)
    assert schema["openapi"].startswith("3.")
    series = schema["paths"]["/series"]["get"]
    params = {p["name"]: p for p in series["parameters"]}
    assert {"lat", "lon", "area", "from", "to", "variables", "step", "table", "format"} <= set(params)
    # A place (lat and lon) or an area: neither is required alone.
    assert not params["lat"].get("required") and not params["area"].get("required")
    assert "cos(latitude)" in params["area"]["description"]
    assert set(params["format"]["schema"]["enum"]) == {"json", "csv", "parquet"}
    assert "application/vnd.apache.parquet" in series["responses"]["200"]["content"]
    assert {"400", "404", "422", "503"} <= set(series["responses"])
    assert {p["name"] for p in schema["paths"]["/map"]["get"]["parameters"]} >= {"time", "variable", "area"}
    assert "/openapi.json" not in schema["paths"] and "/static/{name}" not in schema["paths"]


# What uPlot drew at one time (seconds): the canvas pixels of that one column of the plot, those of
# the line (red) and of the min-max band (blue), and uPlot's own data (x and each series).
_DRAWN = """(body, [variable, times]) => {
  const u = window.era5Data.charts[variable];
  const ctx = u.ctx, h = ctx.canvas.height;
  const column = (sec) => {
    const x = Math.round(u.valToPos(sec, "x", true));
    const d = ctx.getImageData(x, 0, 1, h).data;
    let red = 0, blue = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] > 100 && d[i] > 150 && d[i + 1] < 120 && d[i + 2] < 120) red++;
      if (d[i + 3] > 20 && d[i + 2] > d[i] + 40) blue++;
    }
    return {red, blue};
  };
  return {columns: times.map(column), data: u.data};
}"""


def _drawn(frame: Any, variable: str, *moments: datetime) -> dict[str, Any]:
    return dict(frame.locator("body").evaluate(_DRAWN, [variable, [m.timestamp() for m in moments]]))


@contextmanager
def _data_view(stack: Stack, table: str) -> Iterator[tuple[Any, Any]]:
    """Headless Chromium signed in to the Airflow UI, on the months page of ``table`` and AREA with its
    Data tab opened: (the page, the view's frame)."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1440, "height": 1300})
            # Nothing from elsewhere: uPlot comes from the plugin or not at all.
            context.route(re.compile(r"^https?://(?!127\.0\.0\.1[:/])"), lambda route: route.abort())
            page = context.new_page()
            page.set_default_timeout(30_000)
            expect.set_options(timeout=20_000)
            route = f"/plugin/era5-months/era5/?table={quote(table)}&area={quote(AREA, safe='')}"
            page.goto(stack.url + route)
            page.get_by_label("Username").fill("admin")
            page.get_by_label("Password").fill(stack.password)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url("**/plugin/era5-months/**")
            if table not in page.url:
                page.goto(stack.url + route)
            frame = page.frame_locator('iframe[title="ERA5 months"]')
            # The Data tab of the months page opens the Data view in the same frame.
            frame.locator('nav.tabs a[data-tab="data"]').click()
            expect(frame.locator("h1")).to_have_text("ERA5 data")
            yield page, frame
        finally:
            browser.close()


def test_data_view_in_the_airflow_ui(stack: Stack, db_url: str) -> None:
    from playwright.sync_api import expect

    with connect(db_url) as conn:
        days, hours = conn.execute(
            f"SELECT count(DISTINCT date_trunc('day', time, 'UTC')), count(*) FROM \"{stack.table}\""
            " WHERE latitude = %s AND longitude = %s", (LAT, LON)).fetchone() or (0, 0)
        cells = conn.execute(f'SELECT count(*) FROM "{stack.table}" WHERE time = %s', (LAST,)).fetchone()
    assert (days, hours) == (DAYS, DAYS * 24) and cells == (25,)
    in_feb, in_march, in_april = (datetime(2024, 2, 14, tzinfo=UTC), datetime(2024, 3, 16, tzinfo=UTC),
                                  datetime(2024, 4, 15, tzinfo=UTC))

    with _data_view(stack, stack.table) as (page, frame):
        # The place's series, daily over everything loaded: a uPlot chart per variable, one row a
        # day, and March (not loaded) a gap.
        temp = frame.locator('figure[data-variable="temperature_2m"]')
        expect(temp).to_have_attribute("data-points", str(days))
        expect(temp).to_have_attribute("data-step", "day")
        expect(temp).to_have_attribute("data-gaps", "1")
        expect(temp.locator("canvas")).to_have_count(1)
        expect(frame.locator('figure[data-variable="total_precipitation"]')).to_have_attribute(
            "data-points", str(days))
        expect(frame.locator("#series-status")).to_contain_text(f"{days} days at 45.50°N 7.50°E")
        expect(frame.locator("#series-gaps")).to_have_text(
            "No rows (not loaded) for 2024-03: the charts break there.")
        drawn = _drawn(frame, "temperature_2m", in_feb, in_march, in_april)
        x, *columns = drawn["data"]
        assert len(x) == days + 1  # a null at the gap's first step, 2024-03-01
        gap = x.index(datetime(2024, 3, 1, tzinfo=UTC).timestamp())
        assert all(c[gap] is None for c in columns) and sum(v is None for c in columns for v in c) == len(columns)
        feb, march, april = drawn["columns"]
        # The line and the band are drawn on either side of March, and nothing over it.
        assert feb["red"] > 0 and feb["blue"] > 0 and april["red"] > 0 and april["blue"] > 0, drawn["columns"]
        assert march == {"red": 0, "blue": 0}, drawn["columns"]

        # The area at the last loaded hour: one cell per grid point.
        chart = frame.locator("svg.map")
        expect(chart).to_have_attribute("data-cells", str(cells[0]))
        expect(chart.locator("rect.gp")).to_have_count(cells[0])
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOT), full_page=True)

        # Hourly: one row an hour, the gap still a gap.
        frame.locator('#series-form select[name="step"]').select_option("hour")
        frame.locator("#series-form button").click()
        expect(temp).to_have_attribute("data-points", str(hours))
        expect(temp).to_have_attribute("data-step", "hour")
        drawn = _drawn(frame, "temperature_2m", in_feb, in_march, in_april)
        assert len(drawn["data"][0]) == hours + 1
        feb, march, april = drawn["columns"]
        assert feb["red"] > 0 and april["red"] > 0 and march == {"red": 0, "blue": 0}, drawn["columns"]

        # Another hour and variable on the map, then a click on its north-west cell: that place's series.
        frame.locator('#map-form input[name="time"]').fill("2024-02-15T12:00")
        frame.locator('#map-form select[name="variable"]').select_option("total_precipitation")
        frame.locator("#map-form button").click()
        expect(chart).to_have_attribute("data-variable", "total_precipitation")
        expect(chart.locator("rect.gp")).to_have_count(25)
        corner = chart.locator('rect.gp[data-lat="46"][data-lon="7"]')  # the area's north-west point
        corner.click()
        expect(corner).to_have_class(re.compile(r"\bsel\b"))
        expect(frame.locator('#series-form input[name="lat"]')).to_have_value("46")
        expect(frame.locator("#series-status")).to_contain_text(f"{hours:,} hours at 46.00°N 7.00°E")

        # A box dragged from the north-west cell to the middle one: the area of those 9 grid points,
        # its hourly series the hourly rows' cos(latitude)-weighted mean, min and max.
        # (The whole map in view first: the page scrolled to the series after the click. hover:
        # Playwright waits until the cell stands still.)
        chart.scroll_into_view_if_needed()
        chart.locator('rect.gp[data-lat="46"][data-lon="7"]').hover(position={"x": 2, "y": 2})
        page.mouse.down()
        last = chart.locator('rect.gp[data-lat="45.5"][data-lon="7.5"]').bounding_box()
        assert last is not None
        # Past the middle cell's centre, short of the next cells' centres.
        page.mouse.move(last["x"] + last["width"] * 0.75, last["y"] + last["height"] * 0.75, steps=8)
        page.mouse.up()
        expect(frame.locator('#series-form input[name="box"]')).to_have_value(BOX)
        expect(chart.locator("rect.gp.sel")).to_have_count(9)
        expect(frame.locator("#series-status")).to_contain_text(
            f"{hours:,} hours at the area {BOX} (9 grid points, mean weighted by cos(latitude))")
        expect(frame.locator("#series-parquet")).to_be_hidden()
        want = _area_sql(db_url, stack.table, BOX, "hour")
        drawn = _drawn(frame, "temperature_2m")["data"]  # x, then max, min, mean
        x, high, low, mean = drawn
        keep = [i for i, v in enumerate(mean) if v is not None]  # the gap's null left out
        assert [x[i] for i in keep] == [t.timestamp() for t in want["time"]]
        for got, name in ((mean, "temperature_2m_mean"), (low, "temperature_2m_min"), (high, "temperature_2m_max")):
            assert _near([got[i] for i in keep], want[name]), name
        total = _drawn(frame, "total_precipitation")["data"][1]
        assert _near([total[i] for i in keep], want["total_precipitation_sum"])

        # An area typed in, daily: the whole loaded area's daily means.
        frame.locator('#series-form input[name="box"]').fill(AREA)
        frame.locator('#series-form select[name="step"]').select_option("day")
        frame.locator("#series-form button").click()
        expect(frame.locator("#series-status")).to_contain_text(f"{days} days at the area {AREA} (25 grid points")
        expect(temp).to_have_attribute("data-gaps", "1")
        want = _area_sql(db_url, stack.table, AREA, "day")
        x, high, low, mean = _drawn(frame, "temperature_2m")["data"]
        keep = [i for i, v in enumerate(mean) if v is not None]
        assert [x[i] for i in keep] == [t.timestamp() for t in want["time"]]
        assert _near([mean[i] for i in keep], want["temperature_2m_mean"])
        assert _near([low[i] for i in keep], want["temperature_2m_min"])


def _level_sql(db_url: str, table: str, level: int) -> tuple[list[float], np.ndarray]:
    """The middle point's days (UTC midnight, seconds) and daily mean temperature at ``level`` from the hourly rows."""
    with connect(db_url) as conn:
        rows = conn.execute(
            f"SELECT date_trunc('day', time, 'UTC'), avg(temperature::float8) FROM \"{table}\""
            " WHERE latitude = %s AND longitude = %s AND level = %s GROUP BY 1 ORDER BY 1",
            (LAT, LON, level)).fetchall()
    return [r[0].timestamp() for r in rows], np.array([r[1] for r in rows], dtype=np.float64)


def test_a_table_on_levels_is_read_at_the_level_picked(stack: Stack, db_url: str) -> None:
    from playwright.sync_api import expect

    days_500, want_500 = _level_sql(db_url, stack.levels_table, 500)
    days_850, want_850 = _level_sql(db_url, stack.levels_table, 850)
    assert len(days_500) == 31 and days_850 == days_500
    with _data_view(stack, stack.levels_table) as (_, frame):
        series_level = frame.locator('#series-form select[name="level"]')
        expect(series_level).to_have_value("500")  # the mid-troposphere's level first
        expect(series_level.locator("option")).to_have_text(list(LEVELS))
        # The place's daily series at 500 hPa: temperature and geopotential, the rollup's days.
        temp = frame.locator('figure[data-variable="temperature"]')
        expect(temp).to_have_attribute("data-points", "31")
        expect(frame.locator('figure[data-variable="geopotential"]')).to_have_attribute("data-points", "31")
        status = frame.locator("#series-status")
        expect(status).to_contain_text("31 days at 45.50°N 7.50°E")
        expect(status).to_contain_text(", at 500 hPa, 2024-01-01 to 2024-01-31")
        x, _, _, mean = _drawn(frame, "temperature")["data"]
        assert x == days_500 and _near(mean, want_500)
        # The map of the last hour at 500 hPa: a cell per grid point.
        chart = frame.locator("svg.map")
        expect(chart).to_have_attribute("data-variable", "temperature")
        expect(chart.locator("rect.gp")).to_have_count(25)
        expect(frame.locator("#map-caption")).to_contain_text("temperature, at 500 hPa at 2024-01-31 23:00 UTC")
        # Another level picked: that level's rows.
        series_level.select_option("850")
        frame.locator("#series-form button").click()
        expect(status).to_contain_text(", at 850 hPa, 2024-01-01 to 2024-01-31")
        x, _, _, mean = _drawn(frame, "temperature")["data"]
        assert x == days_850 and _near(mean, want_850) and not _near(mean, want_500)


def test_a_table_of_monthly_means_is_read_by_month(stack: Stack, db_url: str) -> None:
    from playwright.sync_api import expect

    with connect(db_url) as conn:
        want = conn.execute(f'SELECT time, temperature_2m::float8 FROM "{stack.means_table}"'
                            " WHERE latitude = %s AND longitude = %s ORDER BY time", (LAT, LON)).fetchall()
    assert [t.strftime("%Y-%m") for t, _ in want] == list(MEANS_MONTHS)
    with _data_view(stack, stack.means_table) as (_, frame):
        expect(frame.locator('#series-form select[name="step"]')).to_have_value("month")
        temp = frame.locator('figure[data-variable="temperature_2m"]')
        expect(temp).to_have_attribute("data-step", "month")
        expect(temp).to_have_attribute("data-points", str(len(MEANS_MONTHS)))
        expect(frame.locator('figure[data-variable="total_precipitation"] figcaption')).to_contain_text("mm/day")
        x, value = _drawn(frame, "temperature_2m")["data"]
        assert x == [t.timestamp() for t, _ in want] and _near(value, np.array([v for _, v in want]))
        # The map of the last month: a cell per grid point.
        expect(frame.locator("svg.map rect.gp")).to_have_count(25)
