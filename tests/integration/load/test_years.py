"""``table years`` (load.years): a table's finished years copied place-major into ``<table>_years`` and its
daily rollup's into ``<table>_daily_years``, read back by ``series`` and local days (read.years) with
the same values as from the table, forgotten by a load that rewrites them, dropped with the table
(the daily copy with a rebuild of the rollups); on real CDS downloads (tests/data/era5-samples/README.md)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import psycopg
import pytest

from era5etl.db import connect
from era5etl.db.years import copied_years, copy_name
from era5etl.load.locks import lock_year
from era5etl.read.errors import ReadError
from era5etl.read.localday import local_daily
from era5etl.read.points import nearest_point
from era5etl.read.series import series
from era5etl.read.years import parts_of
from tests.integration.helpers import cli, forget

# One point, hourly 2023-01 .. 2026-04 (GRIB, expver 1 and 5); 45 points, hourly 2023-01 .. 2023-11;
# 8 pressure levels of 9 x 9 points, 270 hours over 2016-2025; one point, two days of 2015-08.
POINT = "grib1_2t_point_lon237.5_2023-01_to_2026-04_hourly_expver0001_0005.grib"
AREA = "grib1_tp_5x9_2023-01_to_2023-11_hourly_expver0001_0005.grib"
LEVELS = "era5pl_newcds_nc_z-t-u-v_8levels_270h_9x9.nc"
TWO_DAYS = "grib1_2t_10u_10v_2d_tp_plus_wave_point_2015-08_2days_hourly.grib"


def _load(samples: Path, name: str, table: str, *extra: str) -> None:
    code, _, err, _ = cli("load-file", str(samples / name), "--table", table, *extra)
    assert code == 0, err


def _history(url: str, table: str, lat: float, lon: float, level: int | None = None, step: str = "hour"
             ) -> tuple[np.ndarray, dict]:
    with connect(url) as conn:
        s = series(conn, table, nearest_point(conn, table, lat, lon), None, None, None, step, level)  # type: ignore[arg-type]
    return s.time, s.values


def _local_days(url: str, table: str, lat: float, lon: float) -> tuple[np.ndarray, dict]:
    """The place's days of UTC+7 from its hours (a local day crosses the copied years' bounds)."""
    with connect(url) as conn:
        s = local_daily(conn, table, nearest_point(conn, table, lat, lon), None, None, None, 7 * 60)
    return s.time, s.values


def _same(before: tuple[np.ndarray, dict], after: tuple[np.ndarray, dict]) -> None:
    assert np.array_equal(after[0], before[0]) and before[0].size > 0
    assert after[1].keys() == before[1].keys()
    for column, v in before[1].items():
        assert np.array_equal(after[1][column], v, equal_nan=True), column


def _equal_rows(conn: psycopg.Connection, one: str, other: str) -> None:
    """``one`` and ``other`` (FROM ... WHERE ...) hold the same rows, as many times each."""
    for a, b in ((one, other), (other, one)):
        diff = conn.execute(f"SELECT count(*) FROM (SELECT * FROM {a} EXCEPT ALL SELECT * FROM {b}) d").fetchone()
        assert diff == (0,), (a, b)


@pytest.fixture(scope="module")
def point_table(db_url: str, samples: Path) -> Iterator[str]:
    """The point's 2023-01 .. 2026-04, loaded once: the tests below run in order on it."""
    table = f"years_point_{os.getpid()}"
    forget(db_url, table)
    _load(samples, POINT, table)
    yield table
    forget(db_url, table)


