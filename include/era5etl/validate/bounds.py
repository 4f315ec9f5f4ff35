"""Physical bounds per variable: what a finite value of each column may be, in the table's units.

The bounds are the catalogue's (:mod:`era5etl.core.catalogue`), one definition per variable:
:data:`BOUNDS` those of the table's six columns, :func:`bounds_for` those of any catalogued column.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from era5etl.core.catalogue import CATALOGUE, PACKING_TOLERANCE as PACKING_TOLERANCE
from era5etl.core.catalogue_land import LAND_CATALOGUE
from era5etl.core.errors import InputError
from era5etl.core.variables import VARIABLES, Variable


@dataclass(frozen=True)
class Bounds:
    column: str
    low: float
    high: float | None  # None: no upper bound


# Physical bounds, in the table's units (degC, m/s, fraction, mm). NULL is allowed: the loader writes
# NULL where the source had no value (its NaN), so a NaN or infinity in the table is always a defect.
# ERA5 is stored as GRIB with 16-bit packing, which rounds each value to a step of up to 1/65535 of
# the field's range, so a bounded field can read up to half a step past its bound (cloud cover 1.00002):
# a fraction's upper bound in the catalogue is 1 + PACKING_TOLERANCE.
# ERA5's columns and ERA5-Land's own (snow cover, leaf area, ...): a column's bounds whatever its table.
_BY_COLUMN: dict[str, Bounds] = {v.column: Bounds(v.column, v.low, v.high) for v in (*LAND_CATALOGUE, *CATALOGUE)}


def bounds_for(columns: Iterable[str]) -> tuple[Bounds, ...]:
    """The bounds of catalogued columns, in the order asked; an unknown column is an error."""
    wanted = list(columns)
    unknown = [c for c in wanted if c not in _BY_COLUMN]
    if unknown:
        raise InputError(f"no bounds for column(s) {', '.join(map(repr, unknown))}: not in the catalogue "
                         "(`python -m era5etl variables` lists its columns)")
    return tuple(_BY_COLUMN[c] for c in wanted)


BOUNDS: tuple[Bounds, ...] = bounds_for(v.column for v in VARIABLES)


def table_bounds(columns: Iterable[str], catalogue: Sequence[Variable] | None = None) -> tuple[Bounds, ...]:
    """The bounds a table's validation checks: the six, then each catalogued column it has (in the
    table's order); any other column (latitude, an operator's own) is not the catalogue's to bound.
    ``catalogue``: another dataset's (pressure levels), whose table has its own columns and not the six."""
    names = list(columns)
    if catalogue is not None and catalogue is not CATALOGUE:
        by_column = {v.column: Bounds(v.column, v.low, v.high) for v in catalogue}
        return tuple(by_column[c] for c in names if c in by_column)
    extra = [c for c in names if c in _BY_COLUMN and c not in {b.column for b in BOUNDS}]
    return (*BOUNDS, *bounds_for(extra))


# ERA5-Land's hourly amounts are differences of consecutive running totals, each 16-bit packed in its
# own message: a dry or dark hour can come out a packing step below zero (-3e-5 mm of precipitation
# and -4e-6 mm of snowmelt in the 2020-01 sample). The stager keeps the difference as the data give
# it; the validation of a table of such differences lets a non-negative accumulation go this far below
# zero, in its table unit, and no further.
DIFFERENCE_TOLERANCE: dict[str, float] = {"mm": 0.01, "J m-2": 1000.0}


def differenced(bounds: tuple[Bounds, ...], accumulated: Iterable[str]) -> tuple[Bounds, ...]:
    """``bounds`` for a table whose ``accumulated`` columns are differences of running totals."""
    units = {v.column: v.table_unit for v in (*LAND_CATALOGUE, *CATALOGUE)}
    acc = set(accumulated)
    return tuple(Bounds(b.column, b.low - DIFFERENCE_TOLERANCE.get(units[b.column], 0.0), b.high)
                 if b.column in acc and b.low == 0.0 else b for b in bounds)
