"""The stager against the real CDS downloads in tests/data/era5-samples (and files derived from them).

Every value is compared bit for bit with xarray's own decoding of the file followed by the unit change
``(decoded as float64) * scale + offset`` cast to float32, which is what the table must hold.
"""

from __future__ import annotations

import shutil
import warnings
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import netCDF4
import numpy as np
import numpy.typing as npt
import pytest
import xarray as xr

from era5etl.core.grid import location_ids
from era5etl.core.variables import BY_SHORT_NAME, DATA_COLUMNS
from era5etl.stage import Block, StagedDownload, StageError, open_download

NEW_INSTANT = "newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc"
NEW_ACCUM = "newcds_accum_tp_2025-05_hourly_expver0005.nc"
NEW_ZIP = "newcds_zip_instant_accum_2023-09_hourly.nc"
OLD_ALL = "oldcds_all_single_level_vars_incl_tcc_sf_tp_single_time.nc"
OLD_3H = "oldcds_t2m_tp_d2m_msl_2023-01-01_3hourly_netcdf3.nc"
SAMPLES = [NEW_INSTANT, NEW_ACCUM, NEW_ZIP, OLD_ALL, OLD_3H]

F32 = npt.NDArray[np.float32]


class Reference:
    """What a NetCDF file holds according to xarray, in table units: the expected output."""

    def __init__(self, path: Path) -> None:
        with xr.open_dataset(path, engine="netcdf4", mask_and_scale=True) as ds:
            tdim = "valid_time" if "valid_time" in ds.dims else "time"
            self.times = ds[tdim].values.astype("datetime64[s]")
            self.lat = ds["latitude"].values
            self.lon = ds["longitude"].values
            self.values: dict[str, F32] = {}
            for name, var in BY_SHORT_NAME.items():
                if name in ds.data_vars:
                    decoded = ds[name].values.astype(np.float64)
                    table = (decoded * var.scale + var.offset).astype(np.float32)
                    self.values[var.column] = table.reshape(len(self.times), -1)

    @property
    def points(self) -> int:
        return self.lat.size * self.lon.size


def collect(blocks: list[Block]) -> tuple[npt.NDArray[np.datetime64], dict[str, F32]]:
    times = np.concatenate([b.valid_time for b in blocks])
    columns = {c for b in blocks for c in b.values}
    return times, {c: np.concatenate([b.values[c] for b in blocks]) for c in columns}


def assert_bits_equal(got: F32, want: F32, what: str = "") -> None:
    """Equal bit for bit: NaN where NaN, and -0.0 is not 0.0."""
    assert got.dtype == np.float32 and got.shape == want.shape, (what, got.dtype, got.shape, want.shape)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32), err_msg=what)


def write_like(src: Path, dst: Path, edit: Callable[[xr.Dataset], xr.Dataset]) -> Path:
    """A real file edited and rewritten by xarray (packing and encodings kept: mask_and_scale off)."""
    with xr.open_dataset(src, engine="netcdf4", mask_and_scale=False) as ds:
        edit(ds).to_netcdf(dst, engine="netcdf4")
    return dst


# -- every sample ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SAMPLES)
@pytest.mark.parametrize("hours", [1, 5, 10_000])
def test_every_sample_opens_and_holds_what_xarray_decodes(
    samples: Path, zip_members: dict[str, Path], name: str, hours: int
) -> None:
    if name == NEW_ZIP:
        refs = [Reference(zip_members["instant"]), Reference(zip_members["accum"])]
    else:
        refs = [Reference(samples / name)]
    want = {c: v for r in refs for c, v in r.values.items()}
    ref = refs[0]

    # The all-variables sample is on a grid off the 0.25 degree lattice (see test below).
    with open_download([samples / name]) as staged:
        assert staged.points == ref.points
        assert staged.rows == len(ref.times) * ref.points
        np.testing.assert_array_equal(staged.valid_time, ref.times)
        assert staged.valid_time.dtype == np.dtype("datetime64[s]")
        glat, glon = np.meshgrid(ref.lat, ref.lon, indexing="ij")
        np.testing.assert_array_equal(staged.latitude, glat.ravel().astype(np.float32))
        np.testing.assert_array_equal(staged.longitude, glon.ravel().astype(np.float32))
        if name == OLD_ALL:
            assert staged.location_id is None
        else:
            np.testing.assert_array_equal(staged.location_id, location_ids(glat.ravel(), glon.ravel()))
        assert [v.column for v in staged.variables] == [c for c in DATA_COLUMNS if c in want]
        assert staged.missing_columns == [c for c in DATA_COLUMNS if c not in want]

        blocks = list(staged.blocks(hours=hours))
    assert [len(b.valid_time) for b in blocks] == [
        min(hours, len(ref.times) - i) for i in range(0, len(ref.times), hours)]
    assert sum(b.rows for b in blocks) == len(ref.times) * ref.points
    times, got = collect(blocks)
    np.testing.assert_array_equal(times, ref.times)
    assert set(got) == set(want)
    for column, values in want.items():
        assert_bits_equal(got[column], values, column)


