"""The catalogue: the ERA5 single-level variables (reanalysis-era5-single-levels) this project knows.

One record per variable, one definition of each fact: its CDS request name, its name in the NetCDF
the CDS delivers (cfgrib's cfVarName), its GRIB identity (ecCodes shortName and ECMWF paramId, as
ecCodes encodes ERA5's GRIB1), the stepType the new CDS splits its NetCDF by, the file's unit, the
table's column and unit with the change between them, and the physical bounds a value may take in
the table's unit (:mod:`era5etl.validate.bounds` reads them from here).

The six the table holds today come first, unchanged; ``python -m era5etl variables`` prints the whole
list. tests/unit/core/test_catalogue.py checks every identity against ecCodes' own tables.

Choices, said once:

* temperatures are stored in degC, pressures in hPa, and water in metres (precipitation, snowfall,
  evaporation, runoff, snow depth and snowmelt, all in metres of water equivalent) in mm;
* accumulated energies (radiation, heat fluxes; J m**-2 over the hour ending at the valid time) are
  stored as they are, in J m-2: a mean flux over the hour is the value / 3600 in W m-2, left to the
  reader rather than assumed here; everything else keeps its file unit too;
* ECMWF's sign convention is kept: fluxes are positive downwards, so evaporation, net thermal
  radiation and the surface heat fluxes are mostly negative and their bounds allow it;
* the step type is what ecCodes decodes from ERA5's GRIB1 and so what the CDS's cfgrib split files
  by: extremes (``mx2t``, ``mn2t``, ``10fg``) are all ``max``, because GRIB1 has one time-range
  indicator (2) for a maximum and a minimum alike, so ``mn2t`` comes in the CDS's ``stepType-max``
  file;
* a fraction's upper bound has the 16-bit packing tolerance, as today's cloud cover (see
  :data:`PACKING_TOLERANCE`).

Left out: ``mean_total_precipitation_rate`` (its names follow the ecCodes release: the new CDS's
NetCDF says ``avg_tprate``, the pinned ecCodes 2.38 ``mtpr``), ``precipitation_type`` (ecCodes
cannot encode its paramId, 260015, in a GRIB1 message with ERA5's local definition: "concept no
match") and ``10m_wind_speed`` (its natural column,
wind_speed_10m, is the wind speed the reads derive from the table's u and v).
"""

from __future__ import annotations

from dataclasses import dataclass

# ERA5 is stored as GRIB with 16-bit packing, which rounds each value to a step of up to 1/65535 of
# the field's range, so a bounded field can read up to half a step past its bound (cloud cover 1.00002).
PACKING_TOLERANCE = 1e-4


@dataclass(frozen=True)
class Variable:
    cds_name: str  # what a CDS request names
    short_name: str  # the variable's name inside the NetCDF the CDS delivers (old and new layouts)
    column: str  # the weather table's column
    step_type: str  # instant, accum, max or avg: the new CDS splits a download into one file per step type
    scale: float  # table value = file value * scale + offset
    offset: float
    param_id: int  # ECMWF paramId: what a GRIB message's parameter is
    grib_name: str  # ecCodes shortName of the GRIB message (2t, 10u, ...; differs from the NetCDF name)
    units: str = ""  # the file's unit, as ecCodes names it (K, m s**-1, J m**-2, ...)
    table_unit: str = ""  # the table's unit (degC, m/s, 0-1, mm, hPa, ...)
    low: float = float("-inf")  # physical bounds in the table's unit
    high: float | None = None  # None: no upper bound
    name: str = ""  # ecCodes' name of the parameter

    def to_table(self, value: float) -> float:
        return value * self.scale + self.offset

    def to_file(self, value: float) -> float:
        return (value - self.offset) / self.scale


FRACTION_HIGH = 1.0 + PACKING_TOLERANCE


def _kelvin(cds: str, short: str, grib: str, pid: int, column: str, step: str, low: float, high: float,
            name: str) -> Variable:
    return Variable(cds, short, column, step, 1.0, -273.15, pid, grib, "K", "degC", low, high, name)