def test_finished_years_are_copied_read_from_the_copy_and_equal_the_table(db_url: str, point_table: str) -> None:
    table = point_table
    times, values = _history(db_url, table, 47.75, -122.5)
    days, local = _history(db_url, table, 47.75, -122.5, step="day"), _local_days(db_url, table, 47.75, -122.5)
    with connect(db_url) as conn:
        middle = series(conn, table, nearest_point(conn, table, 47.75, -122.5), datetime(2024, 2, 3, 5, tzinfo=UTC),
                        datetime(2026, 2, 1, tzinfo=UTC), None, "hour")

    code, out, err, got = cli("table", "years", table, "--json")
    assert code == 0, err
    # 2026 is not finished; a table load-file made has no ledger months, so every earlier year goes.
    assert [c["year"] for c in got["copied"]] == [2023, 2024, 2025]
    assert [c["rows"] for c in got["copied"]] == [8760, 8784, 8760]
    assert [c["daily_rows"] for c in got["copied"]] == [365, 366, 365]
    daily = f"{table}_daily"
    with connect(db_url) as conn:
        assert copied_years(conn, table) == copied_years(conn, daily) == [2023, 2024, 2025]
        span = "bucket >= '2023-01-01' AND bucket < '2026-01-01'"
        _equal_rows(conn, f"{daily} WHERE {span}", copy_name(daily))
        assert [(p.relation, p.start and p.start.year) for p in parts_of(conn, daily, None, None)] == [
            (daily, None), (copy_name(daily), 2023), (daily, 2026)]
        chunks = conn.execute("SELECT range_start, range_end, is_compressed FROM timescaledb_information.chunks"
                              " WHERE hypertable_name = %s ORDER BY range_start", (copy_name(table),)).fetchall()
        parts = parts_of(conn, table, None, None)
    # A calendar year a chunk, in the columnstore.
    assert [(a.year, a.month, a.day, b.year, b.month, b.day, c) for a, b, c in chunks] == [
        (y, 1, 1, y + 1, 1, 1, True) for y in (2023, 2024, 2025)]
    assert [(p.relation, p.start and p.start.year, p.end and p.end.year) for p in parts] == [
        (table, None, 2023), (copy_name(table), 2023, 2026), (table, 2026, None)]

    _same((times, values), _history(db_url, table, 47.75, -122.5))
    _same(days, _history(db_url, table, 47.75, -122.5, step="day"))  # the daily series, from the daily copy
    _same(local, _local_days(db_url, table, 47.75, -122.5))  # local days, from the hours' copy and the table
    with connect(db_url) as conn, pytest.raises(ReadError, match="from the first hour to 1991-01-01 00:00 UTC"):
        local_daily(conn, table, nearest_point(conn, table, 47.75, -122.5), None, datetime(1991, 1, 1, tzinfo=UTC),
                    None, 7 * 60)
    with connect(db_url) as conn:  # a range cut inside copied years reads the same rows too
        again = series(conn, table, nearest_point(conn, table, 47.75, -122.5), datetime(2024, 2, 3, 5, tzinfo=UTC),
                       datetime(2026, 2, 1, tzinfo=UTC), None, "hour")
        plan = "\n".join(r[0] for r in conn.execute(
            f"EXPLAIN SELECT * FROM {copy_name(table)} WHERE location_id = 1 AND time >= '2024-01-01'"))
    assert np.array_equal(again.time, middle.time) and again.time.size == middle.time.size > 17000
    assert np.array_equal(again.values["temperature_2m"], middle.values["temperature_2m"], equal_nan=True)
    assert "location_id = 1" in plan and "Index" in plan  # the copy's batches found by the place's id

    code, out, _, _ = cli("table", "list")
    assert code == 0 and any(line.startswith(table) and re.search(r" 2023\.\.2025 \(\d+(\.\d)? [KM]iB\)$", line)
                             for line in out.splitlines()), out
    code, _, _, listed = cli("table", "list", "--json")
    with connect(db_url) as conn:  # the copies' bytes: the hours' and the days'
        held = conn.execute("SELECT hypertable_size(%s::regclass) + hypertable_size(%s::regclass)",
                            (copy_name(table), copy_name(daily))).fetchone()
    assert [t["copies_bytes"] for t in listed["tables"] if t["name"] == table] == [held[0]] and held[0] > 0
    code, out, _, _ = cli("table", "years", table)
    assert code == 0 and "no year to copy" in out

    # A year whose hours are copied and whose days are not (a copy an earlier version made): the days
    # alone are copied, the hours' copy left as it was.
    with connect(db_url, autocommit=True) as conn:
        stamp = conn.execute("SELECT copied_at FROM era5_year_copies WHERE table_name = %s AND year = 2025",
                             (table,)).fetchone()
        conn.execute("DELETE FROM era5_year_copies WHERE table_name = %s AND year = 2025", (daily,))
    code, _, err, got = cli("table", "years", table, "--json")
    assert code == 0, err
    assert [(c["year"], c["rows"], c["daily_rows"]) for c in got["copied"]] == [(2025, 0, 365)]
    with connect(db_url) as conn:
        assert copied_years(conn, daily) == [2023, 2024, 2025]
        assert conn.execute("SELECT copied_at FROM era5_year_copies WHERE table_name = %s AND year = 2025",
                            (table,)).fetchone() == stamp
        assert conn.execute(f"SELECT count(*) FROM {copy_name(daily)}").fetchone() == (1096,)  # not doubled
    _same(days, _history(db_url, table, 47.75, -122.5, step="day"))


