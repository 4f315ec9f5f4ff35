"""`era5etl load-file` on the real pressure-level downloads in tests/data/era5-samples (README there),
into the real TimescaleDB: one row per time, level and point, exactly the README's rows, every value
equal to xarray's (NetCDF) or ecCodes' (GRIB) decoding after the unit change; the dataset told from
the files; a rerun exact; a reload of some levels replaces those levels only; files and tables that
contradict the dataset refused with nothing written."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import eccodes
import numpy as np
import pandas as pd
import pytest
import xarray as xr

from era5etl.core.datasets import PRESSURE_LEVELS
from era5etl.core.grid import location_ids
from era5etl.db import connect, drop_table

from ..helpers import assert_level_rollups_match, cli

NEW_NC = "era5pl_newcds_nc_z-t-u-v_8levels_270h_9x9.nc"
OLD_NC = "era5pl_oldcds_nc3-int16packed_level_r-t-u-v_3levels_16h_21x57.nc"
GRIB = "era5pl_grib1_z_500+1000hPa_1t_301x241.grib"
ROWS = {NEW_NC: 174_960, OLD_NC: 57_456, GRIB: 145_082}
KEY = ["time", "level", "location_id"]


@pytest.fixture
def pl_table(db_url: str) -> Iterator[str]:
    """A name for a pressure-level table of its own (load-file creates it), dropped afterwards."""
    name = f"pl_{uuid.uuid4().hex[:10]}"
    yield name
    with connect(db_url, autocommit=True) as conn:
        drop_table(conn, name)


def _netcdf_expected(path: Path) -> pd.DataFrame:
    """One row per (time, level, point) from xarray's decoding: decoded * scale + offset in float64, float32."""
    frames = []
    with xr.open_dataset(path, engine="netcdf4") as ds:
        tdim = "valid_time" if "valid_time" in ds.dims else "time"
        ldim = "pressure_level" if "pressure_level" in ds.dims else "level"
        glat, glon = np.meshgrid(ds.latitude.values, ds.longitude.values, indexing="ij")
        ids = location_ids(glat.ravel(), glon.ravel())
        times = ds[tdim].values.astype("datetime64[us]")
        for lev in ds[ldim].values:
            frame = pd.DataFrame({"time": np.repeat(times, ids.size), "level": int(lev),
                                  "location_id": np.tile(ids, times.size)})
            for var in PRESSURE_LEVELS.catalogue:
                if var.short_name in ds.data_vars:
                    raw = ds[var.short_name].sel({ldim: lev}).transpose(tdim, "latitude", "longitude").values
                    frame[var.column] = (raw.astype(np.float64) * var.scale + var.offset).astype(np.float32).ravel()
            frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _grib_expected(path: Path) -> pd.DataFrame:
    frames = []
    with path.open("rb") as f:
        while (h := eccodes.codes_grib_new_from_file(f)) is not None:
            try:
                d, t = eccodes.codes_get_long(h, "validityDate"), eccodes.codes_get_long(h, "validityTime")
                valid = np.datetime64(f"{d // 10000:04d}-{d // 100 % 100:02d}-{d % 100:02d}T{t // 100:02d}:00", "us")
                lev, pid = eccodes.codes_get_long(h, "level"), eccodes.codes_get_long(h, "paramId")
                values = eccodes.codes_get_values(h)
                lat, lon = eccodes.codes_get_array(h, "latitudes"), eccodes.codes_get_array(h, "longitudes")
            finally:
                eccodes.codes_release(h)
            var = next(v for v in PRESSURE_LEVELS.catalogue if v.param_id == pid)
            frames.append(pd.DataFrame({"time": valid, "level": lev, "location_id": location_ids(lat, lon),
                                        var.column: (values * var.scale + var.offset).astype(np.float32)}))
    return pd.concat(frames, ignore_index=True)


