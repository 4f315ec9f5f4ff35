"""`era5etl load-file` on every real CDS download in tests/data/era5-samples, into the real TimescaleDB."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from era5etl.core.tiles import TILE_COLUMN
from era5etl.db import connect
from era5etl.db.columns import table_columns

from ..helpers import cli, expected_frame

NEW_INSTANT = "newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc"
NEW_ACCUM = "newcds_accum_tp_2025-05_hourly_expver0005.nc"
NEW_ZIP = "newcds_zip_instant_accum_2023-09_hourly.nc"
OLD_ALL = "oldcds_all_single_level_vars_incl_tcc_sf_tp_single_time.nc"
OLD_3H = "oldcds_t2m_tp_d2m_msl_2023-01-01_3hourly_netcdf3.nc"


def table_frame(url: str, table: str) -> pd.DataFrame:
    with connect(url) as conn:
        columns = table_columns(conn, table)
        if TILE_COLUMN in columns:  # a key the loader fills from the id (core.tiles), -1 without one
            assert conn.execute(f"SELECT count(*) FROM {table} WHERE tile IS DISTINCT FROM"
                                " coalesce(era5_tile(location_id), -1)").fetchone() == (0,)
        # ::float8 widens float4 exactly; the text form would round-trip through a shortest decimal.
        floats = ", ".join(f"{c}::float8 AS {c}" for c in columns[2:] if c != TILE_COLUMN)
        cur = conn.execute(f"SELECT time, location_id, {floats} FROM {table} ORDER BY time, location_id")
        names = [d.name for d in cur.description or []]
        frame = pd.DataFrame(cur.fetchall(), columns=names)
    frame["time"] = pd.to_datetime(frame["time"], utc=True).dt.tz_localize(None).astype("datetime64[us]")
    return frame


def assert_table_holds(url: str, table: str, expected: pd.DataFrame) -> None:
    got = table_frame(url, table)
    order = ["time", "location_id", "latitude", "longitude"]
    got = got.sort_values(order, ignore_index=True)
    expected = expected.sort_values(order, ignore_index=True)
    assert len(got) == len(expected)
    np.testing.assert_array_equal(got["time"].to_numpy(), expected["time"].to_numpy())
    np.testing.assert_array_equal(got["location_id"].to_numpy(dtype=np.float64),
                                  expected["location_id"].to_numpy(dtype=np.float64))
    # The six and every column a load added (each catalogued variable the files hold).
    assert set(expected.columns) <= set(got.columns), sorted(set(expected.columns) - set(got.columns))
    for col in got.columns[2:]:
        have = got[col].to_numpy(dtype=np.float64)
        if col in expected:
            want = expected[col].to_numpy(dtype=np.float32).astype(np.float64)
            # float4 in the database equals xarray's value after the unit change, bit for bit; NaN is NULL.
            np.testing.assert_array_equal(have, want, err_msg=col)
        else:
            assert np.isnan(have).all(), f"{col} should be NULL: the files do not hold it"


@pytest.mark.parametrize("name", [NEW_INSTANT, NEW_ACCUM, NEW_ZIP, OLD_ALL, OLD_3H])
def test_each_sample_loads_exactly(db_url: str, table: str, samples: Path, name: str) -> None:
    path = samples / name
    code, _, err, summary = cli("load-file", str(path), "--table", table, "--json")
    assert code == 0, err
    assert summary is not None
    if name == OLD_ALL:
        # Its grid is off the 0.25 degree lattice (points at +-0.125 + k*0.25): loaded with NULL ids.
        assert summary["location_ids"] is False
    if name == NEW_ZIP:
        with _zip_parts(path) as parts:
            expected = pd.merge(*[expected_frame(p) for p in parts], on=["time", "location_id", "latitude",
                                                                           "longitude"])
    else:
        expected = expected_frame(path)
    assert summary["rows"] == len(expected)
    # Read back from the columnstore: every chunk compressed, values bit-equal to xarray's decoding.
    assert summary["columnstore"] == "compressed"
    with connect(db_url) as conn:
        chunks = conn.execute("SELECT count(*), count(*) FILTER (WHERE is_compressed) FROM"
                              " timescaledb_information.chunks WHERE hypertable_name = %s", (table,)).fetchone()
    assert chunks is not None and chunks[0] == chunks[1] > 0
    assert_table_holds(db_url, table, expected)

    # Loading the same file again replaces it: same rows, none doubled.
    code, _, err, again = cli("load-file", str(path), "--table", table, "--json")
    assert code == 0, err
    assert again is not None and again["deleted"] == len(expected) and again["rows"] == len(expected)
    assert_table_holds(db_url, table, expected)


class _zip_parts:
    """Unzip a CDS ZIP into a temporary folder (the test's own reading, independent of the stager)."""

    def __init__(self, path: Path) -> None:
        import tempfile
        import zipfile

        self.dir = Path(tempfile.mkdtemp())
        with zipfile.ZipFile(path) as zf:
            zf.extractall(self.dir)

    def __enter__(self) -> list[Path]:
        return sorted(self.dir.glob("*.nc"))

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.dir)


