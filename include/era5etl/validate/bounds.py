"""Physical bounds per variable: what a finite value of each column may be, in the table's units."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bounds:
    column: str
    low: float
    high: float | None  # None: no upper bound


# Physical bounds, in the table's units (degC, m/s, fraction, mm). NULL is allowed: the loader writes
# NULL where the source had no value (its NaN), so a NaN or infinity in the table is always a defect.
# ERA5 is stored as GRIB with 16-bit packing, which rounds each value to a step of up to 1/65535 of
# the field's range, so a bounded field can read up to half a step past its bound (cloud cover 1.00002).
PACKING_TOLERANCE = 1e-4
BOUNDS: tuple[Bounds, ...] = (
    Bounds("temperature_2m", -95.0, 65.0),
    Bounds("zonal_wind_10m", -120.0, 120.0),
    Bounds("meridional_wind_10m", -120.0, 120.0),
    Bounds("total_cloud_cover", 0.0, 1.0 + PACKING_TOLERANCE),
    Bounds("total_precipitation", 0.0, None),
    Bounds("snowfall", 0.0, None),
)
