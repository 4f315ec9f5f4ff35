"""The rollups' contract: which aggregates a table's daily and monthly rollups keep of each column.

A weather table ``<table>`` has two rollups, ``<table>_daily`` and ``<table>_monthly``: one row per
grid point and UTC day (month) with ``hours``, the hourly rows aggregated, and for each data column
of the table its aggregates, named ``<column>_<aggregate>``:

* an accumulation (precipitation, snowfall, radiation, runoff, ...: step type ``accum``) its ``sum``;
* a fraction (cloud cover, sea-ice, lake and land cover: unit 0-1) its ``mean``;
* the wind's components (10 m and 100 m) nothing of their own: the wind speed derived from them per
  hour, sqrt(u^2 + v^2), is kept as ``wind_speed_10m`` (``wind_speed_100m``) min, max and mean;
* every other column (instantaneous values, and the maxima and minima since the last post-processing)
  its ``min``, ``max`` and ``mean``.

For the table's six that is nine values a row (what the rollups held when they were continuous
aggregates): every aggregate costs bytes in every row of a rollup that, at global scale, holds a
million rows a day.

The rule follows the catalogue (:mod:`era5etl.core.catalogue`), so a column added to a table (any
catalogued variable) is rolled up too. Every aggregate skips NULL hours; a mean and a sum are
computed in float8 and stored as float4, as the table holds values. This module only names things:
the loader computes the rollups (:mod:`era5etl.load.rollup`), the schema makes their columns
(:mod:`era5etl.db.rollups`), the reads and the validation read them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from era5etl.core.catalogue import CATALOGUE
from era5etl.core.catalogue_land import LAND_CATALOGUE

AGGREGATES: tuple[str, ...] = ("min", "max", "mean", "sum")
WIND_SPEED = "wind_speed_10m"
# The components a wind speed is derived from, and the speed they make.
WIND_COMPONENTS: dict[str, tuple[str, str]] = {WIND_SPEED: ("zonal_wind_10m", "meridional_wind_10m"),
                                               "wind_speed_100m": ("zonal_wind_100m", "meridional_wind_100m")}
_COMPONENTS = frozenset(c for pair in WIND_COMPONENTS.values() for c in pair)
# ERA5's and ERA5-Land's columns (a column means one thing whichever dataset's table has it).
_ACCUMULATED = frozenset(v.column for v in (*CATALOGUE, *LAND_CATALOGUE) if v.step_type == "accum")
_FRACTIONS = frozenset(v.column for v in (*CATALOGUE, *LAND_CATALOGUE) if v.table_unit == "0-1")
# Key columns of both rollups, in their order: what every row has before its aggregates. No
# longitude: the point's id fixes it on the table's lattice (``LatLonGrid``: the id's remainder by
# the row's length is the longitude's index), and it cost 1.1 bytes a row in the columnstore, 6% of
# a rollup (docs/benchmarks.md). The latitude stays: an area's series groups and weights by it.
# (Rollups made by earlier versions have a longitude column too, left NULL in the rows written since.)
COORDINATES: tuple[str, ...] = ("latitude",)  # the float4 key columns (what the COPY encoder writes)
KEY_COLUMNS: tuple[str, ...] = ("bucket", "location_id", *COORDINATES, "hours")


def aggregates_of(column: str) -> tuple[str, ...]:
    """The aggregates a rollup keeps of ``column`` (a table's data column, or the derived wind speed)."""
    if column in _COMPONENTS:
        return ()
    if column in _ACCUMULATED:
        return ("sum",)
    if column in _FRACTIONS:
        return ("mean",)
    return ("min", "max", "mean")


def rolled_up(data_columns: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Each variable the rollups of a table with ``data_columns`` aggregate, with its aggregates, in
    the table's column order; the wind speed after its components when the table has both."""
    columns = list(dict.fromkeys(data_columns))
    out: dict[str, tuple[str, ...]] = {}
    for column in columns:
        if aggregates_of(column):
            out[column] = aggregates_of(column)
        for derived, (u, v) in WIND_COMPONENTS.items():
            if column == v and u in columns:
                out[derived] = aggregates_of(derived)
    return out


def value_columns(data_columns: Iterable[str]) -> tuple[str, ...]:
    """The rollups' value columns for a table with ``data_columns``: ``<variable>_<aggregate>``."""
    return tuple(f"{variable}_{agg}" for variable, aggs in rolled_up(data_columns).items() for agg in aggs)


def split_value_column(name: str) -> tuple[str, str]:
    """(variable, aggregate) of a rollup value column name."""
    variable, _, agg = name.rpartition("_")
    if not variable or agg not in AGGREGATES:
        raise ValueError(f"{name!r} is not a rollup value column (<variable>_<{'|'.join(AGGREGATES)}>)")
    return variable, agg


def sources(variable: str) -> Sequence[str]:
    """The table columns a rolled-up variable is computed from (the variable itself, or a derived
    one's components)."""
    return WIND_COMPONENTS.get(variable, (variable,))
