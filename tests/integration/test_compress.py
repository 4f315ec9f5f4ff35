"""Compression of validated months: what this server's TimescaleDB licence allows, said plainly.

This machine's TimescaleDB is Debian's Apache-licensed build, which has no compression: there the
month is reported ``unavailable`` with the licence named, nothing in the table changes, and a
reload works as before. The compressed path needs a server with the Community licence (the compose
stack's image); the tests that need it are skipped, saying so, anywhere else.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from era5etl import compress
from era5etl.db import connect
from era5etl.months import Area, Grid, InputError, Month, expected_rows
from era5etl.pipeline import compress_step

from .helpers import cli

AREA = "46/7/45/8"
MONTH = Month(2024, 3)


def _licence(url: str) -> str:
    with connect(url) as conn:
        return compress.licence(conn)


def _load(cds: Any, table: str, staging: Path) -> int:
    env = {"CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(staging)}
    code, out, err, summary = cli("run-month", str(MONTH), "--area", AREA, "--table", table, "--json", env=env)
    assert code == 0, out + err
    assert summary is not None
    return int(summary["rows"])


def test_mode_setting() -> None:
    assert compress.mode_from_env({}) == "auto"
    assert compress.mode_from_env({"ERA5_COMPRESSION": "OFF"}) == "off"
    with pytest.raises(InputError, match="ERA5_COMPRESSION"):
        compress.mode_from_env({"ERA5_COMPRESSION": "yes"})


def test_month_is_compressed_or_said_unavailable_and_reload_stays_exact(
    db_url: str, cds: Any, table: str, tmp_path: Path
) -> None:
    expected = expected_rows(MONTH, Area.parse(AREA), Grid())
    assert _load(cds, table, tmp_path) == expected
    with connect(db_url) as conn:
        packed = conn.execute("SELECT detail FROM era5_metrics WHERE table_name = %s AND task = 'compress'",
                              (table,)).fetchall()
        chunks = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE is_compressed) FROM timescaledb_information.chunks"
            " WHERE hypertable_name = %s", (table,)).fetchone()
    assert len(packed) == 1
    detail = packed[0][0]
    if _licence(db_url) == "timescale":
        assert detail["state"] == "compressed" and detail["ratio"] > 1
        assert chunks is not None and chunks[1] == chunks[0] == MONTH.days
    else:
        assert detail["state"] == "unavailable"
        assert f"'{_licence(db_url)}'" in detail["reason"] and "Community" in detail["reason"]
        assert chunks == (MONTH.days, 0)

    # A rerun of the whole month (compressed chunks are decompressed under the chunk lock first).
    assert _load(cds, table, tmp_path) == expected
    with connect(db_url) as conn:
        assert conn.execute(f"SELECT count(*), count(DISTINCT (time, location_id)) FROM {table}").fetchone() \
            == (expected, expected)


def test_off_is_recorded(db_url: str, table: str) -> None:
    from era5etl.pipeline import MonthJob
    from era5etl.variables import VARIABLES

    job = MonthJob(MONTH, Area.parse(AREA), Grid(), VARIABLES, table, "compress-off-test", Path("/nonexistent"))
    result = compress_step(db_url, job, "off")
    assert (result.state, result.reason) == ("off", "ERA5_COMPRESSION=off")
    with connect(db_url) as conn:
        row = conn.execute("SELECT detail FROM era5_metrics WHERE table_name = %s AND task = 'compress'",
                           (table,)).fetchone()
    assert row is not None and row[0]["state"] == "off"


def test_apache_build_refuses_the_settings_it_is_said_to_lack(db_url: str, table: str) -> None:
    # What `unavailable` rests on: the schema file's settings are refused by this server's licence.
    if _licence(db_url) == "timescale":
        pytest.skip("this server has the Community licence: compression is exercised by the test above")
    with connect(db_url) as conn, pytest.raises(psycopg.Error, match=r"(?i)licen[sc]e"):
        compress.enable(conn, table)
    # And the month's window is found by overlap, whatever the chunk interval.
    with connect(db_url) as conn:
        assert compress.overlapping_chunks(conn, table, datetime(2024, 3, 1, tzinfo=UTC),
                                           datetime(2024, 4, 1, tzinfo=UTC)) == []
