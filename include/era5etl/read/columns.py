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

from era5etl.core.catalogue import CATALOGUE
from era5etl.core.catalogue_land import LAND_CATALOGUE
from era5etl.core.catalogue_pl import PL_CATALOGUE
from era5etl.core.rollups import AGGREGATES, KEY_COLUMNS as ROLLUP_KEYS, WIND_SPEED, rolled_up, value_columns
from era5etl.core.variables import DATA_COLUMNS
from era5etl.read.errors import ReadError

Step = Literal["hour", "day", "month"]
STEPS: tuple[Step, ...] = ("hour", "day", "month")
STEP_NAMES: dict[str, str] = {"hour": "hourly", "day": "daily", "month": "monthly"}

# WIND_SPEED (wind_speed_10m) is derived at read time from the hourly components: sqrt(u^2 + v^2).
HOURLY_COLUMNS: tuple[str, ...] = DATA_COLUMNS
HOURLY_DERIVED: tuple[str, ...] = (WIND_SPEED,)

# Each variable the rollups of a table of the six aggregate, and the aggregates it keeps (column
# <variable>_<aggregate>; era5etl.core.rollups says which, for any column a table has).
ROLLED_UP: dict[str, tuple[str, ...]] = rolled_up(DATA_COLUMNS)
ROLLUP_VALUES: tuple[str, ...] = value_columns(DATA_COLUMNS)
# The rollups' columns for a table of the six, in order (sql/030_rollups.sql and db.rollups make them).
ROLLUP_COLUMNS: tuple[str, ...] = (*ROLLUP_KEYS, *ROLLUP_VALUES)

# The unit of every column a read can answer with: each catalogued variable's column in the table's
# unit (era5etl.core.catalogue), a rollup's column that of its variable; JSON answers carry them.
_UNIT_OF = {**{v.column: v.table_unit for v in (*LAND_CATALOGUE, *CATALOGUE, *PL_CATALOGUE)}, WIND_SPEED: "m/s",
            "wind_speed_100m": "m/s", "latitude": "degrees_north", "longitude": "degrees_east", "hours": "hours",
            "level": "hPa"}
UNITS: MappingProxyType[str, str] = MappingProxyType(
    {**_UNIT_OF, **{f"{variable}_{agg}": unit for variable, unit in _UNIT_OF.items() for agg in AGGREGATES}})


def known(step: Step, data: Sequence[str] = DATA_COLUMNS) -> tuple[str, ...]:
    """Every name a series at ``step`` accepts from a table whose data columns are ``data`` (default
    the six; ``read.table_data_columns`` gives a table's own)."""
    rolled = rolled_up(data)
    if step == "hour":
        derived = tuple(v for v in HOURLY_DERIVED if v in rolled)
        return (*data, *derived)
    return (*value_columns(data), "hours", *rolled)


def default_columns(step: Step, data: Sequence[str] = DATA_COLUMNS) -> tuple[str, ...]:
    """What a series answers when no variable is named: the table's columns, or every rollup value."""
    return tuple(data) if step == "hour" else value_columns(data)


def check_step(step: str) -> Step:
    for s in STEPS:
        if step == s:
            return s
    raise ReadError(f"step {step!r} is not one of {', '.join(STEPS)}")


def resolve(step: Step, variables: Sequence[str] | None, data: Sequence[str] = DATA_COLUMNS) -> list[str]:
    """The columns a series answers with, in the order asked: a rollup variable's name becomes its
    aggregates; an unknown name is a ReadError naming the known ones (of a table with ``data``)."""
    if variables is None:
        return list(default_columns(step, data))
    names = [v.strip() for v in variables if v.strip()]
    accepted = known(step, data)
    if not names:
        raise ReadError(f"no variable named; at step={step} the known ones are {', '.join(accepted)}")
    unknown = [n for n in names if n not in accepted]
    if unknown:
        raise ReadError(f"unknown variable(s) {', '.join(map(repr, unknown))} at step={step}; "
                        f"the known ones are {', '.join(accepted)}")
    rolled = rolled_up(data)
    out: list[str] = []
    for n in names:
        if step != "hour" and n in rolled:
            out.extend(f"{n}_{agg}" for agg in rolled[n])
        else:
            out.append(n)
    return list(dict.fromkeys(out))
