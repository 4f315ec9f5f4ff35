"""An ERA5-Land month validated against the land points its staged download had: the real 2020-01
GRIB sample (11 x 14 land points, GRIB1 and GRIB2) staged with dataset=LAND, loaded by the real loader,
its land points kept in the ledger, validated by the real suite; a month that lost a land point fails,
and a month with no land point count is refused rather than guessed."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from era5etl.core.datasets import LAND
from era5etl.core.errors import InputError
from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import load_variables
from era5etl.db import connect
from era5etl.db.columns import ensure_columns
from era5etl.load import load
from era5etl.stage import open_download
from era5etl.track import ledger
from era5etl.validate import validate_month

GRIB_MONTH = "era5land_newcds_grib_9vars-2t-2d-sp-snowc-rsn-tp-e-ro-smlt_GRIB1+GRIB2_2020-01_744h_11x14.grib"
MONTH = Month(2020, 1)
AREA = Area.parse("44.5/19.5/43.5/20.8")
GRID = Grid(Decimal("0.1"))


def test_a_land_month_validates_against_its_land_points(db_url: str, table: str, samples: Path,
                                                         tmp_path: Path) -> None:
    with open_download([samples / GRIB_MONTH], dataset=LAND) as staged:
        ensure_columns(db_url, table, load_variables(staged.variables, LAND))
        points = staged.points
        load(db_url, table, staged)
    assert points == 154
    ledger.set_state(db_url, table=table, month=MONTH, area=str(AREA), grid=str(GRID), state="loaded",
                     run_id="test")
    with pytest.raises(InputError, match="no land point count was recorded"):
        validate_month(db_url, table, MONTH, AREA, GRID, dataset=LAND, out_dir=tmp_path)
    ledger.record_land_points(db_url, table=table, month=MONTH, area=str(AREA), points=points)
    assert ledger.land_points(db_url, table=table, month=MONTH, area=str(AREA)) == 154

    ok = validate_month(db_url, table, MONTH, AREA, GRID, dataset=LAND, out_dir=tmp_path)
    assert ok.success, ok.failed
    assert ok.expected_rows == ok.observed_rows == 744 * 154

    # A land point lost on the way (all its hours): the month no longer holds what was downloaded.
    with connect(db_url, autocommit=True) as conn:
        lost = conn.execute(f"SELECT min(location_id) FROM {table}").fetchone()
        assert lost is not None
        conn.execute("SET timescaledb.max_tuples_decompressed_per_dml_transaction = 0")  # a compressed month
        conn.execute(f"DELETE FROM {table} WHERE location_id = %s", (lost[0],))
    bad = validate_month(db_url, table, MONTH, AREA, GRID, dataset=LAND, out_dir=tmp_path)
    assert not bad.success
    assert "row_count_month" in bad.failed and any(f.startswith("row_count_day:") for f in bad.failed)
    assert bad.observed_rows == 744 * 153
