"""The rollups the pipeline keeps: their schema on both licences, equal to a recomputation from the
hourly rows after a load, a reload and an ERA5T-to-final reload, and the step's check failing a month
whose rollups do not match."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import VARIABLES
from era5etl.db import connect, ensure_schema
from era5etl.pipeline.job import MonthJob
from era5etl.pipeline.steps import RollupMismatch, rollup_step
from era5etl.read import rollup_check
from era5etl.read.columns import ROLLUP_COLUMNS
from localcds.server import LocalCDS

from ..helpers import cli
from .common import AREA, assert_rollups_match, new_values, run_month
from .conftest import drop

MARCH = Month(2024, 3)


def _columns(url: str, relation: str) -> list[tuple[str, str]]:
    with connect(url) as conn:
        return [(str(n), str(t)) for n, t in conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = %s"
            " ORDER BY ordinal_position", (relation,)).fetchall()]


def _kinds(url: str, table: str) -> dict[str, str | None]:
    with connect(url) as conn:
        return {r: (row[0] if (row := conn.execute(
            "SELECT materialized_only::text FROM timescaledb_information.continuous_aggregates"
            " WHERE view_name = %s", (r,)).fetchone()) else None) for r in (f"{table}_daily", f"{table}_monthly")}


CONTRACT_TYPES = [(c, "timestamp with time zone" if c == "bucket" else "integer" if c == "location_id"
                   else "bigint" if c == "hours" else "real") for c in ROLLUP_COLUMNS]


def test_every_table_gets_its_rollups_with_exactly_the_contracts_columns(db_url: str, table: str) -> None:
    # The Community licence: continuous aggregates, materialized only, empty until a month is refreshed.
    assert _kinds(db_url, table) == {f"{table}_daily": "true", f"{table}_monthly": "true"}
    for relation in (f"{table}_daily", f"{table}_monthly"):
        assert _columns(db_url, relation) == CONTRACT_TYPES
    with connect(db_url) as conn:
        assert conn.execute(f"SELECT count(*) FROM {table}_daily").fetchone() == (0,)
        # No policy refreshes them behind the pipeline's back.
        assert conn.execute(
            "SELECT count(*) FROM timescaledb_information.jobs WHERE hypertable_name IN (SELECT"
            " materialization_hypertable_name FROM timescaledb_information.continuous_aggregates"
            " WHERE hypertable_name = %s)", (table,)).fetchone() == (0,)
    # A table made before the rollups existed gets them from the next ensure_schema; existing ones are kept.
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f"DROP MATERIALIZED VIEW {table}_monthly")  # it aggregates the daily one
        conn.execute(f"DROP MATERIALIZED VIEW {table}_daily")
    ensure_schema(db_url, table)
    ensure_schema(db_url, table)
    assert _kinds(db_url, table) == {f"{table}_daily": "true", f"{table}_monthly": "true"}


@pytest.fixture
def cds() -> Iterator[LocalCDS]:
    # A server of its own: these tests change its seed (every value) and its clock.
    with LocalCDS() as server:
        yield server


def test_rollups_follow_a_load_and_a_reload_and_a_check_catches_what_differs(
    db_url: str, table: str, cds: LocalCDS, tmp_path: Path
) -> None:
    summary = run_month(cds, table, str(MARCH), tmp_path / "first")
    [rollup] = [s for s in summary["steps"] if s["task"] == "rollup"]
    assert (rollup["daily_rows"], rollup["monthly_rows"]) == (25 * 31, 25)
    before = assert_rollups_match(db_url, table, MARCH.start, MARCH.end)
    with connect(db_url) as conn:
        recorded = conn.execute("SELECT rows, detail FROM era5_metrics WHERE table_name = %s AND task = 'rollup'",
                                (table,)).fetchone()
    assert recorded is not None and recorded[0] == 25 * 744
    assert recorded[1]["check"]["mismatches"] == [] and recorded[1]["refresh"]["kinds"]["day"] == "continuous aggregate"

    # A reload with other values (a new seed, a fresh download): the rollups follow the new rows.
    new_values(cds, 11)
    run_month(cds, table, str(MARCH), tmp_path / "second")
    after = assert_rollups_match(db_url, table, MARCH.start, MARCH.end)
    assert not after["day"]["temperature_2m_mean"].equals(before["day"]["temperature_2m_mean"])

    # Hourly rows changed behind the rollups' back: the check names the column, the day and a point.
    first_day = MARCH.start.replace(hour=6)
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f"UPDATE {table} SET temperature_2m = temperature_2m + 30 WHERE time = %s", (first_day,))
    checked = rollup_check.check(db_url, table, MARCH, Area.parse(AREA), Grid())
    assert not checked.ok
    assert any("temperature_2m_max on 2024-03-01 differs from the hourly rows at 25 point(s)" in m
               for m in checked.mismatches), checked.mismatches
    assert checked.daily_rows == 25 * 31 and checked.hourly_rows == 25 * 744

    # The step refreshes them first, so they follow those rows too; a point missing an hour fails it.
    job = MonthJob(MARCH, Area.parse(AREA), Grid(), VARIABLES, table, "rollup-test", tmp_path)
    assert rollup_step(db_url, job)["daily_rows"] == 25 * 31
    assert_rollups_match(db_url, table, MARCH.start, MARCH.end)
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f"DELETE FROM {table} WHERE time = %s AND location_id = (SELECT min(location_id) FROM {table})",
                     (first_day,))
    with pytest.raises(RollupMismatch, match=r"1 daily row\(s\) for 2024-03 in 46/7/45/8 .*other than 24 hours"):
        rollup_step(db_url, job)
    with connect(db_url) as conn:
        state = conn.execute("SELECT state, error FROM era5_months WHERE table_name = %s", (table,)).fetchone()
    assert state is not None and state[0] == "failed" and state[1].startswith("rollup: the rollups of")


def test_an_era5t_month_reloaded_as_final_has_its_rollups_follow(
    db_url: str, table: str, cds: LocalCDS, tmp_path: Path
) -> None:
    january = Month(2024, 1)
    env = {"CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(tmp_path)}
    cds.clock = lambda: datetime(2024, 2, 20, tzinfo=UTC)  # January is out as ERA5T
    code, out, err, _ = cli("run-month", str(january), "--area", AREA, "--table", table, env=env)
    assert code == 0, out + err
    era5t = assert_rollups_match(db_url, table, january.start, january.end)
    # June: final ERA5 replaces it, with other values (the synthetic CDS's new seed).
    cds.clock, cds.seed = (lambda: datetime(2024, 6, 10, tzinfo=UTC)), 5
    code, out, err, done = cli("finalize", "--table", table, "--as-of", "2024-06-10", "--run", "--json", env=env)
    assert code == 0, out + err
    assert done is not None and [r["final"] for r in done["reloaded"]] == [True]
    final = assert_rollups_match(db_url, table, january.start, january.end)
    assert not final["month"]["total_precipitation_sum"].equals(era5t["month"]["total_precipitation_sum"])
    with connect(db_url) as conn:
        runs = conn.execute("SELECT count(*) FROM era5_metrics WHERE table_name = %s AND task = 'rollup'",
                            (table,)).fetchone()
    assert runs == (2,)


def test_the_apache_licence_keeps_plain_rollup_tables_refilled_per_month(
    apache_url: str, cds: LocalCDS, tmp_path: Path
) -> None:
    table = "weather_read_apache"
    try:
        run_month(cds, table, str(MARCH), tmp_path / "first", url=apache_url)
        with connect(apache_url) as conn:
            kinds = conn.execute("SELECT relname, relkind::text FROM pg_class WHERE relname IN (%s, %s) ORDER BY 1",
                                 (f"{table}_daily", f"{table}_monthly")).fetchall()
            keys = conn.execute("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s::regclass"
                                " AND contype = 'p'", (f"{table}_daily",)).fetchone()
        assert kinds == [(f"{table}_daily", "r"), (f"{table}_monthly", "r")]
        assert keys == ("PRIMARY KEY (location_id, bucket)",)
        for relation in (f"{table}_daily", f"{table}_monthly"):
            assert _columns(apache_url, relation) == CONTRACT_TYPES
        before = assert_rollups_match(apache_url, table, MARCH.start, MARCH.end)
        # A row of another month (as another month's refresh would have left it) must survive.
        other = datetime(2024, 4, 1, tzinfo=UTC)
        with connect(apache_url, autocommit=True) as conn:
            conn.execute(f"INSERT INTO {table}_daily (bucket, location_id, hours) VALUES (%s, 1, 24)", (other,))
        # A reload with other values replaces the month's rollup rows, and only those.
        new_values(cds, 3)
        run_month(cds, table, str(MARCH), tmp_path / "second", url=apache_url)
        after = assert_rollups_match(apache_url, table, MARCH.start, MARCH.end)
        assert not after["day"]["temperature_2m_mean"].equals(before["day"]["temperature_2m_mean"])
        with connect(apache_url) as conn:
            assert conn.execute(f"SELECT bucket, location_id FROM {table}_daily WHERE bucket >= %s",
                                (other,)).fetchall() == [(other, 1)]
    finally:
        drop(apache_url, table)