def test_what_each_sample_holds_is_named(samples: Path) -> None:
    with open_download([samples / NEW_INSTANT]) as s:
        assert [v.short_name for v in s.variables] == ["t2m", "u10", "v10"]
        assert s.ignored == ["d2m", "sp"]
        assert s.missing_columns == ["total_cloud_cover", "total_precipitation", "snowfall"]
        assert s.expver == ["0005"]
    with open_download([samples / OLD_3H]) as s:
        assert [v.short_name for v in s.variables] == ["t2m", "tp"]
        assert s.ignored == ["d2m", "msl"]
        assert s.expver == []  # the old CDS only says expver when ERA5 and ERA5T are mixed
        assert s.rows == 8 * 158 * 168
        assert s.valid_time[1] - s.valid_time[0] == np.timedelta64(3, "h")
    with open_download([samples / NEW_ZIP]) as s:
        # Surprise in the sample: the instant member has no t2m (only d2m, u10, v10, sp).
        assert [v.short_name for v in s.variables] == ["u10", "v10", "tp"]
        assert s.ignored == ["d2m", "sp"]
        assert s.missing_columns == ["temperature_2m", "total_cloud_cover", "snowfall"]
        assert s.expver == ["0001"]
        assert s.rows == 168 * 21 * 21


def test_all_variables_sample_degenerate_packing_and_off_lattice_grid(samples: Path) -> None:
    path = samples / OLD_ALL
    # Its points are at +-0.125 + k*0.25: no global 0.25 degree location_id exists for them.
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # cin's scale -inf / offset +inf must not even warn: it is never read
        with open_download([path]) as s:
            assert [v.short_name for v in s.variables] == ["t2m", "u10", "v10", "tcc", "tp", "sf"]
            assert s.missing_columns == []
            assert len(s.ignored) == 254
            assert {"cin", "d2m", "sp", "msl", "u100", "sst"} <= set(s.ignored)
            assert not set(s.ignored) & set(BY_SHORT_NAME)
            assert s.location_id is None
            (block,) = s.blocks()
    assert block.valid_time.tolist() == [np.datetime64("2015-10-01T00:00:00", "s")]
    assert block.rows == 64
    assert (block.values["snowfall"] == 0).all()  # sf packed with scale 1, offset 0, all zeros
    assert np.isfinite(block.values["total_cloud_cover"]).all()


# -- downloads in several parts --------------------------------------------------------------------


def test_new_cds_instant_and_accum_parts_join(samples: Path) -> None:
    inst, acc = Reference(samples / NEW_INSTANT), Reference(samples / NEW_ACCUM)
    for order in ([NEW_INSTANT, NEW_ACCUM], [NEW_ACCUM, NEW_INSTANT]):
        with open_download([samples / n for n in order]) as s:
            assert [v.short_name for v in s.variables] == ["t2m", "u10", "v10", "tp"]
            assert s.ignored == ["d2m", "sp"] or s.ignored == ["d2m", "sp"][::-1]
            assert s.missing_columns == ["total_cloud_cover", "snowfall"]
            assert s.rows == 12 * 24 * 25
            times, got = collect(list(s.blocks(hours=24)))
        np.testing.assert_array_equal(times, inst.times)
        for column, want in {**inst.values, **acc.values}.items():
            assert_bits_equal(got[column], want, column)


