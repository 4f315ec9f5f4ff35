"""Physical bounds per variable: what a finite value of each column may be, in the table's units.

The bounds are the catalogue's (:mod:`era5etl.core.catalogue`), one definition per variable:
:data:`BOUNDS` those of the table's six columns, :func:`bounds_for` those of any catalogued column.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from era5etl.core.catalogue import CATALOGUE, PACKING_TOLERANCE as PACKING_TOLERANCE
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
_BY_COLUMN: dict[str, Bounds] = {v.column: Bounds(v.column, v.low, v.high) for v in CATALOGUE}


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