def _pressure(cds: str, short: str, grib: str, pid: int, column: str, low: float, high: float,
              name: str) -> Variable:
    return Variable(cds, short, column, "instant", 0.01, 0.0, pid, grib, "Pa", "hPa", low, high, name)


def _water(cds: str, short: str, grib: str, pid: int, column: str, step: str, units: str, low: float,
           high: float | None, name: str) -> Variable:
    """Metres (of water equivalent) in the file, mm in the table."""
    return Variable(cds, short, column, step, 1000.0, 0.0, pid, grib, units, "mm", low, high, name)


def _fraction(cds: str, short: str, grib: str, pid: int, column: str, name: str) -> Variable:
    return Variable(cds, short, column, "instant", 1.0, 0.0, pid, grib, "(0 - 1)", "0-1", 0.0, FRACTION_HIGH, name)


def _same(cds: str, short: str, grib: str, pid: int, column: str, step: str, units: str, table_unit: str,
          low: float, high: float | None, name: str) -> Variable:
    """Stored in the file's unit."""
    return Variable(cds, short, column, step, 1.0, 0.0, pid, grib, units, table_unit, low, high, name)


_J = "J m**-2"
_MS = "m s**-1"
_MWE = "m of water equivalent"

CATALOGUE: tuple[Variable, ...] = (
    # The table's six, in its column order (the defaults).
    _kelvin("2m_temperature", "t2m", "2t", 167, "temperature_2m", "instant", -95.0, 65.0, "2 metre temperature"),
    _same("10m_u_component_of_wind", "u10", "10u", 165, "zonal_wind_10m", "instant", _MS, "m/s", -120.0, 120.0,
          "10 metre U wind component"),
    _same("10m_v_component_of_wind", "v10", "10v", 166, "meridional_wind_10m", "instant", _MS, "m/s", -120.0, 120.0,
          "10 metre V wind component"),
    _fraction("total_cloud_cover", "tcc", "tcc", 164, "total_cloud_cover", "Total cloud cover"),
    _water("total_precipitation", "tp", "tp", 228, "total_precipitation", "accum", "m", 0.0, None,
           "Total precipitation"),
    _water("snowfall", "sf", "sf", 144, "snowfall", "accum", _MWE, 0.0, None, "Snowfall"),

    # Temperatures, degC.
    _kelvin("2m_dewpoint_temperature", "d2m", "2d", 168, "dewpoint_2m", "instant", -110.0, 45.0,
            "2 metre dewpoint temperature"),
    _kelvin("skin_temperature", "skt", "skt", 235, "skin_temperature", "instant", -110.0, 90.0, "Skin temperature"),
    _kelvin("sea_surface_temperature", "sst", "sst", 34, "sea_surface_temperature", "instant", -5.0, 45.0,
            "Sea surface temperature"),
    _kelvin("maximum_2m_temperature_since_previous_post_processing", "mx2t", "mx2t", 201, "maximum_temperature_2m",
            "max", -95.0, 65.0, "Maximum temperature at 2 metres since previous post-processing"),
    _kelvin("minimum_2m_temperature_since_previous_post_processing", "mn2t", "mn2t", 202, "minimum_temperature_2m",
            "max", -95.0, 65.0, "Minimum temperature at 2 metres since previous post-processing"),
    _kelvin("soil_temperature_level_1", "stl1", "stl1", 139, "soil_temperature_level_1", "instant", -95.0, 85.0,
            "Soil temperature level 1"),
    _kelvin("soil_temperature_level_2", "stl2", "stl2", 170, "soil_temperature_level_2", "instant", -95.0, 85.0,
            "Soil temperature level 2"),
    _kelvin("soil_temperature_level_3", "stl3", "stl3", 183, "soil_temperature_level_3", "instant", -95.0, 85.0,
            "Soil temperature level 3"),
    _kelvin("soil_temperature_level_4", "stl4", "stl4", 236, "soil_temperature_level_4", "instant", -95.0, 85.0,
            "Soil temperature level 4"),

    # Pressures, hPa (surface pressure over the highest ERA5 orography is near 450 hPa).
    _pressure("surface_pressure", "sp", "sp", 134, "surface_pressure", 300.0, 1100.0, "Surface pressure"),
    _pressure("mean_sea_level_pressure", "msl", "msl", 151, "mean_sea_level_pressure", 800.0, 1120.0,
              "Mean sea level pressure"),

    # Wind, m/s.
    _same("100m_u_component_of_wind", "u100", "100u", 228246, "zonal_wind_100m", "instant", _MS, "m/s",
          -150.0, 150.0, "100 metre U wind component"),
    _same("100m_v_component_of_wind", "v100", "100v", 228247, "meridional_wind_100m", "instant", _MS, "m/s",
          -150.0, 150.0, "100 metre V wind component"),
    _same("10m_wind_gust_since_previous_post_processing", "fg10", "10fg", 49, "wind_gust_10m", "max", _MS, "m/s",
          0.0, 150.0, "Maximum 10 metre wind gust since previous post-processing"),
    _same("instantaneous_10m_wind_gust", "i10fg", "i10fg", 228029, "instantaneous_wind_gust_10m", "instant", _MS,
          "m/s", 0.0, 150.0, "Instantaneous 10 metre wind gust"),
    _same("friction_velocity", "zust", "zust", 228003, "friction_velocity", "instant", _MS, "m/s", 0.0, 10.0,
          "Friction velocity"),

    # Water: precipitation, evaporation, runoff, snow; mm (of water equivalent).
    _water("convective_precipitation", "cp", "cp", 143, "convective_precipitation", "accum", "m", 0.0, None,
           "Convective precipitation"),
    _water("large_scale_precipitation", "lsp", "lsp", 142, "large_scale_precipitation", "accum", "m", 0.0, None,
           "Large-scale precipitation"),
    _water("evaporation", "e", "e", 182, "evaporation", "accum", _MWE, -50.0, 20.0, "Evaporation"),
    _water("potential_evaporation", "pev", "pev", 228251, "potential_evaporation", "accum", "m", -100.0, 20.0,
           "Potential evaporation"),
    _water("runoff", "ro", "ro", 205, "runoff", "accum", "m", 0.0, None, "Runoff"),
    _water("surface_runoff", "sro", "sro", 8, "surface_runoff", "accum", "m", 0.0, None, "Surface runoff"),
    _water("sub_surface_runoff", "ssro", "ssro", 9, "sub_surface_runoff", "accum", "m", 0.0, None,
           "Sub-surface runoff"),
    _water("snowmelt", "smlt", "smlt", 45, "snowmelt", "accum", _MWE, 0.0, None, "Snowmelt"),
    # ERA5 caps snow on glaciers at 10 m of water equivalent.
    _water("snow_depth", "sd", "sd", 141, "snow_depth", "instant", _MWE, 0.0, 12000.0, "Snow depth"),
    _same("snow_density", "rsn", "rsn", 33, "snow_density", "instant", "kg m**-3", "kg m-3", 0.0, 1000.0,
          "Snow density"),
    _same("instantaneous_moisture_flux", "ie", "ie", 232, "instantaneous_moisture_flux", "instant",
          "kg m**-2 s**-1", "kg m-2 s-1", -0.01, 0.01, "Instantaneous moisture flux"),

    # Columns of the atmosphere, kg m-2.
    _same("total_column_water_vapour", "tcwv", "tcwv", 137, "total_column_water_vapour", "instant", "kg m**-2",
          "kg m-2", 0.0, 150.0, "Total column vertically-integrated water vapour"),
    _same("total_column_water", "tcw", "tcw", 136, "total_column_water", "instant", "kg m**-2", "kg m-2",
          0.0, 200.0, "Total column water"),
    _same("total_column_ozone", "tco3", "tco3", 206, "total_column_ozone", "instant", "kg m**-2", "kg m-2",
          0.0, 0.03, "Total column ozone"),

    # Clouds and the boundary layer.
    _fraction("low_cloud_cover", "lcc", "lcc", 186, "low_cloud_cover", "Low cloud cover"),
    _fraction("medium_cloud_cover", "mcc", "mcc", 187, "medium_cloud_cover", "Medium cloud cover"),
    _fraction("high_cloud_cover", "hcc", "hcc", 188, "high_cloud_cover", "High cloud cover"),
    _same("boundary_layer_height", "blh", "blh", 159, "boundary_layer_height", "instant", "m", "m", 0.0, 10000.0,
          "Boundary layer height"),
    _same("convective_available_potential_energy", "cape", "cape", 59, "convective_available_potential_energy",
          "instant", "J kg**-1", "J kg-1", 0.0, 15000.0, "Convective available potential energy"),

    # Radiation, J m-2 over the hour (accumulated; W m-2 = value / 3600), positive downwards.
    _same("surface_solar_radiation_downwards", "ssrd", "ssrd", 169, "surface_solar_radiation_downwards", "accum",
          _J, "J m-2", 0.0, 6.0e6, "Surface short-wave (solar) radiation downwards"),
    _same("surface_thermal_radiation_downwards", "strd", "strd", 175, "surface_thermal_radiation_downwards",
          "accum", _J, "J m-2", 0.0, 3.0e6, "Surface long-wave (thermal) radiation downwards"),
    _same("surface_net_solar_radiation", "ssr", "ssr", 176, "surface_net_solar_radiation", "accum", _J, "J m-2",
          0.0, 6.0e6, "Surface net short-wave (solar) radiation"),
    _same("surface_net_thermal_radiation", "str", "str", 177, "surface_net_thermal_radiation", "accum", _J,
          "J m-2", -3.0e6, 1.0e6, "Surface net long-wave (thermal) radiation"),
    _same("toa_incident_solar_radiation", "tisr", "tisr", 212, "toa_incident_solar_radiation", "accum", _J,
          "J m-2", 0.0, 6.0e6, "TOA incident short-wave (solar) radiation"),
    _same("downward_uv_radiation_at_the_surface", "uvb", "uvb", 57, "downward_uv_radiation", "accum", _J, "J m-2",
          0.0, 2.0e6, "Surface downward UV radiation"),

    # Heat fluxes, positive downwards: J m-2 over the hour.
    _same("surface_latent_heat_flux", "slhf", "slhf", 147, "surface_latent_heat_flux", "accum", _J, "J m-2",
          -1.0e7, 3.0e6, "Time-integrated surface latent heat net flux"),
    _same("surface_sensible_heat_flux", "sshf", "sshf", 146, "surface_sensible_heat_flux", "accum", _J, "J m-2",
          -1.0e7, 5.0e6, "Time-integrated surface sensible heat net flux"),

    # Soil water, m3 m-3.
    _same("volumetric_soil_water_layer_1", "swvl1", "swvl1", 39, "soil_water_layer_1", "instant", "m**3 m**-3",
          "m3 m-3", 0.0, 1.0, "Volumetric soil water layer 1"),
    _same("volumetric_soil_water_layer_2", "swvl2", "swvl2", 40, "soil_water_layer_2", "instant", "m**3 m**-3",
          "m3 m-3", 0.0, 1.0, "Volumetric soil water layer 2"),
    _same("volumetric_soil_water_layer_3", "swvl3", "swvl3", 41, "soil_water_layer_3", "instant", "m**3 m**-3",
          "m3 m-3", 0.0, 1.0, "Volumetric soil water layer 3"),
    _same("volumetric_soil_water_layer_4", "swvl4", "swvl4", 42, "soil_water_layer_4", "instant", "m**3 m**-3",
          "m3 m-3", 0.0, 1.0, "Volumetric soil water layer 4"),

    # The surface: ice, land, lakes, roughness, orography.
    _fraction("sea_ice_cover", "siconc", "ci", 31, "sea_ice_cover", "Sea ice area fraction"),
    _fraction("land_sea_mask", "lsm", "lsm", 172, "land_sea_mask", "Land-sea mask"),
    _fraction("lake_cover", "cl", "cl", 26, "lake_cover", "Lake cover"),
    _same("charnock", "chnk", "chnk", 148, "charnock", "instant", "Numeric", "1", 0.0, 1.0, "Charnock"),
    # Surface geopotential (orography * g): below sea level at the Dead Sea, near 6 km in the Himalaya.
    _same("geopotential", "z", "z", 129, "surface_geopotential", "instant", "m**2 s**-2", "m2 s-2",
          -10000.0, 70000.0, "Geopotential"),
)