def _table(url: str, table: str) -> pd.DataFrame:
    with connect(url) as conn:
        cols = [r[0] for r in conn.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped"
            " ORDER BY attnum", (table,)).fetchall()]
        floats = ", ".join(f"{c}::float8 AS {c}" for c in cols if c not in ("time", "level", "location_id"))
        cur = conn.execute(f"SELECT time, level, location_id, {floats} FROM {table} ORDER BY time, level, location_id")
        frame = pd.DataFrame(cur.fetchall(), columns=[d.name for d in cur.description or []])
    frame["time"] = pd.to_datetime(frame["time"], utc=True).dt.tz_localize(None).astype("datetime64[us]")
    return frame


def _assert_holds(url: str, table: str, expected: pd.DataFrame) -> None:
    got = _table(url, table)
    expected = expected.sort_values(KEY, ignore_index=True)
    assert len(got) == len(expected)
    for key in KEY:
        np.testing.assert_array_equal(got[key].to_numpy(), expected[key].to_numpy(), err_msg=key)
    for col in got.columns:
        if col in KEY or col in ("latitude", "longitude"):
            continue
        have = got[col].to_numpy(dtype=np.float64)
        if col in expected:
            np.testing.assert_array_equal(have, expected[col].to_numpy(dtype=np.float32).astype(np.float64),
                                          err_msg=col)
        else:
            assert np.isnan(have).all(), f"{col} should be NULL: the file does not hold it"


@pytest.mark.parametrize("name", [NEW_NC, OLD_NC, GRIB])
def test_each_pressure_level_sample_loads_exactly(db_url: str, pl_table: str, samples: Path, name: str) -> None:
    path = samples / name
    # No --dataset: the files show their levels.
    code, _, err, summary = cli("load-file", str(path), "--table", pl_table, "--json")
    assert code == 0, err
    assert summary is not None and summary["dataset"] == "pressure-levels"
    assert summary["rows"] == ROWS[name]
    assert summary["columnstore"] == "compressed"
    expected = _grib_expected(path) if name == GRIB else _netcdf_expected(path)
    assert len(expected) == ROWS[name]
    _assert_holds(db_url, pl_table, expected)
    with connect(db_url) as conn:
        kind = conn.execute("SELECT format_type(atttypid, atttypmod), attnotnull FROM pg_attribute"
                            " WHERE attrelid = %s::regclass AND attname = 'level'", (pl_table,)).fetchone()
    assert kind == ("smallint", True)
    # A rerun replaces every row with itself.
    code, _, err, again = cli("load-file", str(path), "--table", pl_table, "--json", "--dataset", "pressure-levels")
    assert code == 0, err
    assert again is not None and again["rows"] == again["deleted"] == ROWS[name]
    _assert_holds(db_url, pl_table, expected)
    # The daily and monthly rollups, a row per (bucket, level, point), written with the rows.
    assert assert_level_rollups_match(db_url, pl_table) > 0


def test_a_reload_of_some_levels_keeps_the_others(db_url: str, pl_table: str, samples: Path,
                                                  tmp_path: Path) -> None:
    path = samples / OLD_NC
    assert cli("load-file", str(path), "--table", pl_table)[0] == 0
    # The same hours at 850 hPa only, every value changed: only those rows are replaced.
    with xr.open_dataset(path, mask_and_scale=False) as ds:
        one = ds.sel(level=[850]).load()
    one["t"] = one["t"] + np.int16(100)
    one.to_netcdf(tmp_path / "850.nc", format="NETCDF3_64BIT")
    code, _, err, summary = cli("load-file", str(tmp_path / "850.nc"), "--table", pl_table, "--json")
    assert code == 0, err
    assert summary is not None and summary["rows"] == summary["deleted"] == ROWS[OLD_NC] // 3
    expected = _netcdf_expected(path)
    changed = _netcdf_expected(tmp_path / "850.nc")
    expected = pd.concat([expected[expected.level != 850], changed], ignore_index=True)
    _assert_holds(db_url, pl_table, expected)
    # The rollup rows of 850 hPa follow the new values; the other levels' stay.
    assert assert_level_rollups_match(db_url, pl_table) > 0