def test_a_copy_waits_for_a_writer_of_its_year(db_url: str, point_table: str) -> None:
    """A writer of 2024's rows holds the year's lock shared (load.writer, through forget_years): the copy
    of 2024 waits until it ends, so it never records rows the writer is about to change."""
    table = point_table
    with connect(db_url) as conn:
        stamp = conn.execute("SELECT copied_at FROM era5_year_copies WHERE table_name = %s AND year = 2024",
                             (table,)).fetchone()
    assert stamp is not None
    blocker = psycopg.connect(db_url)  # in a transaction until the rollback below
    lock_year(blocker.cursor(), table, 2024, shared=True)
    proc = subprocess.Popen([sys.executable, "-m", "era5etl", "table", "years", table, "--year", "2024"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            with connect(db_url) as conn:
                waiting = conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                                       ).fetchone()
            if waiting and waiting[0] > 0:
                break
            assert proc.poll() is None and time.monotonic() < deadline, "the copy did not wait for the year's lock"
            time.sleep(0.2)
        with connect(db_url) as conn:  # the year as it was copied before, still read from the copy
            assert copied_years(conn, table) == [2023, 2024, 2025]
    finally:
        blocker.rollback()
        blocker.close()
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    with connect(db_url) as conn:
        again = conn.execute("SELECT copied_at, rows FROM era5_year_copies WHERE table_name = %s AND year = 2024",
                             (table,)).fetchone()
        held = conn.execute(f"SELECT count(*) FROM {copy_name(table)} WHERE time >= '2024-01-01'"
                            " AND time < '2025-01-01'").fetchone()
    assert again is not None and again[0] > stamp[0] and again[1] == 8784
    assert held == (8784,)  # copied again: replaced, not doubled


def test_a_load_forgets_the_years_it_rewrites(db_url: str, point_table: str, samples: Path) -> None:
    """45 more points of 2023-01 .. 2023-11 loaded into the table: 2023 leaves the copy's record, 2024
    and 2025 stay; copied again, the copy holds exactly the table's rows of 2023."""
    table = point_table
    _load(samples, AREA, table)
    with connect(db_url) as conn:
        assert copied_years(conn, table) == copied_years(conn, f"{table}_daily") == [2024, 2025]
        assert [(p.relation, p.start and p.start.year) for p in parts_of(conn, table, None, None)] == [
            (table, None), (copy_name(table), 2024), (table, 2026)]
        lat, lon = conn.execute(f"SELECT latitude, longitude FROM {table} WHERE time = '2023-06-01'"
                                " AND longitude <> -122.5 ORDER BY location_id LIMIT 1").fetchone()
    before, days = _history(db_url, table, lat, lon), _history(db_url, table, lat, lon, step="day")
    code, _, err, got = cli("table", "years", table, "--json")
    assert code == 0 and [c["year"] for c in got["copied"]] == [2023], err
    with connect(db_url) as conn:
        span = "time >= '2023-01-01' AND time < '2024-01-01'"
        _equal_rows(conn, f"{table} WHERE {span}", copy_name(table) + f" WHERE {span}")
        assert conn.execute(f"SELECT count(*) FROM {table} WHERE {span}").fetchone() == (got["copied"][0]["rows"],)
        span = "bucket >= '2023-01-01' AND bucket < '2024-01-01'"
        _equal_rows(conn, f"{table}_daily WHERE {span}", copy_name(f"{table}_daily") + f" WHERE {span}")
        assert conn.execute(f"SELECT count(*) FROM {table}_daily WHERE {span}").fetchone() == (
            got["copied"][0]["daily_rows"],)
    assert before[0].size > 7000
    _same(before, _history(db_url, table, lat, lon))
    _same(days, _history(db_url, table, lat, lon, step="day"))


def test_rebuilding_the_rollups_drops_the_daily_copy(db_url: str, point_table: str) -> None:
    """The daily copy was made from the rollup a rebuild drops: it goes with it; the hours' copy stays."""
    table = point_table
    code, _, err, _ = cli("rollups", "rebuild", "--table", table)
    assert code == 0, err
    with connect(db_url) as conn:
        assert copied_years(conn, f"{table}_daily") == []
        assert conn.execute("SELECT to_regclass(%s)", (copy_name(f"{table}_daily"),)).fetchone() == (None,)
        assert copied_years(conn, table) == [2023, 2024, 2025]
    code, _, err, got = cli("table", "years", table, "--json")  # the days copied again, the hours not
    assert code == 0, err
    with connect(db_url) as conn:
        days = dict(conn.execute(f"SELECT extract(year FROM bucket)::int, count(*) FROM {table}_daily GROUP BY 1"))
        _equal_rows(conn, f"{table}_daily WHERE bucket < '2026-01-01'", copy_name(f"{table}_daily"))
    assert [(c["year"], c["rows"], c["daily_rows"]) for c in got["copied"]] == [
        (y, 0, days[y]) for y in (2023, 2024, 2025)]
    assert days[2023] > 365 * 40  # the 45 points of 2023 too


def test_dropping_the_table_drops_its_copy(db_url: str, point_table: str) -> None:
    table = point_table
    code, _, err, got = cli("table", "drop", table, "--yes", "--json")
    assert code == 0, err
    daily = f"{table}_daily"
    assert {copy_name(table), copy_name(daily)} <= set(got["dropped"]) and got["deleted"]["era5_year_copies"] == 6
    with connect(db_url) as conn:
        for relation in (table, daily):
            assert conn.execute("SELECT to_regclass(%s)", (copy_name(relation),)).fetchone() == (None,)
            assert copied_years(conn, relation) == []


@pytest.mark.parametrize("length", [45, 55])
def test_a_long_table_name_gets_its_years_copied(db_url: str, samples: Path, length: int) -> None:
    """Issue 47: a table name of 36-55 characters (the rule allows 55) failed the copy with TimescaleDB's
    "chunk name too long": the copy's yearly chunk goes to the columnstore, whose twin is named
    ``<chunk>_compressed`` within 63 bytes. The chunks' names are fitted to leave it room."""
    from era5etl.core.names import MAX_CHUNK_NAME

    prefix = f"long_{os.getpid()}_"
    table = prefix + "x" * (length - len(prefix))
    forget(db_url, table)
    try:
        _load(samples, POINT, table)
        code, _, err, got = cli("table", "years", table, "--year", "2023", "--json")
        assert code == 0, err
        assert [c["year"] for c in got["copied"]] == [2023]
        with connect(db_url) as conn:
            _equal_rows(conn, f"{table} WHERE time >= '2023-01-01' AND time < '2024-01-01'", copy_name(table))
            names = [r[0] for r in conn.execute(
                "SELECT chunk_name FROM timescaledb_information.chunks WHERE hypertable_name = ANY(%s)",
                ([copy_name(table), copy_name(f"{table}_daily")],)).fetchall()]
        assert len(set(names)) == 2 and all(len(n.encode()) <= MAX_CHUNK_NAME for n in names), names
    finally:
        forget(db_url, table)


def test_levels_copy_every_row(db_url: str, samples: Path) -> None:
    """8 levels over 2016-2025: the copy holds exactly the table's rows of its years, and a place's
    series at a level reads the same from it."""
    table = f"years_levels_{os.getpid()}"
    forget(db_url, table)
    try:
        _load(samples, LEVELS, table, "--dataset", "pressure-levels")
        before = {level: _history(db_url, table, 35.0, -117.0, level) for level in (500, 975)}
        code, _, err, got = cli("table", "years", table, "--json")
        assert code == 0, err
        with connect(db_url) as conn:
            _equal_rows(conn, f"{table} WHERE time < '2026-01-01'", copy_name(table))
            _equal_rows(conn, f"{table}_daily WHERE bucket < '2026-01-01'", copy_name(f"{table}_daily"))
            assert copied_years(conn, table) == sorted(c["year"] for c in got["copied"])
            assert len(got["copied"]) >= 5
        for level, (times, values) in before.items():
            after_times, after = _history(db_url, table, 35.0, -117.0, level)
            assert np.array_equal(after_times, times) and times.size > 0
            for column, v in values.items():
                assert np.array_equal(after[column], v, equal_nan=True), (level, column)
    finally:
        forget(db_url, table)


def test_a_table_of_that_name_that_is_not_the_copy_is_left_alone(db_url: str, samples: Path) -> None:
    table = f"years_taken_{os.getpid()}"
    forget(db_url, table)
    _load(samples, TWO_DAYS, table)
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {copy_name(table)} (note text)")
    try:
        code, _, err, _ = cli("table", "years", table)
        assert code == 2 and "is not the pipeline's copy" in err, err
        # The daily rollup's copy's name held instead: refused before the hours' copy is made.
        daily_copy = copy_name(f"{table}_daily")
        with connect(db_url, autocommit=True) as conn:
            conn.execute(f"ALTER TABLE {copy_name(table)} RENAME TO {daily_copy}")
        code, _, err, _ = cli("table", "years", table)
        assert code == 2 and f"{daily_copy} exists" in err and "nothing was made" in err, err
        with connect(db_url, autocommit=True) as conn:
            assert conn.execute("SELECT to_regclass(%s) IS NULL", (copy_name(table),)).fetchone() == (True,)
            conn.execute(f"ALTER TABLE {daily_copy} RENAME TO {copy_name(table)}")
        code, _, err, _ = cli("table", "drop", table, "--yes")
        assert code == 0, err
        with connect(db_url, autocommit=True) as conn:  # dropping the table left the user's own table standing
            assert conn.execute("SELECT to_regclass(%s) IS NOT NULL", (copy_name(table),)).fetchone() == (True,)
            conn.execute(f"DROP TABLE {copy_name(table)}")
        # The name the year's chunk takes, held by a user's table: refused, and nothing copied.
        _load(samples, TWO_DAYS, table)
        with connect(db_url, autocommit=True) as conn:
            conn.execute(f"CREATE TABLE {copy_name(table)}_2015 (note text)")
        code, _, err, _ = cli("table", "years", table, "--year", "2015")
        assert code == 2 and "is not a chunk of the copy" in err, err
        with connect(db_url) as conn:
            assert copied_years(conn, table) == []
    finally:
        forget(db_url, table)
        with connect(db_url, autocommit=True) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {copy_name(table)}")
            conn.execute(f"DROP TABLE IF EXISTS {copy_name(table)}_2015")
