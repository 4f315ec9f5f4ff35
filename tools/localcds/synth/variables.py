"""The dataset served and its variables: what cfgrib writes for each ERA5 parameter."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from era5etl.core.variables import BY_CDS_NAME

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
    step_type: Literal["instant", "accum"]

    @property
    def data_type(self) -> str:
        # Accumulations come from the short forecasts, instantaneous fields from the analysis.
        return "fc" if self.step_type == "accum" else "an"

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

# The table's registry is the authority on names and step types; a disagreement is a bug to hear of.
for _v in BY_CDS_NAME.values():
    _m = META.get(_v.cds_name)
    if _m is None or _m.short_name != _v.short_name or _m.step_type != _v.step_type:
        raise RuntimeError(f"synth metadata for {_v.cds_name} disagrees with era5etl.core.variables")

# Order of variables inside a file, as cfgrib happened to write them in the real downloads.
FILE_ORDER = ("u10", "v10", "d2m", "t2m", "msl", "sp", "tcc", "tp", "sf")
