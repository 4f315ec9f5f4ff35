"""Which dataset a download's files say they are, read from the real samples' headers alone.

The expected dataset of each sample is what its provenance says (tests/data/era5-samples/README.md):
MARS class l5 or a 0.1 degree grid is ERA5-Land, a level dimension or isobaric messages pressure levels,
GRIB stream moda/mnth monthly means. A file that shows none of these is None (the caller's default).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from era5etl.core.datasets import (
    LAND,
    LAND_MONTHLY_MEANS,
    MONTHLY_MEANS,
    MONTHLY_MEANS_BY_HOUR,
    PRESSURE_LEVELS,
    Dataset,
)
from era5etl.stage import StageError
from era5etl.stage.detect import detect_dataset

SHOWN = {
    "era5land-monthly_grib1-moda_stl1_1950-01..2025-01_901msgs_21x31_bitmap-sea.grib": LAND_MONTHLY_MEANS,
    "era5land_oldcds_grib1_2t-ssr-ssrd-stl1_2016-10-16_24h_1x1.grib": LAND,
    "era5land_newcds_nc_ssrd-accum_2023-10-10_4h_171x471_seaNaN.nc": LAND,
    # A monthly ERA5-Land NetCDF from the old CDS names no stream: its 0.1 degree grid says land only.
    "era5land-monthly_oldcds_nc3-int16packed_u10-d2m-t2m_1991-01..1992-12_24mon_91x141_seaNaN.nc": LAND,
    "era5mm_byhour_grib1_mnth_7vars_2004-2006_9x9.grib": MONTHLY_MEANS_BY_HOUR,
    "era5mm_newcds_nc_t2m_avgua_2005-2024_63x35.nc": MONTHLY_MEANS,
    "era5pl_grib1_z_500+1000hPa_1t_301x241.grib": PRESSURE_LEVELS,
    "era5pl_oldcds_nc3-int16packed_level_r-t-u-v_3levels_16h_21x57.nc": PRESSURE_LEVELS,
}
SILENT = [
    "newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc",
    "oldcds_t2m_tp_d2m_msl_2023-01-01_3hourly_netcdf3.nc",
    "grib1_2t_10u_10v_2d_tp_plus_wave_point_2015-08_2days_hourly.grib",
    "era5mm_oldcds_nc3_u100-v100_expver1+5_1979-2021_9x21.nc",  # old CDS NetCDF: no stream in its history
]


@pytest.mark.parametrize(("name", "dataset"), SHOWN.items())
def test_a_file_that_shows_its_dataset_is_detected(samples: Path, name: str, dataset: Dataset) -> None:
    assert detect_dataset([samples / name]) is dataset


@pytest.mark.parametrize("name", SILENT)
def test_a_file_that_shows_nothing_is_none(samples: Path, name: str) -> None:
    assert detect_dataset([samples / name]) is None


def test_the_first_file_that_shows_a_dataset_decides(samples: Path) -> None:
    paths = [samples / SILENT[0], samples / "era5pl_grib1_z_500+1000hPa_1t_301x241.grib"]
    assert detect_dataset(paths) is PRESSURE_LEVELS


def test_a_zips_members_are_read_and_the_extraction_removed(samples: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "download.zip"
    with zipfile.ZipFile(bundle, "w") as zf:
        zf.write(samples / "era5land_newcds_nc_ssrd-accum_2023-10-10_4h_171x471_seaNaN.nc", "data_0.nc")
    work = tmp_path / "work"
    work.mkdir()
    assert detect_dataset([bundle], tmp_dir=work) is LAND
    assert list(work.iterdir()) == []


def test_a_damaged_grib_says_nothing_and_a_text_file_is_refused(samples: Path, tmp_path: Path) -> None:
    grib = (samples / "era5pl_grib1_z_500+1000hPa_1t_301x241.grib").read_bytes()
    cut = tmp_path / "cut.grib"
    cut.write_bytes(grib[:200])
    assert detect_dataset([cut]) is None  # the stager refuses it next, in its own words
    text = tmp_path / "error.nc"
    text.write_text('{"error": "quota exceeded"}\n')
    with pytest.raises(StageError, match="not a NetCDF or GRIB"):
        detect_dataset([text])