def test_zip_is_recognised_by_content_and_its_temp_dir_removed(
    samples: Path, zip_members: dict[str, Path], tmp_path: Path
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    renamed = tmp_path / "download.grib"  # the name lies both ways; only the bytes count
    shutil.copy(samples / NEW_ZIP, renamed)
    with open_download([renamed], tmp_dir=scratch) as s:
        assert len(s.parts) == 2
        assert all("ZIP member data_stream-oper_stepType-" in p for p in s.parts)
        (extracted,) = scratch.iterdir()
        assert len(list(extracted.rglob("*.nc"))) == 2
        _, got = collect(list(s.blocks(hours=50)))
    assert list(scratch.iterdir()) == []
    want = {**Reference(zip_members["instant"]).values, **Reference(zip_members["accum"]).values}
    for column, values in want.items():
        assert_bits_equal(got[column], values, column)


def test_zip_plus_nc_join_on_time_with_nan_where_a_part_lacks_steps(
    samples: Path, zip_members: dict[str, Path], tmp_path: Path
) -> None:
    # An extra part on the ZIP's grid holding t2m (made from the same download's d2m) for steps 24..167.
    extra = write_like(zip_members["instant"], tmp_path / "t2m_part.nc",
                       lambda ds: ds[["d2m"]].rename({"d2m": "t2m"}).isel(valid_time=slice(24, None)))
    with open_download([samples / NEW_ZIP, extra]) as s:
        assert [v.short_name for v in s.variables] == ["t2m", "u10", "v10", "tp"]
        assert s.rows == 168 * 441
        blocks = list(s.blocks(hours=10))
    times, got = collect(blocks)
    assert len(times) == 168
    t2m = got["temperature_2m"]
    assert np.isnan(t2m[:24]).all()
    assert_bits_equal(t2m[24:], Reference(extra).values["temperature_2m"])
    assert_bits_equal(got["zonal_wind_10m"], Reference(zip_members["instant"]).values["zonal_wind_10m"])


def test_accum_part_with_gaps_gives_nan_at_the_missing_steps(samples: Path, tmp_path: Path) -> None:
    keep = np.array([i for i in range(288) if i % 7 != 3])
    gappy = write_like(samples / NEW_ACCUM, tmp_path / "gappy.nc", lambda ds: ds.isel(valid_time=keep))
    want = Reference(samples / NEW_ACCUM).values["total_precipitation"]
    with open_download([samples / NEW_INSTANT, gappy]) as s:
        assert len(s.valid_time) == 288
        _, got = collect(list(s.blocks(hours=5)))
    tp = got["total_precipitation"]
    missing = np.setdiff1d(np.arange(288), keep)
    assert np.isnan(tp[missing]).all()
    assert_bits_equal(tp[keep], want[keep])
    assert np.isfinite(got["temperature_2m"]).all()  # the complete part is unaffected


def test_one_variable_split_over_disjoint_times_is_joined(samples: Path, tmp_path: Path) -> None:
    first = write_like(samples / NEW_ACCUM, tmp_path / "a.nc", lambda ds: ds.isel(valid_time=slice(0, 100)))
    second = write_like(samples / NEW_ACCUM, tmp_path / "b.nc",
                        lambda ds: ds.isel(valid_time=slice(100, None)))
    with open_download([second, first]) as s:
        times, got = collect(list(s.blocks(hours=7)))  # blocks straddle the seam at step 100
    ref = Reference(samples / NEW_ACCUM)
    np.testing.assert_array_equal(times, ref.times)
    assert_bits_equal(got["total_precipitation"], ref.values["total_precipitation"])


def test_one_variable_in_two_parts_at_the_same_times_is_refused(samples: Path, tmp_path: Path) -> None:
    copy = shutil.copy(samples / NEW_ACCUM, tmp_path / "again.nc")
    with pytest.raises(StageError, match="ambiguous") as err:
        open_download([samples / NEW_ACCUM, Path(copy)])
    assert "tp" in str(err.value) and "again.nc" in str(err.value)


def test_parts_on_different_grids_are_refused(samples: Path) -> None:
    with pytest.raises(StageError, match="different grids") as err:
        open_download([samples / NEW_ACCUM, samples / OLD_3H])
    assert NEW_ACCUM in str(err.value) and OLD_3H in str(err.value)


# -- layouts not in the samples, built from them ---------------------------------------------------


def test_longitudes_0_to_360_are_normalised(samples: Path, tmp_path: Path) -> None:
    # The same data with longitudes written 0..360: 351.5.. instead of -8.5..
    shifted = write_like(samples / NEW_INSTANT, tmp_path / "east.nc",
                         lambda ds: ds.assign_coords(longitude=ds["longitude"] + 360.0))
    across = write_like(samples / NEW_INSTANT, tmp_path / "across.nc",
                        lambda ds: ds.assign_coords(longitude=[359.5, 359.75, 0.0, 0.25, 0.5]))
    with open_download([samples / NEW_INSTANT]) as a, open_download([shifted]) as b:
        np.testing.assert_array_equal(b.longitude, a.longitude)
        np.testing.assert_array_equal(b.location_id, a.location_id)
        t2m_a, t2m_b = (next(x.blocks()).values["temperature_2m"] for x in (a, b))
        assert_bits_equal(t2m_b, t2m_a)
    with open_download([across]) as c:
        assert c.longitude[:5].tolist() == [-0.5, -0.25, 0.0, 0.25, 0.5]
        np.testing.assert_array_equal(c.location_id, location_ids(c.latitude, c.longitude))


def test_a_grid_with_repeated_points_is_refused(samples: Path, tmp_path: Path) -> None:
    # 0 and 360 are the same meridian: each of those points would be loaded twice.
    wrapped = write_like(samples / NEW_INSTANT, tmp_path / "wrapped.nc",
                         lambda ds: ds.assign_coords(longitude=[0.0, 90.0, 180.0, 270.0, 360.0]))
    _refused(wrapped, "repeat")


def _mixed_expver_copy(src: Path, dst: Path, era5_steps: int) -> None:
    """OLD_3H rewritten as the old CDS writes ERA5 mixed with ERA5T: t2m(time, expver, lat, lon), expver
    1 holding the first steps and 5 the rest, the other slot _FillValue (as grib_to_netcdf does)."""
    with netCDF4.Dataset(src) as a, netCDF4.Dataset(dst, "w", format="NETCDF3_64BIT_OFFSET") as b:
        a.set_auto_maskandscale(False)
        for name, dim in a.dimensions.items():
            b.createDimension(name, len(dim))
        b.createDimension("expver", 2)
        for name in ("longitude", "latitude", "time"):
            v = b.createVariable(name, a[name].dtype, a[name].dimensions)
            v.setncatts(a[name].__dict__)
            v[:] = a[name][:]
        e = b.createVariable("expver", "i4", ("expver",))
        e.long_name = "expver"
        e[:] = [1, 5]
        for name in ("t2m", "tp"):
            raw = a[name][:]
            both = np.full((raw.shape[0], 2, *raw.shape[1:]), -32767, dtype=np.int16)
            both[:era5_steps, 0] = raw[:era5_steps]
            both[era5_steps:, 1] = raw[era5_steps:]
            v = b.createVariable(name, "i2", ("time", "expver", "latitude", "longitude"), fill_value=-32767)
            v.set_auto_maskandscale(False)  # write the packed int16 as they are
            v.setncatts({k: val for k, val in a[name].__dict__.items() if k != "_FillValue"})
            v[:] = both


def test_old_cds_expver_dimension_takes_the_value_that_is_there(samples: Path, tmp_path: Path) -> None:
    mixed = tmp_path / "mixed.nc"
    _mixed_expver_copy(samples / OLD_3H, mixed, era5_steps=5)
    ref = Reference(samples / OLD_3H)
    with open_download([mixed]) as s:
        assert s.expver == ["0001", "0005"]
        assert s.rows == 8 * ref.points
        _, got = collect(list(s.blocks(hours=3)))  # a block spans the ERA5/ERA5T switch
    for column in ("temperature_2m", "total_precipitation"):
        assert_bits_equal(got[column], ref.values[column], column)


def test_old_cds_expver_both_present_final_era5_wins(samples: Path, tmp_path: Path) -> None:
    mixed = tmp_path / "mixed.nc"
    _mixed_expver_copy(samples / OLD_3H, mixed, era5_steps=5)
    with netCDF4.Dataset(mixed, "a") as d:
        d.set_auto_maskandscale(False)
        t2m = d["t2m"][:]
        t2m[6, 0] = t2m[6, 1] + 100  # step 6 now also in ERA5, with another value
        d["t2m"][:] = t2m
    with xr.open_dataset(mixed, engine="netcdf4") as ds:
        era5 = ds["t2m"].isel(time=6, expver=0).values.astype(np.float64) - 273.15
    with open_download([mixed]) as s:
        block = list(s.blocks(hours=1))[6]
    assert_bits_equal(block.values["temperature_2m"][0], era5.astype(np.float32).ravel())


def test_time_spanning_hdf5_chunks_read_right(samples: Path, tmp_path: Path) -> None:
    deep = tmp_path / "deep_chunks.nc"
    with xr.open_dataset(samples / NEW_INSTANT, engine="netcdf4", mask_and_scale=False) as ds:
        ds[["t2m"]].to_netcdf(deep, encoding={"t2m": {"chunksizes": (96, 5, 5), "zlib": True}})
    with open_download([deep], chunk_cache_bytes=2**20) as s:
        assert s.time_chunk == 96
        _, got = collect(list(s.blocks(hours=1)))
    assert_bits_equal(got["temperature_2m"], Reference(samples / NEW_INSTANT).values["temperature_2m"])


def test_parts_read_past_release_their_chunk_caches_and_read_right_again(samples: Path, tmp_path: Path) -> None:
    # A month split by days is read part after part; each part the reader has passed gives its cached
    # chunks back. Reading it again afterwards (a second load of the same window) still reads right.
    first = write_like(samples / NEW_ACCUM, tmp_path / "a.nc", lambda ds: ds.isel(valid_time=slice(0, 100)))
    second = write_like(samples / NEW_ACCUM, tmp_path / "b.nc",
                        lambda ds: ds.isel(valid_time=slice(100, None)))
    ref = Reference(samples / NEW_ACCUM)
    with open_download([first, second]) as s:
        parts = {p.label: p for p in s._table_parts}
        a, b = parts[str(first)], parts[str(second)]
        blocks = s.blocks(hours=10)
        collect([next(blocks) for _ in range(9)])  # steps 0..89: inside the first part
        assert a.cached and not b.cached
        collect([next(blocks)])  # steps 90..99: the first part's last
        assert not a.cached
        collect(list(blocks))
        assert not b.cached
        # Read again from the start, after both were released.
        times, got = collect(list(s.blocks(hours=7)))
    np.testing.assert_array_equal(times, ref.times)
    assert_bits_equal(got["total_precipitation"], ref.values["total_precipitation"])


# -- blocks ----------------------------------------------------------------------------------------


def test_blocks_cover_start_to_end_exclusive_in_steps_of_hours(samples: Path) -> None:
    ref = Reference(samples / NEW_INSTANT)
    start, end = datetime(2025, 5, 2, tzinfo=UTC), datetime(2025, 5, 3, tzinfo=UTC)
    with open_download([samples / NEW_INSTANT]) as s:
        blocks = list(s.blocks(start=start, end=end, hours=5))
        assert [len(b.valid_time) for b in blocks] == [5, 5, 5, 5, 4]
        times, got = collect(blocks)
        assert (times[0], times[-1]) == (np.datetime64("2025-05-02T00:00"), np.datetime64("2025-05-02T23:00"))
        assert_bits_equal(got["temperature_2m"], ref.values["temperature_2m"][24:48])

        # Bounds between steps, other time zones, naive = UTC.
        cet = timezone(timedelta(hours=2))
        (b,) = s.blocks(start=datetime(2025, 5, 2, 2, 30, tzinfo=cet),
                        end=datetime(2025, 5, 2, 3, 0, 1, tzinfo=cet))
        assert b.valid_time.tolist() == [np.datetime64("2025-05-02T01:00:00", "s")]
        assert [len(b.valid_time) for b in s.blocks(start=datetime(2025, 5, 12, 20), hours=2)] == [2, 2]
        assert list(s.blocks(start=end, end=start)) == []
        assert list(s.blocks(start=datetime(2030, 1, 1, tzinfo=UTC))) == []
        assert sum(b.rows for b in s.blocks(end=datetime(2025, 5, 1, 12, tzinfo=UTC), hours=100)) == 12 * 25
        with pytest.raises(ValueError, match="hours"):
            s.blocks(hours=0)

        # Grid arrays are shared by every block and read-only.
        b1, b2 = list(s.blocks(hours=144))
        assert b1.location_id is b2.location_id
        with pytest.raises(ValueError):
            b1.location_id[0] = 1


def test_hours_counts_time_steps_not_clock_hours(samples: Path) -> None:
    with open_download([samples / OLD_3H]) as s:
        blocks = list(s.blocks(hours=2))
    assert [len(b.valid_time) for b in blocks] == [2, 2, 2, 2]
    assert blocks[1].valid_time.tolist() == [np.datetime64("2023-01-01T06:00:00", "s"),
                                             np.datetime64("2023-01-01T09:00:00", "s")]


def test_close_is_idempotent_and_ends_reading(samples: Path) -> None:
    s: StagedDownload = open_download([samples / NEW_ACCUM])
    s.close()
    s.close()
    with pytest.raises(ValueError, match="closed"):
        s.blocks()


# -- what cannot be staged -------------------------------------------------------------------------


def _refused(path: Path, *words: str) -> str:
    with pytest.raises(StageError) as err:
        open_download([path])
    message = str(err.value)
    assert str(path) in message, message
    for word in words:
        assert word in message.lower(), message
    return message


def test_empty_missing_text_and_broken_grib_files_are_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.nc"
    empty.write_bytes(b"")
    _refused(empty, "empty", "0 bytes")
    _refused(tmp_path / "missing.nc", "no such file")
    text = tmp_path / "error.nc"
    text.write_text('{"error": "quota exceeded"}\n')
    assert "quota" in _refused(text, "not a netcdf or grib file")
    grib = tmp_path / "data.nc"  # GRIB by its first bytes, whatever its name, but no message in it
    grib.write_bytes(b"GRIB" + bytes(200))
    _refused(grib, "message 1")


@pytest.mark.parametrize("name", [OLD_3H, OLD_ALL])
@pytest.mark.parametrize("keep", [0.0001, 0.5, 0.999999])
def test_truncated_netcdf3_is_refused(samples: Path, tmp_path: Path, name: str, keep: float) -> None:
    data = (samples / name).read_bytes()
    cut = tmp_path / name
    cut.write_bytes(data[:max(8, int(len(data) * keep))])
    # The C library opens such a file and reads the missing tail as zeros: it must not get that far.
    _refused(cut, "truncated")


@pytest.mark.parametrize("keep", [20_000, 0.5, 0.99])
def test_truncated_netcdf4_is_refused(samples: Path, tmp_path: Path, keep: float) -> None:
    data = (samples / NEW_INSTANT).read_bytes()
    cut = tmp_path / "instant.nc"
    cut.write_bytes(data[:int(keep if keep > 1 else len(data) * keep)])
    _refused(cut, "truncated")


def test_broken_zips_are_refused(samples: Path, tmp_path: Path) -> None:
    data = (samples / NEW_ZIP).read_bytes()
    half = tmp_path / "half.nc"
    half.write_bytes(data[:len(data) // 2])
    _refused(half, "zip")

    odd = tmp_path / "odd.zip"
    with zipfile.ZipFile(odd, "w") as zf:
        zf.write(samples / NEW_ACCUM, "data_stream-oper_stepType-accum.nc")
        zf.writestr("data_stream-oper_stepType-instant.nc", "<html>Service unavailable</html>")
    assert "stepType-instant.nc" in _refused(odd, "not a netcdf")

    empty = tmp_path / "empty.zip"
    zipfile.ZipFile(empty, "w").close()
    _refused(empty, "no files")


def test_a_download_without_table_variables_is_refused(samples: Path, tmp_path: Path) -> None:
    other = write_like(samples / NEW_INSTANT, tmp_path / "dewpoint_only.nc", lambda ds: ds[["d2m", "sp"]])
    message = _refused(other, "none of the table's variables")
    assert "d2m" in message and "sp" in message


def test_a_table_variable_without_time_dimension_is_refused(samples: Path, tmp_path: Path) -> None:
    static = write_like(samples / NEW_INSTANT, tmp_path / "static.nc",
                        lambda ds: ds[["t2m"]].isel(valid_time=0, drop=True))
    _refused(static, "no time dimension")
