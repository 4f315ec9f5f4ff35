"""The rollups the loader writes with the rows: their schema on both licences (hypertables, a column
per aggregate of every data column), equal to a recomputation from the hourly rows after a load, a
reload, a partial reload, a load of part of a day, a load with added columns and an ERA5T-to-final
reload; validation failing a month whose rollups do not match; rollups an older version made
refused, then rebuilt."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest
import xarray as xr

from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import VARIABLES
from era5etl.db import connect, drop_table, ensure_schema
from era5etl.db.rollups import LegacyRollups
from era5etl.pipeline.job import MonthJob
from era5etl.pipeline.steps import RollupMismatch, validate_step
from era5etl.read import rollup_check
from era5etl.read.columns import ROLLUP_COLUMNS
from localcds.server import LocalCDS

from ..helpers import cli
from .common import AREA, assert_rollups_match, new_values, run_month
from .conftest import drop

MARCH = Month(2024, 3)
NEW_INSTANT = "newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc"
NEW_ACCUM = "newcds_accum_tp_2025-05_hourly_expver0005.nc"
OLD_3H = "oldcds_t2m_tp_d2m_msl_2023-01-01_3hourly_netcdf3.nc"
MAY = datetime(2025, 5, 1, tzinfo=UTC)
JUNE = datetime(2025, 6, 1, tzinfo=UTC)


def _columns(url: str, relation: str) -> list[tuple[str, str]]:
    with connect(url) as conn:
        return [(str(n), str(t)) for n, t in conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = %s"
            " ORDER BY ordinal_position", (relation,)).fetchall()]


def _hypertables(url: str, table: str) -> dict[str, bool]:
    """Each rollup that is a hypertable, and whether its columnstore is on."""
    with connect(url) as conn:
        return {str(n): bool(c) for n, c in conn.execute(
            "SELECT hypertable_name, compression_enabled FROM timescaledb_information.hypertables"
            " WHERE hypertable_name IN (%s, %s) ORDER BY 1", (f"{table}_daily", f"{table}_monthly")).fetchall()}


CONTRACT_TYPES = [(c, "timestamp with time zone" if c == "bucket" else "integer" if c in ("location_id", "hours")
                   else "real") for c in ROLLUP_COLUMNS]
# A table laid out in tiles (db.layout) has its rollups in tiles too: the tile after the keys.
TILED_CONTRACT_TYPES = [*CONTRACT_TYPES]
TILED_CONTRACT_TYPES.insert([c for c, _ in CONTRACT_TYPES].index("hours") + 1, ("tile", "integer"))


def test_every_table_gets_its_rollups_with_exactly_the_contracts_columns(db_url: str, table: str) -> None:
    # The Community licence: hypertables in the columnstore, empty until a load writes them.
    assert _hypertables(db_url, table) == {f"{table}_daily": True, f"{table}_monthly": True}
    for relation in (f"{table}_daily", f"{table}_monthly"):
        assert _columns(db_url, relation) == CONTRACT_TYPES
    # In tiles (a table made so, or moved: db.layout) the rollups carry the tile after their keys.
    tiled = f"{table}_t"
    try:
        with mock.patch.dict(os.environ, {"ERA5_LAYOUT": "tiles"}):
            ensure_schema(db_url, tiled)
        for relation in (f"{tiled}_daily", f"{tiled}_monthly"):
            assert _columns(db_url, relation) == TILED_CONTRACT_TYPES
    finally:
        with connect(db_url, autocommit=True) as conn:
            drop_table(conn, tiled)
    with connect(db_url) as conn:
        assert conn.execute(f"SELECT count(*) FROM {table}_daily").fetchone() == (0,)
        # No continuous aggregate, no policy: nothing refreshes them behind the pipeline's back.
        assert conn.execute("SELECT count(*) FROM timescaledb_information.continuous_aggregates"
                            " WHERE hypertable_name = %s", (table,)).fetchone() == (0,)
    # A table made before the rollups existed gets them from the next ensure_schema; existing ones are kept.
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f"DROP TABLE {table}_monthly")
        conn.execute(f"DROP TABLE {table}_daily")
    ensure_schema(db_url, table)
    ensure_schema(db_url, table)
    assert _hypertables(db_url, table) == {f"{table}_daily": True, f"{table}_monthly": True}


def _daily_chunks(url: str, table: str) -> list[tuple[datetime, datetime]]:
    with connect(url) as conn:
        return [(a, b) for a, b in conn.execute(
            "SELECT range_start, range_end FROM timescaledb_information.chunks WHERE hypertable_name = %s"
            " ORDER BY 1", (f"{table}_daily",)).fetchall()]


DECADE = [(datetime(2020, 1, 1, tzinfo=UTC), datetime(2030, 1, 1, tzinfo=UTC))]


def test_rollups_an_earlier_version_made_are_refused_then_rebuilt_from_the_hourly_rows(
    db_url: str, table: str, samples: Path
) -> None:
    code, _, err, _ = cli("load-file", str(samples / NEW_INSTANT), str(samples / NEW_ACCUM), "--table", table)
    assert code == 0, err
    # 25 points: the daily rollup's chunk is the decade (load.chunks.daily_ranges), the hourly's the year.
    assert _daily_chunks(db_url, table) == DECADE
    # An older version's continuous aggregates in place of the rollups, empty (refreshed month by month).
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f"DROP TABLE {table}_monthly")
        conn.execute(f"DROP TABLE {table}_daily")
        conn.execute(f"CREATE MATERIALIZED VIEW {table}_daily WITH (timescaledb.continuous) AS SELECT"
                     f" time_bucket('1 day', time) AS bucket, location_id, count(*) AS hours FROM {table}"
                     " GROUP BY 1, 2 WITH NO DATA")
        conn.execute(f"CREATE MATERIALIZED VIEW {table}_monthly WITH (timescaledb.continuous) AS SELECT"
                     f" time_bucket('1 month', bucket) AS bucket, location_id, sum(hours) AS hours FROM {table}_daily"
                     " GROUP BY 1, 2 WITH NO DATA")
    with pytest.raises(LegacyRollups, match=rf"rollups rebuild --table {table}"):
        ensure_schema(db_url, table)
    code, out, err, done = cli("rollups", "rebuild", "--table", table, "--json")
    assert code == 0, out + err
    assert done is not None and (done["months"], done["daily_rows"], done["monthly_rows"]) == (1, 12 * 25, 25)
    assert _hypertables(db_url, table) == {f"{table}_daily": True, f"{table}_monthly": True}
    assert _daily_chunks(db_url, table) == DECADE  # made as a load makes them, not a chunk a day
    assert_rollups_match(db_url, table, MAY, JUNE)
    ensure_schema(db_url, table)  # accepted again


def test_rollups_with_an_earlier_versions_longitude_column_keep_loading_exactly(
    db_url: str, table: str, samples: Path
) -> None:
    # Rollups made before the longitude left them (the point's id fixes it) have the column still:
    # a reload fills the rows without it, the box still finds them, the column stays NULL.
    files = [str(samples / NEW_INSTANT), str(samples / NEW_ACCUM)]
    code, _, err = cli("load-file", *files, "--table", table)[:3]
    assert code == 0, err
    with connect(db_url, autocommit=True) as conn:
        for relation in (f"{table}_daily", f"{table}_monthly"):
            conn.execute(f"ALTER TABLE {relation} ADD COLUMN longitude real")
    code, _, err, summary = cli("load-file", *files, "--table", table, "--json")
    assert code == 0, err
    assert summary is not None and summary["rollups"]["daily_rows"] == 12 * 25
    assert_rollups_match(db_url, table, MAY, JUNE)  # replaced, not added to: one row per point and bucket
    with connect(db_url) as conn:
        for relation in (f"{table}_daily", f"{table}_monthly"):
            assert conn.execute(f"SELECT count(*), count(longitude) FROM {relation}").fetchone() == (
                12 * 25 if relation.endswith("daily") else 25, 0)


def test_a_load_with_added_columns_part_days_and_partial_reloads_keeps_the_rollups_exact(
    db_url: str, table: str, samples: Path, tmp_path: Path
) -> None:
    # Twelve days of 25 points with two added columns (dewpoint, surface pressure): whole days, the
    # loader's own aggregation.
    code, _, err, summary = cli("load-file", str(samples / NEW_INSTANT), str(samples / NEW_ACCUM), "--table", table,
                                "--json")
    assert code == 0, err
    assert summary is not None and summary["added_columns"] == ["dewpoint_2m", "surface_pressure"]
    assert summary["rollups"]["daily_rows"] == 12 * 25 and summary["rollups"]["monthly_rows"] == 25
    with connect(db_url) as conn:
        have = {c for (c,) in conn.execute("SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass",
                                            (f"{table}_daily",)).fetchall()}
    assert {"dewpoint_2m_min", "dewpoint_2m_max", "dewpoint_2m_mean", "surface_pressure_mean"} <= have
    assert_rollups_match(db_url, table, MAY, JUNE)

    # A partial reload: six hours of one day (a day SQL completes from the hours the table keeps),
    # and the box of 3 x 3 of the 5 x 5 points, with other values (the file's scaled).
    with xr.open_dataset(samples / NEW_INSTANT) as ds:
        part = ds.isel(valid_time=slice(30, 36), latitude=slice(1, 4), longitude=slice(1, 4)).load()
    part["t2m"] = part["t2m"] + 3.0
    part["d2m"] = part["d2m"] - 2.0
    cut = tmp_path / "part.nc"
    part.to_netcdf(cut)
    # TimescaleDB refuses a statement that decompresses over 100,000 rows by default (a global month's
    # rollups are a million): the reload's transactions lift the limit, shown with it set to 10.
    code, _, err, summary = cli("load-file", str(cut), "--table", table, "--json",
                                env={"PGOPTIONS": "-c timescaledb.max_tuples_decompressed_per_dml_transaction=10"})
    assert code == 0, err
    assert summary is not None and summary["rows"] == 6 * 9
    assert summary["rollups"]["sql_days"] == 1  # the day's other hours are in the table
    after = assert_rollups_match(db_url, table, MAY, JUNE)
    # The reload shows in the day it touched, and only in the box's points.
    day = after["day"].xs(np.datetime64("2025-05-02"), level="bucket")
    assert len(day) == 25 and (day["hours"] == 24).all()

    # Three-hourly steps of another month: eight hours of a day the table holds nothing of, a lone
    # day the loader aggregates (load.rollup.WindowRollup.adopt).
    code, _, err, summary = cli("load-file", str(samples / OLD_3H), "--table", table, "--json")
    assert code == 0, err
    assert summary is not None and summary["rollups"]["daily_rows"] > 0 and summary["rollups"]["sql_days"] == 0
    january = datetime(2023, 1, 1, tzinfo=UTC)
    three = assert_rollups_match(db_url, table, january, datetime(2023, 2, 1, tzinfo=UTC))
    assert set(three["day"]["hours"]) == {8}
    assert_rollups_match(db_url, table, MAY, JUNE)  # the other month untouched


def test_a_lone_hour_is_rolled_up_by_the_loader_and_the_hours_beside_it_by_sql(
    db_url: str, table: str, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An hour loaded into a day the table holds nothing of is aggregated by the loader (SQL took over
    19 minutes for a global hour on 37 levels); a second hour of that day, and a reload of the first
    beside it, are SQL's over the hours the table holds. Another load writing the day's other hours
    while a lone-hour load runs fails that load, which leaves nothing behind."""
    from era5etl.load import load, loader
    from era5etl.load.errors import LoadError
    from era5etl.stage import open_download

    paths = {}
    with xr.open_dataset(samples / NEW_INSTANT) as ds:
        for i in (29, 33):  # two hours of 2025-05-02
            paths[i] = tmp_path / f"hour{i}.nc"
            ds.isel(valid_time=slice(i, i + 1)).load().to_netcdf(paths[i])

    def run(i: int) -> tuple[int, int]:
        with open_download([paths[i]]) as staged:
            result = load(db_url, table, staged)
        return result.sql_days, result.daily_rows

    def hours() -> set[int]:
        day = assert_rollups_match(db_url, table, MAY, JUNE)["day"]
        return set(day["hours"])

    assert run(29) == (0, 25)  # the loader's
    assert hours() == {1}
    assert run(33) == (1, 25)  # SQL's: the day holds hour 29 too
    assert hours() == {2}
    assert run(29) == (1, 25)  # a reload beside hour 33: SQL's
    assert hours() == {2}

    # A lone hour whose day another load fills while it runs: found in its chunk's transaction.
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f"TRUNCATE {table}, {table}_daily, {table}_monthly")
    asked = loader.lone_days  # what the loader asks before the load (its chunk's writer asks again)

    def racing(*args: Any, **kwargs: Any) -> Any:
        lone = asked(*args, **kwargs)
        monkeypatch.setattr(loader, "lone_days", asked)
        assert run(33) == (0, 25)  # lone when it looked too
        return lone
    monkeypatch.setattr(loader, "lone_days", racing)
    with pytest.raises(LoadError, match="another load wrote other hours of 2025-05-02"):
        run(29)
    assert hours() == {1}  # hour 33 alone, as the other load left it
    with connect(db_url) as conn:
        assert conn.execute(f"SELECT count(*) FROM {table} WHERE time = %s",
                            (datetime(2025, 5, 2, 5, tzinfo=UTC),)).fetchone() == (0,)


