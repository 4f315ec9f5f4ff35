"""The catalogue of ERA5 on pressure levels (reanalysis-era5-pressure-levels): the variables its
table can hold, in the :class:`~era5etl.core.catalogue.Variable` record of the single-level catalogue.

One record per variable: its CDS request name, its name in the NetCDF the CDS delivers (cfgrib's
cfVarName), its GRIB identity (ecCodes shortName and ECMWF paramId of an ERA5 GRIB1 message on
``isobaricInhPa``), the file's unit and the table's, and bounds in the table's unit valid on every
level from 1000 to 1 hPa. tests/unit/core/test_catalogue_pl.py checks each identity against ecCodes.

Choices, said once:

* the columns name the quantity without a height (``temperature``, ``zonal_wind``, ...): the level
  is a column of its own (``level``, hPa), so they cannot be mistaken for the single-level table's
  ``temperature_2m`` or ``zonal_wind_10m``; the geopotential of a level is ``geopotential`` (the
  single-level catalogue's is ``surface_geopotential``);
* temperature is stored in degC like the single levels'; everything else keeps the file's unit
  (geopotential in m2 s-2 as delivered: divide by 9.80665 for a geopotential height in m);
* relative humidity is with respect to ice below -23 degC (ECMWF's definition), so it exceeds 100 %
  in ice-supersaturated air; its upper bound allows that;
* mixing ratios and humidities may read a packing step below zero (16-bit packing of a field whose
  minimum is 0), so their lower bounds allow a hair below zero.

Every variable here is instantaneous (an analysis): the new CDS delivers one ``stepType-instant``
file.
"""

from __future__ import annotations

from era5etl.core.catalogue import FRACTION_HIGH, Variable

_KGKG = "kg kg**-1"


def _pl(cds: str, short: str, pid: int, column: str, units: str, table_unit: str, low: float,
        high: float | None, name: str, scale: float = 1.0, offset: float = 0.0) -> Variable:
    # On pressure levels the NetCDF name and ecCodes' shortName are the same.
    return Variable(cds, short, column, "instant", scale, offset, pid, short, units, table_unit, low, high, name)


PL_CATALOGUE: tuple[Variable, ...] = (
    # The defaults, in the table's column order.
    _pl("temperature", "t", 130, "temperature", "K", "degC", -130.0, 70.0, "Temperature", offset=-273.15),
    _pl("u_component_of_wind", "u", 131, "zonal_wind", "m s**-1", "m/s", -250.0, 250.0, "U component of wind"),
    _pl("v_component_of_wind", "v", 132, "meridional_wind", "m s**-1", "m/s", -250.0, 250.0,
        "V component of wind"),
    # Below the ground (1000 hPa under a deep low or high ground) the geopotential is extrapolated and
    # negative; at 1 hPa it is near 48 km * g.
    _pl("geopotential", "z", 129, "geopotential", "m**2 s**-2", "m2 s-2", -20000.0, 600000.0, "Geopotential"),
    _pl("relative_humidity", "r", 157, "relative_humidity", "%", "%", -1.0, 200.0, "Relative humidity"),
    _pl("specific_humidity", "q", 133, "specific_humidity", _KGKG, "kg kg-1", -1e-4, 0.06, "Specific humidity"),

    _pl("vertical_velocity", "w", 135, "vertical_velocity", "Pa s**-1", "Pa s-1", -50.0, 50.0, "Vertical velocity"),
    _pl("vorticity", "vo", 138, "vorticity", "s**-1", "s-1", -0.05, 0.05, "Vorticity (relative)"),
    _pl("divergence", "d", 155, "divergence", "s**-1", "s-1", -0.05, 0.05, "Divergence"),
    _pl("fraction_of_cloud_cover", "cc", 248, "fraction_of_cloud_cover", "(0 - 1)", "0-1", -1e-4, FRACTION_HIGH,
        "Fraction of cloud cover"),
    _pl("ozone_mass_mixing_ratio", "o3", 203, "ozone_mass_mixing_ratio", _KGKG, "kg kg-1", -1e-6, 5e-5,
        "Ozone mass mixing ratio"),
    _pl("specific_cloud_liquid_water_content", "clwc", 246, "cloud_liquid_water_content", _KGKG, "kg kg-1",
        -1e-4, 0.01, "Specific cloud liquid water content"),
    _pl("specific_cloud_ice_water_content", "ciwc", 247, "cloud_ice_water_content", _KGKG, "kg kg-1",
        -1e-4, 0.01, "Specific cloud ice water content"),
    _pl("specific_rain_water_content", "crwc", 75, "rain_water_content", _KGKG, "kg kg-1", -1e-4, 0.02,
        "Specific rain water content"),
    _pl("specific_snow_water_content", "cswc", 76, "snow_water_content", _KGKG, "kg kg-1", -1e-4, 0.02,
        "Specific snow water content"),
)

# The 37 levels of ERA5 on pressure levels, hPa, top to bottom.
PRESSURE_LEVELS_HPA: tuple[int, ...] = (
    1, 2, 3, 5, 7, 10, 20, 30, 50, 70, 100, 125, 150, 175, 200, 225, 250, 300, 350, 400, 450, 500, 550, 600,
    650, 700, 750, 775, 800, 825, 850, 875, 900, 925, 950, 975, 1000)

if len({v.cds_name for v in PL_CATALOGUE}) != len(PL_CATALOGUE) or len({v.column for v in PL_CATALOGUE}) != len(
        PL_CATALOGUE):
    raise RuntimeError("the pressure-level catalogue names a variable twice")