def test_contradictions_are_refused_with_nothing_written(db_url: str, pl_table: str, table: str,
                                                         samples: Path) -> None:
    # A pressure-level file asked to load as single levels.
    code, _, err, _ = cli("load-file", str(samples / GRIB), "--table", pl_table, "--dataset", "single-levels")
    assert code != 0 and "use --dataset pressure-levels" in err
    # A single-level file asked to load as pressure levels.
    single = samples / "oldcds_t2m_tp_d2m_msl_2023-01-01_3hourly_netcdf3.nc"
    code, _, err, _ = cli("load-file", str(single), "--table", pl_table, "--dataset", "pressure-levels")
    assert code != 0 and "no pressure levels" in err
    with connect(db_url) as conn:
        assert conn.execute("SELECT to_regclass(%s)", (pl_table,)).fetchone() == (None,)
    # Pressure levels into a single-level table (the fixture's), and the other way round.
    code, _, err, _ = cli("load-file", str(samples / GRIB), "--table", table)
    assert code != 0 and f"table {table} has no level column" in err
    assert cli("load-file", str(samples / GRIB), "--table", pl_table)[0] == 0
    code, _, err, _ = cli("load-file", str(single), "--table", pl_table)
    assert code != 0 and f"table {pl_table} has a level column" in err
    with connect(db_url) as conn:
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
        assert conn.execute(f"SELECT count(*) FROM {pl_table}").fetchone() == (ROWS[GRIB],)