def test_instant_and_accum_parts_join_and_name_what_is_missing(db_url: str, table: str, samples: Path) -> None:
    code, out, err, summary = cli("load-file", str(samples / NEW_INSTANT), str(samples / NEW_ACCUM),
                                  "--table", table, "--json")
    assert code == 0, err
    assert summary is not None
    assert summary["missing_columns"] == ["total_cloud_cover", "snowfall"]
    # d2m and sp are catalogued: loaded into columns the table did not have, not ignored.
    assert (summary["ignored"], summary["added_columns"]) == ([], ["dewpoint_2m", "surface_pressure"])
    expected = pd.merge(expected_frame(samples / NEW_INSTANT), expected_frame(samples / NEW_ACCUM),
                        on=["time", "location_id", "latitude", "longitude"])
    assert summary["rows"] == len(expected) == 12 * 24 * 25
    assert_table_holds(db_url, table, expected)
    # Without --json the user is told in words.
    code, out, _, _ = cli("load-file", str(samples / NEW_INSTANT), "--table", table)
    assert code == 0
    assert "total_cloud_cover" in out and "added column" not in out  # the table has them now


def _count(url: str, table: str) -> int:
    with connect(url) as conn:
        row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    assert row is not None
    return int(row[0])


def test_bad_files_are_refused_and_the_table_is_untouched(
    db_url: str, table: str, samples: Path, tmp_path: Path
) -> None:
    code, _, err, _ = cli("load-file", str(samples / OLD_3H), "--table", table)
    assert code == 0, err
    before = _count(db_url, table)

    empty = tmp_path / "empty.nc"
    empty.write_bytes(b"")
    truncated = tmp_path / "truncated.nc"
    truncated.write_bytes((samples / NEW_INSTANT).read_bytes()[:20_000])
    text = tmp_path / "notes.nc"
    text.write_text("this is not a NetCDF file\n")
    other_vars = tmp_path / "dewpoint_only.nc"
    with xr.open_dataset(samples / NEW_INSTANT) as ds:  # a variable outside the catalogue only
        ds[["d2m"]].rename({"d2m": "not_era5"}).to_netcdf(other_vars)

    grib = (samples / "grib1_tp_5x9_2023-01_to_2023-11_hourly_expver0001_0005.grib").read_bytes()
    grib_cut = tmp_path / "cut.grib"
    grib_cut.write_bytes(grib[:len(grib) // 2 + 7])
    grib_junk = tmp_path / "junk.grib"
    grib_junk.write_bytes(grib + b'{"error": "quota exceeded"}')

    for path, words in [(empty, "empty"), (truncated, ""), (text, ""), (other_vars, "none of the table"),
                        (tmp_path / "missing.nc", "no such file"), (grib_cut, "cut short"),
                        (grib_junk, "not a grib message")]:
        code, out, err, _ = cli("load-file", str(path), "--table", table)
        assert code == 2, (path, out, err)
        assert err.startswith("error:") and "Traceback" not in err, err
        assert str(path.name) in err or words in err.lower(), err
        if words:
            assert words in err.lower(), err
        assert _count(db_url, table) == before


def test_unreachable_database_is_a_clear_error(samples: Path) -> None:
    code, _, err, _ = cli("load-file", str(samples / OLD_ALL),
                          env={"ERA5_DATABASE_URL": "postgresql://postgres:secret@127.0.0.1:9/era5"})
    assert code == 1
    assert "cannot connect to the database at postgresql://postgres:***@127.0.0.1:9/era5" in err
    assert "secret" not in err and "Traceback" not in err
