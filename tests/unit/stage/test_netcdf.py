"""One NetCDF part opened and checked: packing, expver, chunk caches, truncation, variables without time.

See samples.py for the reference the values are compared with.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import netCDF4
import numpy as np
import pytest
import xarray as xr

from era5etl.core.variables import BY_SHORT_NAME
from era5etl.stage import open_download

from .samples import (
    NEW_ACCUM,
    NEW_INSTANT,
    OLD_3H,
    OLD_ALL,
    Reference,
    assert_bits_equal,
    collect,
    refused,
    write_like,
)


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


@pytest.mark.parametrize("name", [OLD_3H, OLD_ALL])
@pytest.mark.parametrize("keep", [0.0001, 0.5, 0.999999])
def test_truncated_netcdf3_isrefused(samples: Path, tmp_path: Path, name: str, keep: float) -> None:
    data = (samples / name).read_bytes()
    cut = tmp_path / name
    cut.write_bytes(data[:max(8, int(len(data) * keep))])
    # The C library opens such a file and reads the missing tail as zeros: it must not get that far.
    refused(cut, "truncated")


@pytest.mark.parametrize("keep", [20_000, 0.5, 0.99])
def test_truncated_netcdf4_isrefused(samples: Path, tmp_path: Path, keep: float) -> None:
    data = (samples / NEW_INSTANT).read_bytes()
    cut = tmp_path / "instant.nc"
    cut.write_bytes(data[:int(keep if keep > 1 else len(data) * keep)])
    refused(cut, "truncated")


def test_a_download_without_table_variables_isrefused(samples: Path, tmp_path: Path) -> None:
    other = write_like(samples / NEW_INSTANT, tmp_path / "dewpoint_only.nc", lambda ds: ds[["d2m", "sp"]])
    message = refused(other, "none of the table's variables")
    assert "d2m" in message and "sp" in message


def test_a_table_variable_without_time_dimension_isrefused(samples: Path, tmp_path: Path) -> None:
    static = write_like(samples / NEW_INSTANT, tmp_path / "static.nc",
                        lambda ds: ds[["t2m"]].isel(valid_time=0, drop=True))
    refused(static, "no time dimension")



def _dated(tmp_path: Path, date: object) -> Path:
    """A file as the 2024 CDS-Beta wrote its monthly means: no time dimension, the month in ``date``."""
    ds = xr.Dataset({"t2m": (("latitude", "longitude"), np.full((2, 2), 280.0, dtype=np.float32))},
                    coords={"latitude": [1.0, 0.75], "longitude": [10.0, 10.25], "date": date})
    path = tmp_path / "dated.nc"
    ds.to_netcdf(path)
    return path


def test_a_scalar_date_is_the_files_time(tmp_path: Path) -> None:
    with open_download([_dated(tmp_path, np.int64(20151001))], variables=[BY_SHORT_NAME["t2m"]]) as staged:
        assert staged.valid_time.astype("datetime64[s]").tolist() == [np.datetime64("2015-10-01T00:00", "s").item()]
        assert staged.points == 4


def test_a_scalar_date_that_is_no_date_is_refused(tmp_path: Path) -> None:
    from era5etl.stage.errors import StageError

    with pytest.raises(StageError, match="the scalar coordinate date is 20151301, not a date YYYYMMDD"):
        open_download([_dated(tmp_path, np.int64(20151301))], variables=[BY_SHORT_NAME["t2m"]]).close()
