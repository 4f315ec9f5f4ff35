"""The ERA5 variables the table holds: CDS request name, short name in files, column, unit change."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from era5etl.core.errors import InputError


@dataclass(frozen=True)
class Variable:
    cds_name: str  # what a CDS request names
    short_name: str  # the variable's name inside the NetCDF the CDS delivers (old and new layouts)
    column: str  # the weather table's column
    step_type: str  # "instant" or "accum": the new CDS splits a download into one file per step type
    scale: float  # table value = file value * scale + offset
    offset: float
    param_id: int  # ECMWF paramId: what a GRIB message's parameter is
    grib_name: str  # ecCodes shortName of the GRIB message (2t, 10u, ...; differs from the NetCDF name)


VARIABLES: tuple[Variable, ...] = (
    Variable("2m_temperature", "t2m", "temperature_2m", "instant", 1.0, -273.15, 167, "2t"),
    Variable("10m_u_component_of_wind", "u10", "zonal_wind_10m", "instant", 1.0, 0.0, 165, "10u"),
    Variable("10m_v_component_of_wind", "v10", "meridional_wind_10m", "instant", 1.0, 0.0, 166, "10v"),
    Variable("total_cloud_cover", "tcc", "total_cloud_cover", "instant", 1.0, 0.0, 164, "tcc"),
    Variable("total_precipitation", "tp", "total_precipitation", "accum", 1000.0, 0.0, 228, "tp"),
    Variable("snowfall", "sf", "snowfall", "accum", 1000.0, 0.0, 144, "sf"),
)

BY_CDS_NAME = {v.cds_name: v for v in VARIABLES}
BY_SHORT_NAME = {v.short_name: v for v in VARIABLES}
BY_PARAM_ID = {v.param_id: v for v in VARIABLES}
DATA_COLUMNS: tuple[str, ...] = tuple(v.column for v in VARIABLES)
DEFAULT_VARIABLES: tuple[str, ...] = tuple(v.cds_name for v in VARIABLES)


def resolve(names: Iterable[str]) -> list[Variable]:
    """Variables by CDS name or short name, in the table's column order; unknown names are an error."""
    wanted: set[Variable] = set()
    unknown = []
    for name in names:
        var = BY_CDS_NAME.get(name) or BY_SHORT_NAME.get(name)
        if var is None:
            unknown.append(name)
        else:
            wanted.add(var)
    if unknown:
        raise InputError(
            f"unknown variable(s) {', '.join(map(repr, unknown))}; the table holds "
            + ", ".join(v.cds_name for v in VARIABLES)
        )
    if not wanted:
        raise InputError("no variables requested")
    return [v for v in VARIABLES if v in wanted]


def parse_list(text: str | Sequence[str]) -> list[Variable]:
    names = text.split(",") if isinstance(text, str) else list(text)
    return resolve(n.strip() for n in names if n.strip())
