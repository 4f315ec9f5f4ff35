"""The ERA5-Land stager against the real ERA5-Land files the CDS delivered (tests/data/era5-samples,
README there): land points only, accumulations as hourly amounts, GRIB1 and GRIB2 in one file, an
all-sea area refused. The reference (tests/land_reference.py) decodes the files itself."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from era5etl.core.datasets import LAND, LAND_GRID, SINGLE_LEVELS, by_name
from era5etl.stage import StageError, open_download

from ...land_reference import decoded, expected_land_frame

GRIB_MONTH = "era5land_newcds_grib_9vars-2t-2d-sp-snowc-rsn-tp-e-ro-smlt_GRIB1+GRIB2_2020-01_744h_11x14.grib"
NC_HOUR = "era5land_newcds_nc_data_1-9vars-accum+instant_2025-10-17_1h_11x11_seaNaN.nc"
NC_SSRD = "era5land_newcds_nc_ssrd-accum_2023-10-10_4h_171x471_seaNaN.nc"
GRIB_OLD = "era5land_oldcds_grib1_2t-ssr-ssrd-stl1_2016-10-16_24h_1x1.grib"
ALL_SEA = "era5land_newcds_nc_t2m_ALL-NaN-sea-tile_2020-01-01_4h_4x4.nc"
# The rows the README gives for each: hours x land points.
ROWS = {GRIB_MONTH: 744 * 154, NC_HOUR: 59, NC_SSRD: 4 * 18719, GRIB_OLD: 24}


def staged_frame(path: Path, start: datetime | None = None, hours: int = 1) -> pd.DataFrame:
    with open_download([path], dataset=LAND) as st:
        pieces = []
        for b in st.blocks(start=start, hours=hours):
            t = len(b.valid_time)
            assert b.location_id is not None
            piece = pd.DataFrame({"time": np.repeat(b.valid_time.astype("datetime64[us]"), b.location_id.size),
                                  "location_id": np.tile(b.location_id, t),
                                  "latitude": np.tile(b.latitude, t), "longitude": np.tile(b.longitude, t)})
            for column, v in b.values.items():
                assert v.dtype == np.float32
                piece[column] = v.ravel()
            pieces.append(piece)
    return pd.concat(pieces, ignore_index=True)


def test_the_dataset_record() -> None:
    assert by_name("land") is LAND and by_name("Land ") is LAND
    assert LAND.collection == "reanalysis-era5-land" and LAND.request_keys == {}
    assert (LAND.accumulation, LAND.land_only, LAND.first_month, LAND.grid) == ("since_00utc", True, "1950-01",
                                                                                  LAND_GRID)
    assert SINGLE_LEVELS.request_keys == {"product_type": ["reanalysis"]}
    # ids: lat_index * 3600 + lon_index + 1, lat from -90, lon from -179.9; and back.
    assert LAND_GRID.location_ids(-90.0, -179.9) == 1
    assert LAND_GRID.location_ids(44.5, 19.5) == 1345 * 3600 + 1994 + 1
    assert LAND_GRID.location_ids(0.0, 180.0) == 900 * 3600 + 3599 + 1
    lat, lon = LAND_GRID.coordinates([1345 * 3600 + 1994 + 1])
    np.testing.assert_allclose([lat[0], lon[0]], [44.5, 19.5], atol=1e-9)
    for name in LAND.default_variables:
        assert any(v.cds_name == name for v in LAND.catalogue)


@pytest.mark.parametrize("name", [GRIB_MONTH, NC_HOUR, NC_SSRD, GRIB_OLD])
def test_each_land_sample_stages_exactly(samples: Path, name: str) -> None:
    # The stager hands the land points out in location_id order (the order the loader sends them in).
    expected = expected_land_frame(samples / name).sort_values(["time", "location_id"], ignore_index=True)
    got = staged_frame(samples / name, hours=50)
    assert len(got) == len(expected) == ROWS[name]
    assert sorted(got.columns) == sorted(expected.columns)
    for column in expected.columns:
        np.testing.assert_array_equal(got[column].to_numpy(), expected[column].to_numpy(), err_msg=column)


def test_accumulations_are_the_differences_of_the_running_totals(samples: Path) -> None:
    """GRIB_MONTH, tp at one point on 2020-01-02, from the file's own values written out by hand."""
    times, lat, lon, cubes = decoded(samples / GRIB_MONTH)
    got = staged_frame(samples / GRIB_MONTH, hours=24)
    p = 77
    pid = LAND_GRID.location_ids(lat[p], lon[p])
    mine = got[got.location_id == pid].set_index("time")["total_precipitation"]
    day = np.flatnonzero(times.astype("datetime64[D]") == np.datetime64("2020-01-02"))
    run = cubes["total_precipitation"][:, p]
    assert times[day[1]] == np.datetime64("2020-01-02T01:00")
    want_01 = np.float32(run[day[1]] * 1000.0)  # 01 UTC: the running total itself
    want_07 = np.float32((run[day[7]] - run[day[6]]) * 1000.0)
    # 00 UTC of the 3rd: the 2nd's 24-hour total minus its 23 UTC total.
    want_00 = np.float32((run[day[-1] + 1] - run[day[-1]]) * 1000.0)
    assert mine[pd.Timestamp("2020-01-02 01:00")] == want_01
    assert mine[pd.Timestamp("2020-01-02 07:00")] == want_07
    assert mine[pd.Timestamp("2020-01-03 00:00")] == want_00
    # The hours of a day add up to its 24-hour total (the 00 UTC value of the next day), to float32.
    day_sum = mine[(mine.index > pd.Timestamp("2020-01-02")) & (mine.index <= pd.Timestamp("2020-01-03"))]
    assert day_sum.size == 24
    assert day_sum.astype(np.float64).sum() == pytest.approx(run[day[-1] + 1] * 1000.0, rel=1e-4, abs=1e-3)
    # The month's first hour has no 23 UTC before it in the file: NULL, never the running total.
    assert np.isnan(mine[pd.Timestamp("2020-01-01 00:00")])