@pytest.fixture
def cds() -> Iterator[LocalCDS]:
    # A server of its own: these tests change its seed (every value) and its clock.
    with LocalCDS() as server:
        yield server


def test_rollups_follow_a_load_and_a_reload_and_validation_catches_what_differs(
    db_url: str, table: str, cds: LocalCDS, tmp_path: Path
) -> None:
    summary = run_month(cds, table, str(MARCH), tmp_path / "first")
    assert summary["success"]
    before = assert_rollups_match(db_url, table, MARCH.start, MARCH.end)
    with connect(db_url) as conn:
        recorded = conn.execute("SELECT rows, detail FROM era5_metrics WHERE table_name = %s AND task = 'validate'",
                                (table,)).fetchone()
        loaded = conn.execute("SELECT detail FROM era5_metrics WHERE table_name = %s AND task = 'load'",
                              (table,)).fetchone()
    assert recorded is not None and recorded[0] == 25 * 744
    checked = recorded[1]["rollups"]
    assert checked["mismatches"] == [] and (checked["daily_rows"], checked["monthly_rows"]) == (25 * 31, 25)
    assert loaded is not None and loaded[0]["rollups"]["daily_rows"] == 25 * 31

    # A reload with other values (a new seed, a fresh download): the rollups follow the new rows.
    new_values(cds, 11)
    run_month(cds, table, str(MARCH), tmp_path / "second")
    after = assert_rollups_match(db_url, table, MARCH.start, MARCH.end)
    assert not after["day"]["temperature_2m_mean"].equals(before["day"]["temperature_2m_mean"])

    # Hourly rows changed behind the rollups' back: the check names the column, the day and a point.
    first_day = MARCH.start.replace(hour=6)
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f"UPDATE {table} SET temperature_2m = temperature_2m + 30 WHERE time = %s", (first_day,))
    checked_now = rollup_check.check(db_url, table, MARCH, Area.parse(AREA), Grid())
    assert not checked_now.ok
    assert any("temperature_2m_max on 2024-03-01 differs from the hourly rows at 25 point(s)" in m
               for m in checked_now.mismatches), checked_now.mismatches
    assert checked_now.daily_rows == 25 * 31 and checked_now.hourly_rows == 25 * 744

    # The validate step fails such a month, naming it, and the ledger says so.
    job = MonthJob(MARCH, Area.parse(AREA), Grid(), VARIABLES, table, "rollup-test", tmp_path)
    with pytest.raises(RollupMismatch, match="temperature_2m_max on 2024-03-01"):
        validate_step(db_url, job)
    with connect(db_url) as conn:
        state = conn.execute("SELECT state, error FROM era5_months WHERE table_name = %s", (table,)).fetchone()
    assert state is not None and state[0] == "failed" and state[1].startswith("validate: the rollups of")
    # The monthly rows against the daily ones: a monthly value changed is named too.
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f"UPDATE {table}_monthly SET snowfall_sum = coalesce(snowfall_sum, 0) + 1")
    checked_now = rollup_check.check(db_url, table, MARCH, Area.parse(AREA), Grid())
    assert any("monthly rollup's snowfall_sum differs" in m for m in checked_now.mismatches), checked_now.mismatches


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
        runs = conn.execute("SELECT count(*) FROM era5_metrics WHERE table_name = %s AND task = 'load'",
                            (table,)).fetchone()
    assert runs == (2,)


def test_the_apache_licence_keeps_rollups_in_the_row_store_replaced_with_each_load(
    apache_url: str, cds: LocalCDS, tmp_path: Path
) -> None:
    table = "weather_read_apache"
    try:
        run_month(cds, table, str(MARCH), tmp_path / "first", url=apache_url)
        assert _hypertables(apache_url, table) == {f"{table}_daily": False, f"{table}_monthly": False}
        for relation in (f"{table}_daily", f"{table}_monthly"):
            assert _columns(apache_url, relation) == CONTRACT_TYPES
        before = assert_rollups_match(apache_url, table, MARCH.start, MARCH.end)
        # A row of another month (as another month's load would have left it) must survive.
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
