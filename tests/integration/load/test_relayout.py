"""``table relayout`` (load.relayout): a table of the time layout moved into tiles chunk by chunk from
the rows it holds; stopped mid-way (SIGKILL while it waits for a chunk a load holds) and run again, it
ends with exactly the rows it had, and reads in between return them all."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from era5etl.db import connect, rollup_tables
from era5etl.db.layout import in_tiles, table_layout
from era5etl.load.locks import lock_chunk
from era5etl.read.points import nearest_point
from era5etl.read.series import series
from tests.integration.helpers import cli, forget

# A real CDS download (tests/data/era5-samples/README.md): one point, hourly 2023-01 .. 2026-04, four
# yearly chunks of its table.
SAMPLE = "grib1_2t_point_lon237.5_2023-01_to_2026-04_hourly_expver0001_0005.grib"
ROW = ("time, location_id, latitude, longitude, temperature_2m, zonal_wind_10m, meridional_wind_10m,"
       " total_cloud_cover, total_precipitation, snowfall")


def _rows(url: str, table: str, columns: str = ROW, key: str = "time, location_id") -> list[tuple[object, ...]]:
    with connect(url) as conn:
        return conn.execute(f"SELECT {columns} FROM {table} ORDER BY {key}").fetchall()


def _rollup_rows(url: str, table: str) -> dict[str, list[tuple[object, ...]]]:
    out = {}
    with connect(url) as conn:
        for step, name in rollup_tables(table).items():
            cols = [r[0] for r in conn.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped"
                " AND attname <> 'tile' ORDER BY attname", (name,))]
            out[step] = conn.execute(f"SELECT {', '.join(cols)} FROM {name} ORDER BY bucket, location_id").fetchall()
    return out


@pytest.fixture
def time_layout_table(db_url: str, samples: Path) -> str:
    table = f"relayout_{os.getpid()}"
    forget(db_url, table)
    code, _, err, _ = cli("load-file", str(samples / SAMPLE), "--table", table, env={"ERA5_LAYOUT": "time"})
    assert code == 0, err
    yield table
    forget(db_url, table)


def test_a_killed_relayout_resumes_and_ends_with_the_same_rows(db_url: str, time_layout_table: str) -> None:
    table = time_layout_table
    with connect(db_url) as conn:
        assert table_layout(conn, table) == "time"
        chunks = conn.execute("SELECT range_start FROM timescaledb_information.chunks WHERE hypertable_name = %s"
                              " ORDER BY range_start", (table,)).fetchall()
    assert len(chunks) == 4  # 2023 .. 2026
    before, rollups_before = _rows(db_url, table), _rollup_rows(db_url, table)
    point_rows = len(before)

    # A load of the second year holds its chunk's lock: the move takes the first chunk, then waits.
    blocker = psycopg.connect(db_url)  # in a transaction until the rollback below
    lock_chunk(blocker.cursor(), table, chunks[1][0])
    proc = subprocess.Popen([sys.executable, "-m", "era5etl", "table", "relayout", table],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            with connect(db_url) as conn:
                moved = conn.execute(
                    "SELECT count(*) FROM timescaledb_information.chunk_columnstore_settings"
                    " WHERE hypertable = %s::regclass AND segmentby = 'tile'", (table,)).fetchone()
                waiting = conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                                       ).fetchone()
            if moved and moved[0] >= 1 and waiting and waiting[0] >= 1:
                break
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "the move never reached the held chunk"
            time.sleep(0.1)
        # Mid-way: one chunk in tiles, three not. Reads see every row, through the product and plain SQL.
        with connect(db_url) as conn:
            assert table_layout(conn, table) == "moving" and not in_tiles(conn, table)
            point = nearest_point(conn, table, 47.75, -122.5)
            got = series(conn, table, point, None, None, ["temperature_2m"], "hour")
            assert len(got.time) == point_rows
        assert _rows(db_url, table) == before
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        blocker.rollback()
        blocker.close()

    code, _, err, summary = cli("table", "relayout", table, "--json")
    assert code == 0, err
    assert summary is not None and [m["left"] for m in summary["moved"]] == [0, 0, 0]
    with connect(db_url) as conn:
        assert table_layout(conn, table) == "tiles" and in_tiles(conn, table)
        assert table_layout(conn, rollup_tables(table)["day"]) == "tiles"
        # every row has its tile, the SQL function's
        assert conn.execute(f"SELECT count(*) FROM {table} WHERE tile IS DISTINCT FROM era5_tile(location_id)"
                            ).fetchone() == (0,)
        point = nearest_point(conn, table, 47.75, -122.5)
        got = series(conn, table, point, datetime(2024, 1, 1, tzinfo=UTC), datetime(2025, 1, 1, tzinfo=UTC),
                     ["temperature_2m"], "hour")
        assert len(got.time) == 8784
    assert _rows(db_url, table) == before
    assert _rollup_rows(db_url, table) == rollups_before
    # Moved again: nothing left to do.
    code, _, err, summary = cli("table", "relayout", table, "--json")
    assert code == 0, err
    assert summary is not None and all(m["rows_moved"] == 0 for m in summary["moved"])
