"""Staging ERA5 on pressure levels from the real samples the CDS delivered (tests/data/era5-samples,
README there): the new CDS's NetCDF4 (``pressure_level``, float, descending), the old CDS's NetCDF3
(``level``, int32, ascending, int16 packed) and GRIB1 on isobaricInhPa. Each one's rows are exactly
the README's, and every value equals xarray's (NetCDF) or ecCodes' (GRIB) decoding after the unit
change, at the row's level and point. Files that contradict the dataset asked for are refused, and
``detect_dataset`` tells pressure levels from the rest by the files' headers."""

from __future__ import annotations

from pathlib import Path

import eccodes
import numpy as np
import pytest
import xarray as xr

from era5etl.core.datasets import PRESSURE_LEVELS, SINGLE_LEVELS
from era5etl.core.grid import location_ids
from era5etl.core.variables import CATALOGUE
from era5etl.stage import StageError, open_download
from era5etl.stage.detect import detect_dataset

NEW_NC = "era5pl_newcds_nc_z-t-u-v_8levels_270h_9x9.nc"
OLD_NC = "era5pl_oldcds_nc3-int16packed_level_r-t-u-v_3levels_16h_21x57.nc"
GRIB = "era5pl_grib1_z_500+1000hPa_1t_301x241.grib"
ROWS = {NEW_NC: 174_960, OLD_NC: 57_456, GRIB: 145_082}
LEVELS = {NEW_NC: (500, 600, 700, 775, 825, 875, 925, 975), OLD_NC: (700, 850, 1000), GRIB: (500, 1000)}
PL = PRESSURE_LEVELS.catalogue


def _staged_rows(path: Path, hours: int) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, int]:
    """Every block of the download stacked: column -> (T, P), level (P,), latitude, longitude and rows."""
    with open_download([path], variables=PL, dataset=PRESSURE_LEVELS) as staged:
        assert staged.levels == tuple(sorted(staged.levels))
        rows, out = 0, {}
        for block in staged.blocks(hours=hours):
            rows += block.rows
            assert block.level is not None and np.array_equal(block.level, staged.level)
            for c, v in block.values.items():
                out.setdefault(c, []).append(v)
        assert staged.level is not None and staged.location_id is not None
        assert np.array_equal(staged.location_id, location_ids(staged.latitude, staged.longitude))
        return ({c: np.concatenate(v) for c, v in out.items()}, staged.level, staged.latitude, staged.longitude,
                rows)


@pytest.mark.parametrize("name", [NEW_NC, OLD_NC])
def test_netcdf_rows_and_values_are_xarrays(samples: Path, name: str) -> None:
    values, level, lat, lon, rows = _staged_rows(samples / name, hours=7)
    assert rows == ROWS[name]
    assert tuple(np.unique(level)) == LEVELS[name]
    with xr.open_dataset(samples / name, mask_and_scale=True) as ds:
        ldim = "pressure_level" if "pressure_level" in ds.dims else "level"
        tdim = "valid_time" if "valid_time" in ds.dims else "time"
        assert values and set(values) == {v.column for v in PL if v.short_name in ds.data_vars}
        for var in PL:
            if var.short_name not in ds.data_vars:
                continue
            da = ds[var.short_name].transpose(tdim, ldim, "latitude", "longitude")
            for k, lev in enumerate(LEVELS[name]):
                ref = da.sel({ldim: lev}).values.astype(np.float64)  # (T, lat, lon)
                expected = (ref * var.scale + var.offset).astype(np.float32).reshape(ref.shape[0], -1)
                at = level == lev
                assert at.sum() == ref.shape[1] * ref.shape[2]
                got = values[var.column][:, at]
                assert np.array_equal(got, expected, equal_nan=True), (var.column, lev)
                # The points of each level are the file's grid, latitude-major.
                glat, glon = np.meshgrid(ds.latitude.values, ds.longitude.values, indexing="ij")
                assert np.array_equal(lat[at], glat.ravel().astype(np.float32)), k
                assert np.allclose(lon[at], ((glon.ravel() + 180) % 360 - 180).astype(np.float32)), k


def test_temperature_is_in_degc(samples: Path) -> None:
    values, *_ = _staged_rows(samples / NEW_NC, hours=270)
    assert np.nanmin(values["temperature"]) > -80.0 and np.nanmax(values["temperature"]) < 50.0


