"""What a read may ask for at each step, and the unit of every column it can answer with.

A series is hourly (the hypertable's own columns, and the wind speed derived from its components),
daily or monthly (the rollups' columns: ``<table>_daily``, ``<table>_monthly``, whose contract is
:data:`ROLLUP_COLUMNS`). At a daily or monthly step a variable's name stands for all its rollup
columns (``temperature_2m`` -> min, max, mean).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Literal

from era5etl.core.variables import DATA_COLUMNS
from era5etl.read.errors import ReadError

Step = Literal["hour", "day", "month"]
STEPS: tuple[Step, ...] = ("hour", "day", "month")
STEP_NAMES: dict[str, str] = {"hour": "hourly", "day": "daily", "month": "monthly"}

# Derived at read time from the hourly components: sqrt(u^2 + v^2).
WIND_SPEED = "wind_speed_10m"
HOURLY_COLUMNS: tuple[str, ...] = DATA_COLUMNS
HOURLY_DERIVED: tuple[str, ...] = (WIND_SPEED,)

# Each variable a rollup aggregates, and the aggregates it keeps (column <variable>_<aggregate>).
ROLLED_UP: dict[str, tuple[str, ...]] = {
    "temperature_2m": ("min", "max", "mean"),
    WIND_SPEED: ("min", "max", "mean"),
    "total_precipitation": ("sum",),
    "snowfall": ("sum",),
    "total_cloud_cover": ("mean",),
}
ROLLUP_VALUES: tuple[str, ...] = tuple(f"{variable}_{agg}" for variable, aggs in ROLLED_UP.items() for agg in aggs)
# The rollups' columns, in order: the contract the HTTP API reads (sql/rollup_select.sql makes them).
ROLLUP_COLUMNS: tuple[str, ...] = ("bucket", "location_id", "latitude", "longitude", "hours", *ROLLUP_VALUES)

_UNIT_OF = {
    "temperature_2m": "degC",
    "zonal_wind_10m": "m/s",
    "meridional_wind_10m": "m/s",
    WIND_SPEED: "m/s",
    "total_cloud_cover": "0-1",
    "total_precipitation": "mm",
    "snowfall": "mm",
    "latitude": "degrees_north",
    "longitude": "degrees_east",
    "hours": "hours",
}
# The unit of every column a read answers with, a rollup's column that of its variable (the table's
# units: docs/table.md); JSON answers carry them.
UNITS: MappingProxyType[str, str] = MappingProxyType(
    {**_UNIT_OF, **{f"{variable}_{agg}": _UNIT_OF[variable] for variable, aggs in ROLLED_UP.items() for agg in aggs}})


def known(step: Step) -> tuple[str, ...]:
    """Every name a series at ``step`` accepts."""
    if step == "hour":
        return (*HOURLY_COLUMNS, *HOURLY_DERIVED)
    return (*ROLLUP_VALUES, "hours", *ROLLED_UP)


def default_columns(step: Step) -> tuple[str, ...]:
    """What a series answers when no variable is named: the table's six columns, or every rollup value."""
    return HOURLY_COLUMNS if step == "hour" else ROLLUP_VALUES


def check_step(step: str) -> Step:
    for s in STEPS:
        if step == s:
            return s
    raise ReadError(f"step {step!r} is not one of {', '.join(STEPS)}")


def resolve(step: Step, variables: Sequence[str] | None) -> list[str]:
    """The columns a series answers with, in the order asked: a rollup variable's name becomes its
    aggregates; an unknown name is a ReadError naming the known ones."""
    if variables is None:
        return list(default_columns(step))
    names = [v.strip() for v in variables if v.strip()]
    if not names:
        raise ReadError(f"no variable named; at step={step} the known ones are {', '.join(known(step))}")
    unknown = [n for n in names if n not in known(step)]
    if unknown:
        raise ReadError(f"unknown variable(s) {', '.join(map(repr, unknown))} at step={step}; "
                        f"the known ones are {', '.join(known(step))}")
    out: list[str] = []
    for n in names:
        if step != "hour" and n in ROLLED_UP:
            out.extend(f"{n}_{agg}" for agg in ROLLED_UP[n])
        else:
            out.append(n)
    return list(dict.fromkeys(out))
