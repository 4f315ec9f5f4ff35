"""The dataset served and its variables: what cfgrib writes for each ERA5 parameter."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import eccodes

from era5etl.core.variables import BY_CDS_NAME, CATALOGUE, Variable
from localcds.synth import packing
from localcds.synth.fields import synth_range

DATASET = "reanalysis-era5-single-levels"


@dataclass(frozen=True)
class VarMeta:
    """What cfgrib writes for a parameter; copied from the real files (old CDS for tcc, sf, msl)."""

    cds_name: str
    short_name: str  # name inside the NetCDF (cfgrib's cfVarName)
    grib_short_name: str  # ecCodes shortName, differs for 2t/10u/10v/2d
    param_id: int
    name: str
    units: str
    cf_name: str
    step_type: Literal["instant", "accum", "max", "avg"]

    @property
    def data_type(self) -> str:
        # Accumulations, extremes and means come from the short forecasts, instantaneous fields from the analysis.
        return "an" if self.step_type == "instant" else "fc"

    @property
    def standard_name(self) -> str:
        return self.cf_name


_EXTRA_META = (
    VarMeta("2m_temperature", "t2m", "2t", 167, "2 metre temperature", "K", "unknown", "instant"),
    VarMeta("10m_u_component_of_wind", "u10", "10u", 165, "10 metre U wind component", "m s**-1", "unknown",
            "instant"),
    VarMeta("10m_v_component_of_wind", "v10", "10v", 166, "10 metre V wind component", "m s**-1", "unknown",
            "instant"),
    VarMeta("2m_dewpoint_temperature", "d2m", "2d", 168, "2 metre dewpoint temperature", "K", "unknown",
            "instant"),
    VarMeta("surface_pressure", "sp", "sp", 134, "Surface pressure", "Pa", "surface_air_pressure", "instant"),
    VarMeta("mean_sea_level_pressure", "msl", "msl", 151, "Mean sea level pressure", "Pa",
            "air_pressure_at_mean_sea_level", "instant"),
    VarMeta("total_cloud_cover", "tcc", "tcc", 164, "Total cloud cover", "(0 - 1)", "cloud_area_fraction",
            "instant"),
    VarMeta("total_precipitation", "tp", "tp", 228, "Total precipitation", "m", "unknown", "accum"),
    VarMeta("snowfall", "sf", "sf", 144, "Snowfall", "m of water equivalent",
            "lwe_thickness_of_snowfall_amount", "accum"),
)
META: dict[str, VarMeta] = {m.cds_name: m for m in _EXTRA_META}


def cf_name_of(param_id: int) -> str:
    """cfgrib's cfName for a parameter: ecCodes' own, "unknown" where it has none (as for 2t)."""
    handle = eccodes.codes_grib_new_from_samples("regular_ll_sfc_grib1")
    try:
        eccodes.codes_set(handle, "paramId", param_id)
        return str(eccodes.codes_get(handle, "cfName"))
    finally:
        eccodes.codes_release(handle)


def _from_catalogue(v: Variable) -> VarMeta:
    step_type: Literal["instant", "accum", "max", "avg"]
    for step_type in ("instant", "accum", "max", "avg"):
        if v.step_type == step_type:
            return VarMeta(v.cds_name, v.short_name, v.grib_name, v.param_id, v.name, v.units,
                           cf_name_of(v.param_id), step_type)
    raise RuntimeError(f"{v.cds_name}: no step type {v.step_type!r} in the emulator")


# Every other catalogued variable from the catalogue (the names and units it has from ecCodes).
for _v in CATALOGUE:
    if _v.cds_name not in META:
        META[_v.cds_name] = _from_catalogue(_v)

# The table's registry is the authority on names and step types; a disagreement is a bug to hear of.
for _v in BY_CDS_NAME.values():
    _m = META.get(_v.cds_name)
    if _m is None or _m.short_name != _v.short_name or _m.step_type != _v.step_type:
        raise RuntimeError(f"synth metadata for {_v.cds_name} disagrees with era5etl.core.variables")

# Order of variables inside a file, as cfgrib happened to write them in the real downloads.
# The variables they did not hold follow in catalogue order.
_REAL_ORDER = ("u10", "v10", "d2m", "t2m", "msl", "sp", "tcc", "tp", "sf")
FILE_ORDER: tuple[str, ...] = (*_REAL_ORDER, *(v.short_name for v in CATALOGUE if v.short_name not in _REAL_ORDER))

# A packing lattice for every catalogued variable without a hand-set one: its synthetic range.
for _v in CATALOGUE:
    packing.PACKING_RANGES.setdefault(_v.short_name, synth_range(_v))
