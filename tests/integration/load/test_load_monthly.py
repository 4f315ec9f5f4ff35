"""The real monthly-means samples (tests/data/era5-samples, README: where each came from) told from the
files, staged and loaded by the real loader into a real TimescaleDB table: one row a month and point
(24 by hour of day), values equal to the files' own decoding by xarray (NetCDF) or ecCodes (GRIB)
computed here independently of the stager, accumulations a day's mean amount in mm/day, and a rerun
replacing the rows exactly."""

from __future__ import annotations

import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path

import eccodes
import numpy as np
import pytest
import xarray as xr

from era5etl.core.datasets import (
    FILE_DATASETS,
    LAND_MONTHLY_MEANS,
    MONTHLY_MEANS,
    MONTHLY_MEANS_BY_HOUR,
    Dataset,
)
from era5etl.core.variables import load_variables
from era5etl.db import connect, drop_table, ensure_schema
from era5etl.db.columns import ensure_columns
from era5etl.load import load
from era5etl.stage import open_download
from era5etl.stage.detect import detect_dataset

pytestmark = pytest.mark.integration

NC_PAIR = ("era5mm_newcds_nc_t2m_avgua_2005-2024_63x35.nc", "era5mm_newcds_nc_tp_avgad_2005-2024_63x35.nc")
NC_OLD_ALL = "era5mm_oldcds_nc3_260vars_2015-10_8x8.nc"
NC_OLD_EXPVER = "era5mm_oldcds_nc3_u100-v100_expver1+5_1979-2021_9x21.nc"
GRIB_BY_HOUR = "era5mm_byhour_grib1_mnth_7vars_2004-2006_9x9.grib"
LAND_NC = "era5land-monthly_oldcds_nc3-int16packed_u10-d2m-t2m_1991-01..1992-12_24mon_91x141_seaNaN.nc"
LAND_GRIB = "era5land-monthly_grib1-moda_stl1_1950-01..2025-01_901msgs_21x31_bitmap-sea.grib"

# (files, dataset, rows as the samples' README counts them or as their shape gives)
CASES = [
    (NC_PAIR, MONTHLY_MEANS, 240 * 63 * 35),
    ((NC_OLD_ALL,), MONTHLY_MEANS, 1 * 8 * 8),
    ((NC_OLD_EXPVER,), MONTHLY_MEANS, 514 * 9 * 21),
    ((GRIB_BY_HOUR,), MONTHLY_MEANS_BY_HOUR, 36 * 24 * 9 * 9),
    ((LAND_NC,), LAND_MONTHLY_MEANS, 24 * 7831),
    ((LAND_GRIB,), LAND_MONTHLY_MEANS, 901 * (651 - 552)),
]


@pytest.fixture
def cleanup(db_url: str) -> Iterator[list[str]]:
    made: list[str] = []
    yield made
    with connect(db_url, autocommit=True) as conn:
        for name in made:
            drop_table(conn, name)
            conn.execute("DELETE FROM era5_tables WHERE table_name = %s", (name,))


def _load(url: str, table: str, paths: list[Path], dataset: Dataset) -> tuple[int, int, list[str]]:
    with open_download(paths, variables=dataset.catalogue, dataset=dataset) as staged:
        ensure_schema(url, table, dataset=dataset, created_by="test", points=staged.points)
        ensure_columns(url, table, load_variables(staged.variables, dataset))
        result = load(url, table, staged, dataset=dataset)
        return result.rows, result.deleted, [v.column for v in staged.variables]


