"""Every month ends in the columnstore: loaded straight into it, proven, merged into one chunk; and
the Apache-licensed server, which has no columnstore, keeps the row store and says so.

The reload, kill and ERA5T paths run on the columnstore too, since it is the local server's default:
test_writer.py here (SIGKILL mid-load, two loads at once), ../pipeline/test_finalize.py (ERA5T
to final), test_load_file.py here (every real sample read back bit for bit from compressed chunks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from era5etl.core.errors import InputError
from era5etl.core.grid import Area, Grid, expected_rows
from era5etl.core.months import Month
from era5etl.db import connect, ensure_schema
from era5etl.load import columnstore
from era5etl.pipeline.steps import compress_step
from era5etl.read.hour import hour_columns

from ..helpers import cli

AREA = "46/7/45/8"
INNER = "46/7.5/45.5/8"  # a part of AREA: a partial reload
MONTH = Month(2024, 3)
YEAR_START, YEAR_END = Month(2024, 1).start, Month(2025, 1).start


def _run_month(cds: Any, table: str, staging: Path, area: str = AREA, env: dict[str, str] | None = None
               ) -> dict[str, Any]:
    env = {"CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(staging), **(env or {})}
    code, out, err, summary = cli("run-month", str(MONTH), "--area", area, "--table", table, "--json", env=env)
    assert code == 0, out + err
    assert summary is not None
    return summary


def _chunks(url: str, table: str) -> list[tuple[Any, ...]]:
    with connect(url) as conn:
        return conn.execute(
            "SELECT range_start, range_end, is_compressed FROM timescaledb_information.chunks"
            " WHERE hypertable_name = %s ORDER BY range_start", (table,)).fetchall()


def _exact(url: str, table: str, rows: int) -> None:
    with connect(url) as conn:
        assert conn.execute(f"SELECT count(*), count(DISTINCT (time, location_id)) FROM {table}").fetchone() \
            == (rows, rows)


def _values(url: str, table: str, area: str) -> list[tuple[Any, ...]]:
    a = Area.parse(area)
    with connect(url) as conn:
        return conn.execute(
            f"SELECT time, location_id, temperature_2m::float8, total_precipitation::float8 FROM {table}"
            " WHERE latitude BETWEEN %s AND %s AND longitude BETWEEN %s AND %s ORDER BY time, location_id",
            (a.south, a.north, a.west, a.east)).fetchall()


def test_mode_setting() -> None:
    assert columnstore.mode_from_env({}) == "auto"
    assert columnstore.mode_from_env({"ERA5_COMPRESSION": "OFF"}) == "off"
    with pytest.raises(InputError, match="ERA5_COMPRESSION"):
        columnstore.mode_from_env({"ERA5_COMPRESSION": "yes"})


def test_a_month_is_loaded_into_the_columnstore_as_one_chunk(
    db_url: str, cds: Any, table: str, tmp_path: Path
) -> None:
    # A small area (25 points) over a whole year fits ERA5_CHUNK_ROWS: one chunk for 2024 from the start.
    expected = expected_rows(MONTH, Area.parse(AREA), Grid())
    summary = _run_month(cds, table, tmp_path)
    assert summary["rows"] == expected and summary["success"]
    packed = summary["compression"]
    assert packed["state"] == "compressed" and packed["merged"] == 0 and packed["chunks"] == 1
    assert packed["compressed_now"] == 0  # the load itself wrote compressed batches
    assert packed["rows"] == expected and packed["ratio"] > 1
    assert _chunks(db_url, table) == [(YEAR_START, YEAR_END, True)]
    with connect(db_url) as conn:
        layout = conn.execute(
            "SELECT segmentby, orderby FROM timescaledb_information.hypertable_columnstore_settings"
            " WHERE hypertable = %s::regclass", (table,)).fetchone()
        # No policy of TimescaleDB's own rewrites chunks behind the loader's back.
        jobs = conn.execute("SELECT count(*) FROM timescaledb_information.jobs WHERE hypertable_name = %s",
                            (table,)).fetchone()
        detail = conn.execute("SELECT detail FROM era5_metrics WHERE table_name = %s AND task = 'compress'",
                              (table,)).fetchone()
    # The fixture made the table before any load said its breadth: the time layout (db.new_layout).
    assert layout == ("", "\"time\",location_id")
    assert jobs == (0,)
    assert detail is not None and detail[0]["state"] == "compressed"
    _exact(db_url, table, expected)


def test_daily_chunks_are_merged_then_reloads_and_partial_reloads_stay_exact(
    db_url: str, cds: Any, table: str, tmp_path: Path
) -> None:
    # A month over ERA5_CHUNK_ROWS (here 0, as a global month's 772M rows are) loads a day per
    # transaction, two at once, and its daily chunks are merged into one once the month is validated.
    expected = expected_rows(MONTH, Area.parse(AREA), Grid())
    summary = _run_month(cds, table, tmp_path, env={"ERA5_CHUNK_ROWS": "0"})
    assert summary["compression"]["merged"] == MONTH.days
    assert [step["rows_per_s"] > 0 for step in summary["steps"] if step["task"] == "load"] == [True]
    assert _chunks(db_url, table) == [(MONTH.start, MONTH.end, True)]
    before = _values(db_url, table, AREA)
    # The whole month again: its one merged chunk is rewritten in one transaction.
    assert _run_month(cds, table, tmp_path)["rows"] == expected
    assert _chunks(db_url, table) == [(MONTH.start, MONTH.end, True)]
    _exact(db_url, table, expected)
    # A part of the area: only those rows are replaced, inside the compressed chunk.
    inner = expected_rows(MONTH, Area.parse(INNER), Grid())
    summary = _run_month(cds, table, tmp_path / "inner", area=INNER)
    assert summary["rows"] == inner and summary["success"]
    _exact(db_url, table, expected)
    assert _values(db_url, table, AREA) == before  # the same synthetic values, each row once
    assert all(compressed for *_, compressed in _chunks(db_url, table))
    # The whole month again after the partial reload, whose DELETE left decompressed rows in the
    # chunk's row part: the TRUNCATE of a whole replace must clear both parts.
    assert _run_month(cds, table, tmp_path)["rows"] == expected
    _exact(db_url, table, expected)
    assert _values(db_url, table, AREA) == before


def test_off_is_recorded(db_url: str, table: str) -> None:
    from era5etl.core.variables import VARIABLES
    from era5etl.pipeline.job import MonthJob

    job = MonthJob(MONTH, Area.parse(AREA), Grid(), VARIABLES, table, "compress-off-test", Path("/nonexistent"))
    result = compress_step(db_url, job, "off")
    assert (result.state, result.reason) == ("off", "ERA5_COMPRESSION=off")
    with connect(db_url) as conn:
        row = conn.execute("SELECT detail FROM era5_metrics WHERE table_name = %s AND task = 'compress'",
                           (table,)).fetchone()
    assert row is not None and row[0]["state"] == "off"


def test_the_apache_licence_keeps_the_row_store_and_says_so(apache_url: str, cds: Any, tmp_path: Path) -> None:
    with connect(apache_url) as conn:
        assert conn.execute("SELECT current_setting('timescaledb.license')").fetchone() == ("apache",)
    table = "weather_apache"
    expected = expected_rows(MONTH, Area.parse(AREA), Grid())
    env = {"ERA5_DATABASE_URL": apache_url}
    summary = _run_month(cds, table, tmp_path, env=env)
    assert summary["rows"] == expected and summary["success"]
    assert summary["compression"]["state"] == "unavailable"
    assert "'apache'" in summary["compression"]["reason"] and "Community" in summary["compression"]["reason"]
    chunks = _chunks(apache_url, table)
    assert len(chunks) == MONTH.days and not any(c for *_, c in chunks)
    with connect(apache_url) as conn:
        indexes = conn.execute(
            "SELECT count(*) FROM pg_indexes WHERE schemaname = '_timescaledb_internal' AND tablename IN"
            " (SELECT chunk_name FROM timescaledb_information.chunks WHERE hypertable_name = %s)",
            (table,)).fetchone()
    assert indexes == (2 * MONTH.days,)  # BRIN (time) and (location_id, time) on every chunk
    # A reload and a partial reload on the row store stay exact too.
    assert _run_month(cds, table, tmp_path, env=env)["rows"] == expected
    _run_month(cds, table, tmp_path / "inner", area=INNER, env=env)
    _exact(apache_url, table, expected)
    # The schema on this server never asks for the columnstore.
    ensure_schema(apache_url, "weather_apache_2")
    with connect(apache_url) as conn:
        assert conn.execute("SELECT compression_enabled FROM timescaledb_information.hypertables"
                            " WHERE hypertable_name = 'weather_apache_2'").fetchone() == (False,)


def test_reads_time_a_place_over_a_year_and_all_years_and_an_hour(
    db_url: str, cds: Any, table: str, tmp_path: Path
) -> None:
    _run_month(cds, table, tmp_path)
    code, out, err, figures = cli("reads", "--table", table, "--runs", "2", "--json")
    assert code == 0, out + err
    assert figures is not None and figures["chunks"] == 1
    by = {f["query"]: f for f in figures["reads"]}
    assert set(by) == {"place, one year (hourly)", "place, all years (hourly)", "hour slice (all points)"}
    hours = MONTH.days * 24
    assert by["place, all years (hourly)"]["rows"] == hours  # one month loaded: every hour of one point
    assert by["hour slice (all points)"]["rows"] == Area.parse(AREA).points(Grid())
    assert all("ColumnarScan" in f["plan"] for f in by.values())
    assert "target <= 100 ms" in out and "target <= 500 ms" in out
    # The area's series is timed over 50/5/45/10 only: this table's 25 points are not it, and it says why.
    assert [r for r in figures["not_timed"] if r.startswith("area, all years (daily): the area 50/5/45/10 reaches "
                                                             f"outside the area {table} holds: 46/7/45/8")], out


def test_an_hours_columns_equal_its_rows_and_a_missing_value_is_nan(
    db_url: str, cds: Any, table: str, tmp_path: Path
) -> None:
    _run_month(cds, table, tmp_path)
    at = MONTH.start.replace(day=2, hour=5)
    with connect(db_url) as conn:
        conn.execute(f"UPDATE {table} SET snowfall = NULL WHERE time = %s AND location_id ="
                     f" (SELECT min(location_id) FROM {table} WHERE time = %s)", (at, at))
        rows = conn.execute(f"SELECT location_id, temperature_2m::float8, snowfall::float8 FROM {table}"
                            " WHERE time = %s", (at,)).fetchall()
        got = hour_columns(conn, table, at, ["location_id", "temperature_2m", "snowfall"])
    assert len(rows) == Area.parse(AREA).points(Grid()) == len(got["location_id"])
    by_id = {r[0]: r[1:] for r in rows}
    missing = [int(i) for i, s in zip(got["location_id"], got["snowfall"], strict=True) if np.isnan(s)]
    assert missing == [min(by_id)]
    for i, t, s in zip(got["location_id"], got["temperature_2m"], got["snowfall"], strict=True):
        want_t, want_s = by_id[int(i)]
        assert float(t) == want_t and (want_s is None or float(s) == want_s)


def test_a_partial_reload_larger_than_timescaledbs_decompression_limit_replaces_its_rows(
    db_url: str, cds: Any, table: str, tmp_path: Path
) -> None:
    # TimescaleDB refuses a DML statement that decompresses more than 100,000 rows of a compressed
    # chunk (timescaledb.max_tuples_decompressed_per_dml_transaction). Replacing a part of a month
    # decompresses every batch holding one of its rows: in (time, location_id) order that is the whole
    # month, here 441 points x 744 hours = 328,104 rows for a reload of 81 points.
    big, part = "50/5/45/10", "48/6/46/8"
    expected = expected_rows(MONTH, Area.parse(big), Grid())
    assert expected > 100_000
    _run_month(cds, table, tmp_path, area=big)
    before = _values(db_url, table, big)
    summary = _run_month(cds, table, tmp_path / "part", area=part)
    assert summary["rows"] == expected_rows(MONTH, Area.parse(part), Grid()) and summary["success"]
    _exact(db_url, table, expected)
    assert _values(db_url, table, big) == before
