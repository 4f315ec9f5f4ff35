"""The monthly means' variables: the hourly collections' catalogues, with what a monthly mean changes.

A monthly mean of an instantaneous variable is that variable's mean (GRIB stepType ``avgua``), in the
same unit. An accumulation is not: in ``monthly_averaged_reanalysis`` it is the **mean daily total**
(``avgad``): ERA5's ``tp`` is metres a day although the file's unit says only "m". Stored as delivered,
converted as the hourly value is (m to mm), and the table's unit says "a day" (``mm/day``,
``J m-2/day``), so no reader takes it for an hour's amount (a 24x error). By hour of day
(``monthly_averaged_reanalysis_by_hour_of_day``, ``avgas``) an accumulation is the mean of that hour's
amounts: the hourly unit, unchanged. ERA5-Land's monthly accumulations are mean daily totals too.

The GRIB step types are ecCodes' names; the new CDS splits its NetCDF by them
(``data_stream-moda_stepType-avgad.nc``)."""

from __future__ import annotations

from dataclasses import replace

from era5etl.core.catalogue import CATALOGUE, Variable
from era5etl.core.catalogue_land import LAND_CATALOGUE

PER_DAY = "/day"


def monthly_mean(v: Variable) -> Variable:
    """One variable of ``monthly_averaged_reanalysis``."""
    if v.step_type == "accum":
        return replace(v, step_type="avgad", table_unit=v.table_unit + PER_DAY)
    if v.step_type == "instant":
        return replace(v, step_type="avgua")
    return v


def by_hour_of_day(v: Variable) -> Variable:
    """One variable of ``monthly_averaged_reanalysis_by_hour_of_day``."""
    if v.step_type == "accum":
        return replace(v, step_type="avgas")
    if v.step_type == "instant":
        return replace(v, step_type="avgua")
    return v


MONTHLY_CATALOGUE: tuple[Variable, ...] = tuple(map(monthly_mean, CATALOGUE))
BY_HOUR_CATALOGUE: tuple[Variable, ...] = tuple(map(by_hour_of_day, CATALOGUE))
LAND_MONTHLY_CATALOGUE: tuple[Variable, ...] = tuple(map(monthly_mean, LAND_CATALOGUE))