def test_grib_rows_and_values_are_eccodes(samples: Path) -> None:
    values, level, lat, lon, rows = _staged_rows(samples / GRIB, hours=1)
    assert rows == ROWS[GRIB] and set(values) == {"geopotential"}
    seen = []
    with (samples / GRIB).open("rb") as f:
        while (h := eccodes.codes_grib_new_from_file(f)) is not None:
            try:
                assert eccodes.codes_get_string(h, "typeOfLevel") == "isobaricInhPa"
                lev = eccodes.codes_get_long(h, "level")
                assert eccodes.codes_get_long(h, "paramId") == 129
                ref = eccodes.codes_get_values(h).astype(np.float64)
                rlat, rlon = eccodes.codes_get_array(h, "latitudes"), eccodes.codes_get_array(h, "longitudes")
            finally:
                eccodes.codes_release(h)
            at = level == lev
            assert np.array_equal(values["geopotential"][0, at], ref.astype(np.float32))
            assert np.array_equal(lat[at], rlat.astype(np.float32))
            assert np.allclose(lon[at], rlon.astype(np.float32))
            seen.append(lev)
    assert sorted(seen) == [500, 1000]


@pytest.mark.parametrize("name", [NEW_NC, OLD_NC, GRIB])
def test_files_on_levels_are_detected_and_refused_as_single_levels(samples: Path, name: str) -> None:
    assert detect_dataset([samples / name]) is PRESSURE_LEVELS
    # Staged as single levels with the whole catalogue (which has z, as surface geopotential): refused,
    # never loaded as surface fields.
    with pytest.raises(StageError, match=r"pressure levels.*--dataset pressure-levels"):
        open_download([samples / name], variables=CATALOGUE, dataset=SINGLE_LEVELS)


@pytest.mark.parametrize("name", ["oldcds_t2m_tp_d2m_msl_2023-01-01_3hourly_netcdf3.nc",
                                  "grib1_tp_5x9_2023-01_to_2023-11_hourly_expver0001_0005.grib",
                                  "newcds_zip_instant_accum_2023-09_hourly.nc"])
def test_single_level_files_are_not_pressure_levels(samples: Path, name: str) -> None:
    assert detect_dataset([samples / name]) is None


def test_a_single_level_file_with_a_pressure_level_name_is_refused(samples: Path, tmp_path: Path) -> None:
    """z is a variable of both: a single-level z (no level dimension) staged as pressure levels is refused."""
    with xr.open_dataset(samples / NEW_NC) as ds:
        ds.isel(pressure_level=0).drop_vars("pressure_level")[["z"]].to_netcdf(tmp_path / "z.nc")
    with pytest.raises(StageError, match="no pressure level dimension"):
        open_download([tmp_path / "z.nc"], variables=PL, dataset=PRESSURE_LEVELS)


def test_a_level_the_dataset_does_not_have_is_refused(samples: Path, tmp_path: Path) -> None:
    with xr.open_dataset(samples / OLD_NC) as ds:
        ds.assign_coords(level=[700, 850, 1013]).to_netcdf(tmp_path / "bad.nc")
    with pytest.raises(StageError, match="1013 hPa are not pressure levels"):
        open_download([tmp_path / "bad.nc"], variables=PL, dataset=PRESSURE_LEVELS)


@pytest.mark.parametrize("name", [NEW_NC, OLD_NC, GRIB])
@pytest.mark.parametrize("run", [1, 3])
def test_blocks_cut_by_levels_are_the_hours_blocks_in_pieces(samples: Path, name: str, run: int) -> None:
    """``blocks(levels=k)``: each block one hour and at most k ascending levels, their points the
    level-major slice of the download's; one hour's blocks side by side are that hour's whole block."""
    with open_download([samples / name], variables=PL, dataset=PRESSURE_LEVELS) as staged:
        assert staged.level is not None and staged.location_id is not None
        whole = list(staged.blocks(hours=1))
        pieces = list(staged.blocks(hours=1, levels=run))
        per_hour = -(-len(staged.levels) // run)
        if run >= len(staged.levels):
            per_hour = 1
        assert len(pieces) == len(whole) * per_hour
        for h, block in enumerate(whole):
            mine = pieces[h * per_hour:(h + 1) * per_hour]
            assert all(np.array_equal(p.valid_time, block.valid_time) for p in mine)
            assert all(p.level is not None and len(np.unique(p.level)) <= run for p in mine)
            for attr in ("level", "location_id", "latitude", "longitude"):
                np.testing.assert_array_equal(np.concatenate([getattr(p, attr) for p in mine]), getattr(block, attr))
            for column, values in block.values.items():
                np.testing.assert_array_equal(np.concatenate([p.values[column] for p in mine], axis=1), values)
    with pytest.raises(ValueError, match="levels"):
        staged.blocks(levels=-1)