def test_the_default_table_of_pressure_levels(db_url: str, samples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --table or ERA5_TABLE a pressure-level file goes to weather_pressure_levels, never to weather."""
    monkeypatch.delenv("ERA5_TABLE", raising=False)
    try:
        code, _, err, summary = cli("load-file", str(samples / GRIB), "--json")
        assert code == 0, err
        assert summary is not None and summary["table"] == "weather_pressure_levels"
    finally:
        with connect(db_url, autocommit=True) as conn:
            drop_table(conn, "weather_pressure_levels")


@pytest.mark.parametrize(("name", "run"), [(NEW_NC, 3), (GRIB, 1)])
def test_a_download_loaded_in_runs_of_levels_holds_the_same_rows(db_url: str, pl_table: str, samples: Path,
                                                                 name: str, run: int,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A block of a global hour on 37 levels is a run of levels (load.loader.block_levels), so memory
    follows the run: with blocks made that small here, the rows are the file's, every one."""
    from psycopg import sql

    from era5etl.db import table_ident
    from era5etl.load import load, loader
    from era5etl.stage import open_download

    path = samples / name
    assert cli("load-file", str(path), "--table", pl_table)[0] == 0  # the table, made as load-file makes it
    with connect(db_url, autocommit=True) as conn:  # empty, rollups too (daily rows go with hourly ones)
        for relation in (pl_table, f"{pl_table}_daily", f"{pl_table}_monthly"):
            conn.execute(sql.SQL("DELETE FROM {}").format(table_ident(relation)))
    with open_download([path], dataset=PRESSURE_LEVELS) as staged:
        monkeypatch.setattr(loader, "BLOCK_ROWS", run * staged.points // len(staged.levels))
        assert loader.block_levels(staged.points, len(staged.levels)) == run < len(staged.levels)
        result = load(db_url, pl_table, staged, dataset=PRESSURE_LEVELS)
    assert result.rows == ROWS[name]
    _assert_holds(db_url, pl_table, _grib_expected(path) if name == GRIB else _netcdf_expected(path))
    # Runs of levels add to their columns of each whole day's sums (load.rollup.WindowRollup.add with
    # cols), partial days are SQL's: the same rollups as plain SQL over the hourly rows.
    assert assert_level_rollups_match(db_url, pl_table) > 0


def test_whole_days_loaded_in_runs_of_levels_are_rolled_up_in_the_client(db_url: str, pl_table: str, samples: Path,
                                                                          tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole UTC day read in runs of levels (a global day on 37 levels) is aggregated by the loader,
    each run at its columns of the day's sums (the sample's own hours cut no day whole: 24 of them
    here stamped as 2020-01-01): the rollups equal plain SQL over the hourly rows."""
    from era5etl.load import load, loader
    from era5etl.stage import open_download

    with xr.open_dataset(samples / NEW_NC) as ds:
        day = ds.isel(valid_time=slice(0, 24)).load()
    day = day.assign_coords(valid_time=pd.date_range("2020-01-01", periods=24, freq="h").values)
    path = tmp_path / "day.nc"
    day.to_netcdf(path)
    assert cli("load-file", str(path), "--table", pl_table)[0] == 0  # whole hours a block: the reference
    reference = assert_level_rollups_match(db_url, pl_table)
    with open_download([path], dataset=PRESSURE_LEVELS) as staged:
        monkeypatch.setattr(loader, "BLOCK_ROWS", 3 * staged.points // len(staged.levels))
        assert loader.block_levels(staged.points, len(staged.levels)) == 3
        result = load(db_url, pl_table, staged, dataset=PRESSURE_LEVELS)
    assert result.daily_rows == reference == 8 * 81  # one day, 8 levels, 81 points: the client's rows
    assert assert_level_rollups_match(db_url, pl_table) == reference


def test_a_lone_hour_in_runs_of_levels_is_rolled_up_from_disk_run_by_run(db_url: str, pl_table: str, samples: Path,
                                                                           tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A global hour on 37 levels is its day's only hour (a lone day): each run of levels is then its
    points' whole day, kept on disk (load.spill) rather than summed over every (level, point) of the
    globe, and its month's rows are made run by run, each run's days added to the server's figures of
    the other days the table holds. Here on the sample's 8 levels cut into runs of 3: its hour of
    2016-05-28 (its temperature NULL at a few points) loaded beside an hour of 2016-05-30 already in
    the table, then reloaded; the daily and monthly rollups equal plain SQL over the hourly rows each
    time."""
    from era5etl.load import load, loader
    from era5etl.load.spill import Spill
    from era5etl.stage import open_download

    with xr.open_dataset(samples / NEW_NC) as ds:
        stamps = [str(ds.valid_time.values[i]) for i in (0, 23)]
        assert stamps[0][:13] == "2016-05-28T07" and stamps[1][:10] == "2016-05-30"
        lone = ds.isel(valid_time=slice(0, 1)).load()
        # NULL at a few (level, point)s: their day is NULL there, and their month the other day's alone.
        lone["t"][0, :2, 0, :3] = np.nan
        lone.to_netcdf(tmp_path / "lone.nc")
        ds.isel(valid_time=slice(23, 24)).load().to_netcdf(tmp_path / "other.nc")
    assert cli("load-file", str(tmp_path / "other.nc"), "--table", pl_table)[0] == 0
    spilled: list[tuple[int, int]] = []
    put = Spill.put

    def spy(self: Spill, day: np.datetime64, cols: slice, hour: dict[str, np.ndarray]) -> object:
        spilled.append((cols.start, cols.stop))
        return put(self, day, cols, hour)

    monkeypatch.setattr(Spill, "put", spy)
    for attempt in (1, 2):  # a load, then a reload of the same hour
        spilled.clear()
        with open_download([tmp_path / "lone.nc"], dataset=PRESSURE_LEVELS) as staged:
            monkeypatch.setattr(loader, "BLOCK_ROWS", 3 * staged.points // len(staged.levels))
            assert loader.block_levels(staged.points, len(staged.levels)) == 3
            result = load(db_url, pl_table, staged, dataset=PRESSURE_LEVELS)
        assert result.rows == 8 * 81, attempt
        assert spilled == [(0, 243), (243, 486), (486, 648)], attempt  # every run on disk, none summed
        assert result.daily_rows == 8 * 81 and result.monthly_rows == 8 * 81, attempt
        assert assert_level_rollups_match(db_url, pl_table) == 2 * 8 * 81, attempt
        with connect(db_url) as conn:
            row = conn.execute(f"SELECT count(*), sum(hours) FROM {pl_table}_monthly").fetchone()
        assert row == (8 * 81, 2 * 8 * 81), attempt  # one month, its two hours in every row
