"""``open_download``: a download's parts (NetCDF files, a ZIP of them) joined into one staged grid.

See samples.py for the reference the values are compared with.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from era5etl.core.grid import location_ids
from era5etl.core.variables import DATA_COLUMNS
from era5etl.stage import StageError, open_download

from .samples import (
    NEW_ACCUM,
    NEW_INSTANT,
    NEW_ZIP,
    OLD_3H,
    OLD_ALL,
    SAMPLES,
    Reference,
    assert_bits_equal,
    collect,
    write_like,
)


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


def test_one_variable_in_two_parts_at_the_same_times_isrefused(samples: Path, tmp_path: Path) -> None:
    copy = shutil.copy(samples / NEW_ACCUM, tmp_path / "again.nc")
    with pytest.raises(StageError, match="ambiguous") as err:
        open_download([samples / NEW_ACCUM, Path(copy)])
    assert "tp" in str(err.value) and "again.nc" in str(err.value)


def test_parts_on_different_grids_arerefused(samples: Path) -> None:
    with pytest.raises(StageError, match="different grids") as err:
        open_download([samples / NEW_ACCUM, samples / OLD_3H])
    assert NEW_ACCUM in str(err.value) and OLD_3H in str(err.value)

