"""A box on a lattice finer than ERA5's (core.grid.Area.on_lattice): a box from the antimeridian
holds every ERA5-Land column, and no box on ERA5's lattice changes (its ledger keys stay)."""

from __future__ import annotations

from decimal import Decimal

from era5etl import settings as config
from era5etl.core.datasets import LAND_GRID
from era5etl.core.grid import Area, Grid, expected_rows
from era5etl.core.months import Month
from era5etl.pipeline.job import MonthJob

LAND_STEP = Grid(Decimal("0.1"))


def test_a_global_box_on_the_land_lattice_holds_its_3600_columns_from_minus_179_9() -> None:
    box = Area.parse("90/-180/-90/180").on_lattice(LAND_STEP.step)
    assert str(box) == "90/-179.9/-90/180"
    columns = box.longitudes(LAND_STEP)
    assert (len(columns), columns[:2], columns[-1]) == (LAND_GRID.lon_count, [-179.9, -179.8], 180.0)
    assert box.points(LAND_STEP) == LAND_GRID.lat_count * LAND_GRID.lon_count
    # Before, the box kept ERA5's west edge and lost the two westernmost columns.
    assert len(Area.parse("90/-180/-90/180").longitudes(LAND_STEP)) == LAND_GRID.lon_count - 2


def test_boxes_on_era5s_lattice_or_not_from_the_antimeridian_are_unchanged() -> None:
    for text in ("90/-180/-90/180", "90/0/-90/360", "50/-180/40/-170", "50/5/45/10"):
        box = Area.parse(text)
        for step in ("0.25", "0.5", "1"):
            assert box.on_lattice(Decimal(step)) == box
    assert Area.parse("50/5/45/10").on_lattice(LAND_STEP.step) == Area.parse("50/5/45/10")
    assert str(Area.parse("50/-180/40/-170").on_lattice(LAND_STEP.step)) == "50/-179.9/40/-170"


def test_a_land_months_job_stores_and_asks_for_the_whole_lattice() -> None:
    settings = config.load()
    month = Month.parse("2020-02")
    land = MonthJob.create(settings, month, run_id="t", area="90/-180/-90/180", dataset="land")
    assert str(land.area) == "90/-179.9/-90/180"
    assert land.request.cds_request()["area"] == [90.0, -179.9, -90.0, 180.0]
    assert land.expected_rows == month.hours * LAND_GRID.lat_count * LAND_GRID.lon_count
    # A box given already parsed (the settings' ERA5_AREA) is put on the lattice the same way.
    assert str(MonthJob.create(settings, month, run_id="t", area=Area.parse("90/-180/-90/180"),
                               dataset="land").area) == "90/-179.9/-90/180"
    era5 = MonthJob.create(settings, month, run_id="t", area="90/-180/-90/180", dataset="single-levels")
    assert str(era5.area) == "90/-179.75/-90/180"
    assert era5.expected_rows == expected_rows(month, era5.area, Grid()) == month.hours * 721 * 1440
