"""Areas, grids and grid points: where the rows are.

Conventions follow the "trillion rows of weather data" benchmark so that figures compare:
longitude in (-180, 180], and ``location_id = lat_index * 1440 + lon_index + 1`` on the global
0.25 degree grid, lat_index counted from -90 and lon_index from -179.75, so a grid point keeps
its id whatever area or grid was requested.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation

import numpy as np
import numpy.typing as npt

from era5etl.core.errors import InputError
from era5etl.core.months import Month

GLOBAL_STEP = 0.25
GLOBAL_LON_COUNT = 1440
GLOBAL_LAT_COUNT = 721


def normalize_longitude(lon: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Map any longitude onto (-180, 180], the table's convention."""
    a = np.asarray(lon, dtype=np.float64)
    out = np.mod(a + 180.0, 360.0) - 180.0
    # -180 and 180 are the same meridian; the id scheme numbers it as 180.
    return np.where(out <= -180.0, out + 360.0, out)


def location_ids(lat: npt.ArrayLike, lon: npt.ArrayLike) -> npt.NDArray[np.int32]:
    """Global 0.25 degree grid ids for points (broadcast); points off that grid are an error."""
    lat_a = np.asarray(lat, dtype=np.float64)
    lon_a = normalize_longitude(lon)
    lat_idx_f = (lat_a + 90.0) / GLOBAL_STEP
    lon_idx_f = (lon_a + 179.75) / GLOBAL_STEP
    lat_idx = np.rint(lat_idx_f)
    lon_idx = np.rint(lon_idx_f)
    if np.any(np.abs(lat_idx_f - lat_idx) > 1e-3) or np.any(np.abs(lon_idx_f - lon_idx) > 1e-3):
        raise InputError("grid points are not on the global 0.25 degree grid; location_id needs a grid "
                         "whose step is a multiple of 0.25 and whose points are on that lattice")
    if np.any((lat_idx < 0) | (lat_idx >= GLOBAL_LAT_COUNT)):
        raise InputError("latitude outside -90..90")
    return (lat_idx * GLOBAL_LON_COUNT + lon_idx + 1).astype(np.int32)


def _parse_decimal(text: str, what: str, whole: str) -> Decimal:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise InputError(f"area {whole!r}: {what} {text!r} is not a number") from None
    if not value.is_finite():
        raise InputError(f"area {whole!r}: {what} {text!r} is not a finite number")
    return value


@dataclass(frozen=True)
class Grid:
    """Grid step in degrees (the CDS ``grid`` keyword: [step, step])."""

    step: Decimal = Decimal("0.25")

    @classmethod
    def parse(cls, text: str | float, native: Decimal | float | None = Decimal("0.25")) -> Grid:
        """A grid step, a multiple of ``native``, the dataset's native step (ERA5's 0.25 degrees by
        default, ERA5-Land's 0.1); None: a multiple of either (the settings, checked against the
        dataset once it is known)."""
        raw = str(text).split("/")[0]
        try:
            step = Decimal(raw.strip())
        except InvalidOperation:
            raise InputError(f"grid {text!r} is not a number of degrees (for example 0.25)") from None
        if not step.is_finite() or step <= 0:
            raise InputError(f"grid {text!r} must be a positive number of degrees")
        natives = [Decimal("0.25"), Decimal("0.1")] if native is None else [Decimal(str(native))]
        if not any(cls(step).is_multiple_of(cls(n)) for n in natives):
            raise InputError(f"grid {text!r}: the step must be a multiple of "
                             f"{' or '.join(f'{n:f}' for n in natives)} degrees (the dataset's native grid)")
        return cls(step)

    def is_multiple_of(self, native: Grid) -> bool:
        return (self.step / native.step) % 1 == 0

    @classmethod
    def native(cls, step: float) -> Grid:
        """The grid of a dataset's native step (``LatLonGrid.step``, a float: 0.25, 0.1)."""
        return cls(Decimal(str(step)))

    def __str__(self) -> str:
        return f"{self.step.normalize():f}"

    @property
    def cds(self) -> list[str]:
        return [str(self), str(self)]