def test_a_window_inside_the_download_reads_the_hour_before_it(samples: Path) -> None:
    """The loader reads a download chunk by chunk: a window starting at 00 UTC still gets its hour."""
    whole = staged_frame(samples / GRIB_MONTH, hours=24)
    late = staged_frame(samples / GRIB_MONTH, start=datetime(2020, 1, 15), hours=7)
    tail = whole[whole.time >= pd.Timestamp("2020-01-15")].reset_index(drop=True)
    pd.testing.assert_frame_equal(late, tail)
    assert not np.isnan(late[late.time == pd.Timestamp("2020-01-15")]["total_precipitation"]).any()


def test_grib1_and_grib2_in_one_file(samples: Path) -> None:
    with open_download([samples / GRIB_MONTH], dataset=LAND) as st:
        assert "snow_cover" in [v.column for v in st.variables]
        assert st.ignored == [] and st.points == 154
        assert st.longitude.min() >= 19.5 - 1e-6 and st.longitude.max() <= 20.8 + 1e-6


def test_notes_say_what_is_null_and_what_is_sea(samples: Path) -> None:
    with open_download([samples / NC_HOUR], dataset=LAND) as st:
        notes = " ".join(st.notes)
        assert "62 of 121 grid points are sea" in notes
        assert "NULL at 1 hour(s) from 2025-10-17T00:00:00" in notes
        assert st.expver == ["0005"]  # a scalar expver


def test_an_all_sea_area_is_refused(samples: Path) -> None:
    with pytest.raises(StageError, match=r"no land point.*all sea"):
        open_download([samples / ALL_SEA], dataset=LAND)


def test_single_levels_unchanged_by_a_land_file(samples: Path) -> None:
    """Without dataset=LAND the same file is staged as ERA5 was: every point a row, 0.25 degree ids
    refused for a 0.1 degree grid (NULL), accumulations as the file says."""
    with open_download([samples / NC_HOUR]) as st:
        assert st.points == 121 and st.location_id is None


def test_a_window_is_read_in_bands_of_rows_bounded_by_read_values(samples: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """What the stager holds while reading: a variable a time, a band of latitude rows a time, the
    band's rows bounded by READ_VALUES and cut within a row of the file's chunks (one row of chunks
    cached). NC_SSRD's values chunked (2, 40, 471) instead of whole, so there are rows of chunks to cut;
    the rows staged are still exactly the file's."""
    import xarray as xr

    from era5etl.stage import land

    chunked = tmp_path / "ssrd-chunked.nc"
    with xr.open_dataset(samples / NC_SSRD) as ds:
        ds.to_netcdf(chunked, encoding={"ssrd": {"chunksizes": (2, 40, 471), "zlib": True}})
    monkeypatch.setattr(land, "READ_VALUES", 2 * 471 * 10)  # 2 steps (the time chunk) x 10 rows of 471
    reads: list[tuple[str, int, int, int, int]] = []
    with open_download([chunked], dataset=LAND) as st:
        inner = st._inner  # type: ignore[attr-defined]
        assert (inner.grid_shape, inner.row_chunk, inner.time_chunk) == ((171, 471), 40, 2)
        read_rows = inner.read_rows

        def spy(column: str, i0: int, i1: int, r0: int, r1: int) -> np.ndarray:
            reads.append((column, i0, i1, r0, r1))
            return read_rows(column, i0, i1, r0, r1)  # type: ignore[no-any-return]

        monkeypatch.setattr(inner, "read_rows", spy)
        blocks = list(st.blocks(hours=1))
        land_rows = np.unique(np.flatnonzero(np.isfinite(
            xr.open_dataset(chunked)["ssrd"].values).any(axis=0).any(axis=1)))
    assert [len(b.valid_time) for b in blocks] == [1, 1, 1, 1]
    assert reads and all(r1 - r0 <= 10 and r0 // 40 == (r1 - 1) // 40 and i1 - i0 <= 2 for _, i0, i1, r0, r1 in reads)
    # Each window (steps 0-1, then 2-3) reads each band once, and only bands with land.
    for window in ((0, 2), (2, 4)):
        bands = [(r0, r1) for _, i0, i1, r0, r1 in reads if (i0, i1) == window]
        assert len(bands) == len(set(bands))
        covered = np.concatenate([np.arange(r0, r1) for r0, r1 in bands])
        assert set(land_rows) <= set(covered.tolist())
        assert all(np.isin(np.arange(r0, r1), land_rows).any() for r0, r1 in bands)
    got = staged_frame(chunked, hours=1)
    expected = expected_land_frame(samples / NC_SSRD).sort_values(["time", "location_id"], ignore_index=True)
    assert len(got) == len(expected) == ROWS[NC_SSRD]
    for column in expected.columns:
        np.testing.assert_array_equal(got[column].to_numpy(), expected[column].to_numpy(), err_msg=column)
