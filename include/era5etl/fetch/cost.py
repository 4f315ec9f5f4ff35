"""What a CDS request costs, what the service allows, and how a month is split to stay under it.

The CDS refuses a request whose estimated cost exceeds the dataset's limit, before it is queued:
HTTP 403 with the title "cost limits exceeded" and the detail "Your request is too large, please
reduce your selection." (the same status as a missing licence, so only the title tells them apart).
Its adaptors count *fields*: the product of the number of values of every request key except the
area (cads-adaptors ``estimate_number_of_fields``), weighted per format. Since 2025 a NetCDF
request is allowed fewer fields than a GRIB one, because the conversion to NetCDF is what costs.

The model here, shared by the client (to split before submitting) and the local CDS (to refuse as
the real one does):

* ``fields`` = variables x years x months x days x hours (x product types x levels);
* ``cost`` = fields x weight, with weight 1 for GRIB and ``1 + area fraction`` for NetCDF: the
  retrieval costs per field whatever the area, the conversion grows with the grid points;
* limits per format, :data:`DEFAULT_LIMITS`, configurable because the CDS publishes none.

Nothing here talks to the network or imports Airflow.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from era5etl.core.errors import InputError

# Fields a request may hold. GRIB: the long-standing ERA5 figure. NetCDF: lower, as on the CDS
# since 2025; the service does not publish its number, so both are settings (ERA5_CDS_COST_LIMIT).
DEFAULT_LIMITS: dict[str, float] = {"grib": 120_000.0, "netcdf": 60_000.0}

# Keys whose number of values multiplies the cost; the area and grid only shape each field.
COUNTED_KEYS = ("product_type", "variable", "year", "month", "day", "time", "pressure_level")


class CostError(InputError):
    """A request that no split can bring under the limit (a single field-hour already exceeds it)."""


@dataclass(frozen=True)
class Cost:
    fields: int
    weight: float
    data_format: str

    @property
    def value(self) -> float:
        return self.fields * self.weight

    def limit(self, limits: Mapping[str, float] | None = None) -> float:
        return limit_for(self.data_format, limits)

    def __str__(self) -> str:
        return f"{self.value:,.0f} ({self.fields:,} fields x {self.weight:.3f} for {self.data_format})"


def limit_for(data_format: str, limits: Mapping[str, float] | None = None) -> float:
    table = DEFAULT_LIMITS if limits is None else {**DEFAULT_LIMITS, **limits}
    return table["netcdf" if data_format.startswith("netcdf") else "grib"]


def _count(value: Any) -> int:
    if value is None:
        return 1
    if isinstance(value, str):
        # The legacy API joined values with "/"; the CDS still splits such strings.
        return max(1, len([p for p in value.split("/") if p.strip()]))
    if isinstance(value, (list, tuple, set)):
        return max(1, len(value))
    return 1


def _decimal(value: Any, default: str) -> Decimal:
    try:
        return Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        return Decimal(default)


def _lattice_count(low: Decimal, high: Decimal, step: Decimal) -> int:
    if high < low:
        return 0
    first = (low / step).to_integral_value(rounding="ROUND_CEILING")
    last = (high / step).to_integral_value(rounding="ROUND_FLOOR")
    return max(0, int(last - first) + 1)


def area_fraction(area: Sequence[Any] | None, grid: Sequence[Any] | None) -> float:
    """Share of the global grid's points inside ``area`` (north, west, south, east); 1 when global."""
    step_lon = _decimal(grid[0], "0.25") if grid else Decimal("0.25")
    step_lat = _decimal(grid[1] if grid and len(grid) > 1 else step_lon, "0.25")
    if step_lon <= 0 or step_lat <= 0:
        return 1.0
    global_points = _lattice_count(Decimal(-90), Decimal(90), step_lat) * int(Decimal(360) / step_lon)
    if not area or len(area) != 4:
        return 1.0
    north, west, south, east = (_decimal(v, "0") for v in area)
    if east < west:
        east += 360
    lats = _lattice_count(south, north, step_lat)
    lons = min(_lattice_count(west, east, step_lon), int(Decimal(360) / step_lon))
    return min(1.0, lats * lons / global_points) if global_points else 1.0


def estimate(request: Mapping[str, Any]) -> Cost:
    """The cost of one CDS request (the ``inputs`` of an execution), as the service weighs it."""
    fields = math.prod(_count(request.get(key)) for key in COUNTED_KEYS if key in request)
    data_format = str(request.get("data_format", request.get("format", "grib"))).strip().lower()
    if data_format.startswith("netcdf"):
        weight = 1.0 + area_fraction(request.get("area"), request.get("grid"))
        data_format = "netcdf"
    else:
        weight, data_format = 1.0, "grib"
    return Cost(fields=fields, weight=weight, data_format=data_format)


# -------------------------------------------------------------------------------------------------
# Splitting


@dataclass(frozen=True)
class Split:
    """Which variables and days one part of a month asks for (indices into the month's lists)."""

    variables: tuple[int, ...]
    days: tuple[int, ...]


def _chunks(items: Sequence[int], parts: int) -> list[tuple[int, ...]]:
    """``items`` in ``parts`` contiguous runs whose sizes differ by at most one."""
    size, extra = divmod(len(items), parts)
    out, start = [], 0
    for i in range(parts):
        stop = start + size + (1 if i < extra else 0)
        out.append(tuple(items[start:stop]))
        start = stop
    return [c for c in out if c]


def split(n_variables: int, n_days: int, hours: int, weight: float, limit: float,
          groups: Sequence[int] | None = None) -> list[Split]:
    """Parts of a (variables x days x hours) request, each costing at most ``limit``, as few as can be.

    Days are split first (one request per run of days keeps every variable in one file, which the
    stager reads fastest); only when one day of all variables is already over the limit are the
    variables split too. ``groups`` (a group number per variable, e.g. its step type) keeps
    variables of one group together where the sizes allow, so a part stays a single NetCDF file
    rather than a ZIP of two.
    """
    if n_variables < 1 or n_days < 1 or hours < 1:
        raise ValueError("a request needs at least one variable, day and hour")
    per_var_day = hours * weight
    if per_var_day > limit:
        raise CostError(
            f"one variable for one day costs {per_var_day:,.0f}, over the limit of {limit:,.0f}: "
            "no split by days or variables fits; raise the cost limit"
        )
    max_vars = int(limit // per_var_day)
    var_groups = _chunks(list(range(n_variables)), math.ceil(n_variables / max_vars))
    if groups is not None and len(var_groups) > 1:
        by_group: dict[int, list[int]] = {}
        for i in range(n_variables):
            by_group.setdefault(groups[i], []).append(i)
        apart = [c for members in by_group.values() for c in _chunks(members, math.ceil(len(members) / max_vars))]
        if len(apart) <= len(var_groups):  # only when keeping groups apart costs no extra request
            var_groups = apart
    out: list[Split] = []
    for group in var_groups:
        max_days = int(limit // (len(group) * per_var_day))
        for days in _chunks(list(range(n_days)), math.ceil(n_days / max_days)):
            out.append(Split(variables=tuple(sorted(group)), days=days))
    return out
