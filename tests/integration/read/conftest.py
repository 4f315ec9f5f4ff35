"""The read tests' own local CDS (they change its seed and clock) and a month loaded through the
pipeline once for the package's reads, and the second server under the Apache licence."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from era5etl.db import connect, drop_table
from localcds.server import LocalCDS

from .common import run_month

MONTH = "2024-03"


def drop(url: str, table: str) -> None:
    with connect(url, autocommit=True) as conn:
        drop_table(conn, table)  # its rollups with it
        for bookkeeping in ("era5_months", "era5_metrics", "era5_validation_days"):
            conn.execute(f"DELETE FROM {bookkeeping} WHERE table_name = %s", (table,))


@pytest.fixture(scope="package")
def read_cds() -> Iterator[LocalCDS]:
    with LocalCDS() as server:
        yield server


@pytest.fixture(scope="package")
def month_table(db_url: str, read_cds: LocalCDS, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """March 2024 of the 25-point area, through run-month (load with its rollups, validate, compress); read only."""
    table = f"r_{uuid.uuid4().hex[:10]}"
    run_month(read_cds, table, MONTH, tmp_path_factory.mktemp("staging"))
    yield table
    drop(db_url, table)


LAND_MONTH = "era5land_newcds_grib_9vars-2t-2d-sp-snowc-rsn-tp-e-ro-smlt_GRIB1+GRIB2_2020-01_744h_11x14.grib"


def loaded_file(path: Path, prefix: str) -> tuple[str, dict[str, Any]]:
    """A new table holding ``path``, loaded by ``load-file`` as a user loads it: its name, and the
    command's JSON summary."""
    from ..helpers import cli

    table = f"{prefix}_{uuid.uuid4().hex[:10]}"
    code, _, err, summary = cli("load-file", str(path), "--table", table, "--json")
    assert code == 0, err
    assert summary is not None
    return table, summary


@pytest.fixture(scope="package")
def land_table(db_url: str, samples: Path) -> Iterator[str]:
    """January 2020 of ERA5-Land's 11x14 points at 0.1 degrees (44.5..43.5 N, 19.5..20.8 E), load-file."""
    table, summary = loaded_file(samples / LAND_MONTH, "l")
    assert summary["dataset"] == "land"
    yield table
    drop(db_url, table)


NEW_NC = "era5pl_newcds_nc_z-t-u-v_8levels_270h_9x9.nc"  # 8 levels, 270 hours over 2016-2025, 9x9 points


@pytest.fixture(scope="package")
def pl_table(db_url: str, samples: Path) -> Iterator[str]:
    """A table on pressure levels holding the new CDS's 8-level sample (load-file, as a user loads it)."""
    from ..helpers import cli

    name = f"pl_{uuid.uuid4().hex[:10]}"
    code, _, err, _ = cli("load-file", str(samples / NEW_NC), "--table", name)
    assert code == 0, err
    yield name
    drop(db_url, name)
