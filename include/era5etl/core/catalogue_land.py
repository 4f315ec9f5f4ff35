"""The ERA5-Land catalogue (``reanalysis-era5-land``): the variables of the 0.1 degree land reanalysis.

Where ERA5-Land's variable is ERA5's (same paramId, same NetCDF and GRIB names, same unit), the
single-level :class:`~era5etl.core.catalogue.Variable` record is reused as it is, so its column, unit
change and bounds are the same in a land table as in a single-level one (``temperature_2m`` in degC,
``total_precipitation`` in mm, radiation in J m-2 over the hour). Two differ in the CDS only:

* ``snow_depth_water_equivalent`` is ERA5's ``snow_depth`` (sd, paramId 141, m of water equivalent);
  the record is ERA5's with ERA5-Land's request name;
* ``snow_cover`` (snowc, paramId 260038, %) exists only in ERA5-Land, and only as GRIB edition 2
  (ecCodes cannot put 260038 in a GRIB1 message): the CDS delivers it in messages of their own, with
  longitudes 0..360 where the GRIB1 ones are -180..180.

Accumulated variables (``step_type`` accum) arrive as running totals from 00 UTC
(``Dataset.accumulation == "since_00utc"``); the stager turns them into hourly amounts
(:mod:`era5etl.stage.land`), so their bounds are the hourly ones of ERA5.

tests/unit/core/test_catalogue_land.py checks each identity against ecCodes' own tables.
"""

from __future__ import annotations

from dataclasses import replace

from era5etl.core.catalogue import CATALOGUE, Variable

_ERA5 = {v.cds_name: v for v in CATALOGUE}

# ERA5's own records, in the order the CDS form lists them for ERA5-Land.
_SHARED = (
    "2m_temperature", "2m_dewpoint_temperature", "skin_temperature", "surface_pressure",
    "10m_u_component_of_wind", "10m_v_component_of_wind", "total_precipitation", "snowfall",
    "soil_temperature_level_1", "soil_temperature_level_2", "soil_temperature_level_3", "soil_temperature_level_4",
    "volumetric_soil_water_layer_1", "volumetric_soil_water_layer_2", "volumetric_soil_water_layer_3",
    "volumetric_soil_water_layer_4",
    "evaporation", "potential_evaporation", "runoff", "surface_runoff", "sub_surface_runoff", "snowmelt",
    "snow_density",
    "surface_solar_radiation_downwards", "surface_thermal_radiation_downwards", "surface_net_solar_radiation",
    "surface_net_thermal_radiation", "surface_latent_heat_flux", "surface_sensible_heat_flux",
)

LAND_CATALOGUE: tuple[Variable, ...] = (
    *(_ERA5[name] for name in _SHARED),
    replace(_ERA5["snow_depth"], cds_name="snow_depth_water_equivalent"),
    # Snow cover, 0..100 %: GRIB2 only (paramId 260038 has no GRIB1 encoding).
    Variable("snow_cover", "snowc", "snow_cover", "instant", 1.0, 0.0, 260038, "snowc", "%", "%", 0.0,
             100.0 * (1.0 + 1e-4), "Snow cover"),
    Variable("leaf_area_index_high_vegetation", "lai_hv", "leaf_area_index_high_vegetation", "instant", 1.0, 0.0,
             67, "lai_hv", "m**2 m**-2", "m2 m-2", 0.0, 15.0, "Leaf area index, high vegetation"),
    Variable("leaf_area_index_low_vegetation", "lai_lv", "leaf_area_index_low_vegetation", "instant", 1.0, 0.0,
             66, "lai_lv", "m**2 m**-2", "m2 m-2", 0.0, 15.0, "Leaf area index, low vegetation"),
    Variable("forecast_albedo", "fal", "forecast_albedo", "instant", 1.0, 0.0, 243, "fal", "(0 - 1)", "0-1", 0.0,
             1.0 + 1e-4, "Forecast albedo"),
    Variable("skin_reservoir_content", "src", "skin_reservoir_content", "instant", 1.0, 0.0, 198, "src",
             "m of water equivalent", "m", 0.0, 1.0, "Skin reservoir content"),
)

# The ERA5-Land defaults: what a request names when a user names none.
LAND_DEFAULT_VARIABLES: tuple[str, ...] = (
    "2m_temperature", "2m_dewpoint_temperature", "surface_pressure", "total_precipitation",
    "surface_solar_radiation_downwards", "10m_u_component_of_wind", "10m_v_component_of_wind",
)

if len({v.cds_name for v in LAND_CATALOGUE}) != len(LAND_CATALOGUE) or \
        len({v.param_id for v in LAND_CATALOGUE}) != len(LAND_CATALOGUE):
    raise RuntimeError("the ERA5-Land catalogue names a variable twice")