# The first column east of the antimeridian on ERA5's 0.25 degree lattice: a box's west edge at -180.
ERA5_FIRST_COLUMN = Decimal("-179.75")


@dataclass(frozen=True)
class Area:
    """A box as the CDS takes it: north/west/south/east, degrees, edges inclusive.

    West and east are kept in (-180, 180]; a box across the antimeridian is refused rather than
    silently split, because the replace-on-reload predicate assumes west <= east.
    """

    north: Decimal
    west: Decimal
    south: Decimal
    east: Decimal

    @classmethod
    def parse(cls, text: str) -> Area:
        parts = text.split("/")
        if len(parts) != 4:
            raise InputError(f"area {text!r} is not of the form N/W/S/E (for example 50/5/45/10)")
        north, west, south, east = (
            _parse_decimal(p, w, text) for p, w in zip(parts, ("north", "west", "south", "east"), strict=True)
        )
        if not (-90 <= south <= north <= 90):
            raise InputError(f"area {text!r}: need -90 <= south <= north <= 90")
        if not (-180 <= west <= 360 and -180 <= east <= 360):
            raise InputError(f"area {text!r}: west and east must be within -180..360")
        if east - west >= 360:
            west, east = ERA5_FIRST_COLUMN, Decimal("180")
        else:
            # West -180 starts the box at the antimeridian; the -180 meridian itself is 180 (the east
            # edge in this convention), so the box's first column is the next one on the lattice.
            west = ERA5_FIRST_COLUMN if west == -180 else _norm_lon(west)
            east = _norm_lon(east)
            if west > east:
                raise InputError(
                    f"area {text!r} crosses the antimeridian; load it as two areas, one each side of 180"
                )
        return cls(north, west, south, east)

    def on_lattice(self, step: Decimal | float) -> Area:
        """The box as a lattice finer than ERA5's sees it. A box from the antimeridian keeps ERA5's
        first column, -179.75, as its west edge; on a lattice of ``step`` < 0.25 degrees (ERA5-Land's
        0.1) that edge would drop the columns west of it (-179.9 and -179.8), so the box starts at
        the lattice's first column, -180 + step, instead. Other boxes, and every box on a step of
        0.25 or more (whose first column is the same either way), are unchanged."""
        s = Decimal(str(step))
        if self.west != ERA5_FIRST_COLUMN or s >= Decimal("0.25"):
            return self
        return replace(self, west=Decimal(-180) + s)

    def __str__(self) -> str:
        return "/".join(f"{v.normalize():f}" for v in (self.north, self.west, self.south, self.east))

    @property
    def cds(self) -> list[float]:
        return [float(self.north), float(self.west), float(self.south), float(self.east)]

    def latitudes(self, grid: Grid) -> list[float]:
        """Grid latitudes inside the box, north first as the CDS delivers them."""
        return [float(v) for v in lattice(self.south, self.north, grid.step)][::-1]

    def longitudes(self, grid: Grid) -> list[float]:
        return [float(v) for v in lattice(self.west, self.east, grid.step)]

    def points(self, grid: Grid) -> int:
        return len(self.latitudes(grid)) * len(self.longitudes(grid))


def _norm_lon(v: Decimal) -> Decimal:
    v = (v + 180) % 360 - 180 if v > 180 else v
    return Decimal(180) if v == -180 else v


def lattice(low: Decimal, high: Decimal, step: Decimal) -> list[Decimal]:
    """Points k*step (the lattice anchored at 0, as the CDS grids are) within [low, high], edges included."""
    first = step * (low / step).to_integral_value(rounding="ROUND_CEILING")
    out = []
    v = first
    while v <= high:
        out.append(v)
        v += step
    return out


def area_slug(area: Area | str) -> str:
    """The area as one path or URL segment (``46/7/45/8`` -> ``46_7_45_8``): the validator's folders
    and the page's links; unique because an Area is normalised when parsed."""
    return str(area).replace("/", "_")


def expected_rows(month: Month, area: Area, grid: Grid) -> int:
    return month.hours * area.points(grid)
