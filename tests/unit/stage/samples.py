"""The real CDS downloads the stager's tests open (tests/data/era5-samples) and what xarray says they hold.

Every value is compared bit for bit with xarray's own decoding of the file followed by the unit change
``(decoded as float64) * scale + offset`` cast to float32, which is what the table must hold.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
import xarray as xr

from era5etl.core.variables import BY_SHORT_NAME
from era5etl.stage import Block, StageError, open_download

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


def refused(path: Path, *words: str) -> str:
    with pytest.raises(StageError) as err:
        open_download([path])
    message = str(err.value)
    assert str(path) in message, message
    for word in words:
        assert word in message.lower(), message
    return message

