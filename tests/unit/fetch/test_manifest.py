"""A staged download's manifest (fetch.manifest): each part named by what the CDS sent, told by its
first bytes and not by the name asked for."""

from __future__ import annotations

from pathlib import Path

from era5etl.fetch.manifest import download_kind
from era5etl.fetch.request import FILE_KINDS


def test_a_staged_part_is_named_by_what_the_cds_sent(samples: Path) -> None:
    grib = samples / "grib1_2t_10u_10v_2d_tp_plus_wave_point_2015-08_2days_hourly.grib"
    nc = samples / "newcds_accum_tp_2025-05_hourly_expver0005.nc"
    zipped = samples / "newcds_zip_instant_accum_2023-09_hourly.nc"
    assert (download_kind(grib), download_kind(nc), download_kind(zipped)) == ("grib", "nc", "zip")
    from era5etl.core.files import file_kind

    assert file_kind(grib) in FILE_KINDS["grib"] and file_kind(grib) not in FILE_KINDS["netcdf"]
    assert file_kind(nc) in FILE_KINDS["netcdf"] and file_kind(nc) not in FILE_KINDS["grib"]