def _row_time(t: np.ndarray, dataset: Dataset) -> np.ndarray:
    t = t.astype("datetime64[s]")
    month = t.astype("datetime64[M]").astype("datetime64[s]")
    if dataset.period == "month":
        return month
    return month + ((t.astype(np.int64) % 86400) // 3600).astype("timedelta64[h]")


def _expected(paths: list[Path], dataset: Dataset) -> dict[tuple[str, np.datetime64, float, float], float]:
    """(column, row time, latitude, longitude) -> the table's float32 value, decoded here independently."""
    out: dict[tuple[str, np.datetime64, float, float], float] = {}
    by_short = {v.short_name: v for v in dataset.catalogue}
    by_grib = {v.grib_name: v for v in dataset.catalogue}
    for path in paths:
        if path.suffix == ".grib":
            with path.open("rb") as f:
                while (h := eccodes.codes_grib_new_from_file(f)) is not None:
                    try:
                        v = by_grib.get(eccodes.codes_get_string(h, "shortName"))
                        if v is None:
                            continue
                        date, hhmm = eccodes.codes_get(h, "validityDate"), eccodes.codes_get(h, "validityTime")
                        t = np.datetime64(f"{str(date)[:4]}-{str(date)[4:6]}-{str(date)[6:]}T{hhmm // 100:02d}:00")
                        eccodes.codes_set(h, "missingValue", 9.999e20)
                        lats = eccodes.codes_get_array(h, "latitudes")
                        lons = eccodes.codes_get_array(h, "longitudes")
                        vals = eccodes.codes_get_array(h, "values")
                        when = _row_time(np.array([t]), dataset)[0]
                        for la, lo, x in zip(lats, lons, vals, strict=True):
                            if x != 9.999e20:
                                lo = lo - 360 if lo > 180 else lo
                                out[(v.column, when, round(float(la), 3), round(float(lo), 3))] = float(
                                    np.float32(x * v.scale + v.offset))
                    finally:
                        eccodes.codes_release(h)
            continue
        with xr.open_dataset(path) as ds:
            time_dim = "valid_time" if "valid_time" in ds.dims else "time"
            times = _row_time(ds[time_dim].values, dataset)
            lat, lon = ds["latitude"].values, ds["longitude"].values
            for name, da in ds.data_vars.items():
                v = by_short.get(str(name))
                if v is None:
                    continue
                x = np.asarray(da.transpose(time_dim, *(["expver"] if "expver" in da.dims else []),
                                            "latitude", "longitude").values, dtype=np.float64)
                if "expver" in da.dims:  # each month is valid in one expver slice only
                    x = np.where(np.isnan(x[:, 0]), x[:, 1], x[:, 0])
                table = (x * v.scale + v.offset).astype(np.float32)
                for i, j, k in zip(*np.nonzero(np.isfinite(table)), strict=True):
                    out[(v.column, times[i], round(float(lat[j]), 3), round(float(lon[k]), 3))] = float(table[i, j, k])
    return out


@pytest.mark.parametrize(("names", "dataset", "rows"), CASES, ids=lambda c: c[0][:40] if isinstance(c, tuple) else None)
def test_each_monthly_sample_loads_exactly(db_url: str, samples: Path, cleanup: list[str], names: tuple[str, ...],
                                           dataset: Dataset, rows: int) -> None:
    paths = [samples / n for n in names]
    if dataset is not LAND_MONTHLY_MEANS or LAND_GRIB in names:  # an old-CDS netCDF3 names no stream
        assert detect_dataset(paths) in (dataset, None)
    table = f"mm_{uuid.uuid4().hex[:10]}"
    cleanup.append(table)
    loaded, deleted, columns = _load(db_url, table, paths, dataset)
    assert (loaded, deleted) == (rows, 0)
    expected = _expected(paths, dataset)
    with connect(db_url) as conn:
        counted = conn.execute(f"SELECT count(*), count(DISTINCT time), count(DISTINCT (latitude, longitude)) "
                               f"FROM {table}").fetchone()
        assert counted is not None and counted[0] == rows
        # Every time a month's first day at 00 UTC, or that day's hour by hour of day.
        times = {r[0] for r in conn.execute(f"SELECT DISTINCT time AT TIME ZONE 'UTC' FROM {table}")}
        assert all(t.day == 1 and t.minute == 0 for t in times)
        assert all(t.hour == 0 for t in times) or dataset is MONTHLY_MEANS_BY_HOUR
        assert counted[1] * counted[2] == rows  # months (x 24) x points
        # No rollups: the rows are months already (and a column added for the files made none).
        for step in ("daily", "monthly"):
            assert conn.execute("SELECT to_regclass(%s)", (f"{table}_{step}",)).fetchone() == (None,)
        for column in columns:
            got = {(column, np.datetime64(t, "s"), round(la, 3), round(lo, 3)): x for t, la, lo, x in conn.execute(
                f"SELECT time AT TIME ZONE 'UTC', latitude::float8, longitude::float8, {column}::float8 FROM {table} "
                f"WHERE {column} IS NOT NULL")}
            want = {k: x for k, x in expected.items() if k[0] == column}
            assert want, column
            assert got == want, column
    again, deleted, _ = _load(db_url, table, paths, dataset)  # a rerun replaces, never doubles
    assert (again, deleted) == (rows, rows)


def test_an_accumulation_is_a_mean_daily_amount_in_mm_a_day(db_url: str, samples: Path, cleanup: list[str]) -> None:
    """The new CDS's tp of a monthly mean is metres a day (its file says "m"): the column's unit says a
    day, and the value is the file's x 1000, never x 24."""
    tp = MONTHLY_MEANS.variable("tp")
    assert tp is not None and tp.table_unit == "mm/day" and tp.step_type == "avgad"
    assert FILE_DATASETS["monthly-means-by-hour"].variable("tp").table_unit == "mm"  # type: ignore[union-attr]
    table = f"mm_{uuid.uuid4().hex[:10]}"
    cleanup.append(table)
    _load(db_url, table, [samples / n for n in NC_PAIR], MONTHLY_MEANS)
    with xr.open_dataset(samples / NC_PAIR[1]) as ds:
        assert ds["tp"].attrs["units"] == "m"
        file_mean = float(ds["tp"].sel(valid_time="2010-07").mean())
    with connect(db_url) as conn:
        row = conn.execute(f"SELECT avg(total_precipitation::float8) FROM {table} WHERE time = '2010-07-01'").fetchone()
    assert row is not None
    assert row[0] == pytest.approx(file_mean * 1000, rel=1e-5)  # mm a day: July of the monsoon, a few mm
    assert 1 < row[0] < 50


BETA_ZIP = "era5mm_cdsbeta2024_zip_5nc_260vars_2015-10_0p25+0p5wave.zip"


def test_the_cds_beta_zip_loads_its_month_from_the_scalar_date(db_url: str, samples: Path, cleanup: list[str],
                                                               tmp_path: Path) -> None:
    """The 2024 CDS-Beta's ZIP: five netCDF members with no time dimension, the month in a scalar
    coordinate ``date`` = 20151001; the wave members (0.5 degrees) hold no variable of the table. Every
    value equals xarray's of its member, at 2015-10-01 00 UTC."""
    table = f"mm_{uuid.uuid4().hex[:10]}"
    cleanup.append(table)
    loaded, deleted, columns = _load(db_url, table, [samples / BETA_ZIP], MONTHLY_MEANS)
    assert (loaded, deleted) == (64, 0) and len(columns) >= 50
    by_short = {v.short_name: v for v in MONTHLY_MEANS.catalogue}
    with zipfile.ZipFile(samples / BETA_ZIP) as z:
        z.extractall(tmp_path)
    want: dict[tuple[str, float, float], float] = {}
    for member in sorted(tmp_path.glob("*.nc")):
        with xr.open_dataset(member) as ds:
            assert int(ds["date"].values) == 20151001 and "valid_time" not in ds.dims
            for name, da in ds.data_vars.items():
                v = by_short.get(str(name))
                if v is None:
                    continue
                x = (np.asarray(da.transpose("latitude", "longitude").values, dtype=np.float64) * v.scale
                     + v.offset).astype(np.float32)
                for j, k in zip(*np.nonzero(np.isfinite(x)), strict=True):
                    want[(v.column, round(float(ds.latitude[j]), 3), round(float(ds.longitude[k]), 3))] = float(x[j, k])
    assert {c for c, _, _ in want} == set(columns)
    with connect(db_url) as conn:
        times = conn.execute(f"SELECT DISTINCT time AT TIME ZONE 'UTC' FROM {table}").fetchall()
        assert [t.isoformat() for (t,) in times] == ["2015-10-01T00:00:00"]
        for column in columns:
            got = {(column, round(la, 3), round(lo, 3)): x for la, lo, x in conn.execute(
                f"SELECT latitude::float8, longitude::float8, {column}::float8 FROM {table} "
                f"WHERE {column} IS NOT NULL")}
            assert got == {k: x for k, x in want.items() if k[0] == column}, column


@pytest.mark.parametrize(("name", "says"), [
    ("era5mm_oldcds_nc3_p54.162_2019-2020_4x4_1deg_noexpver.nc", "none of the table's variables"),
])
def test_the_monthly_samples_not_read_yet_are_refused_before_a_row(samples: Path, name: str, says: str) -> None:
    from era5etl.stage.errors import StageError

    with pytest.raises(StageError, match=says):
        open_download([samples / name], variables=MONTHLY_MEANS.catalogue, dataset=MONTHLY_MEANS).close()
