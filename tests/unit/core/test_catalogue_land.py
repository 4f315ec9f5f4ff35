"""The ERA5-Land catalogue: every identity as ecCodes' own tables give it in an ERA5-Land message
(GRIB1 with class l5, as the CDS delivers; GRIB2 for snow cover, which has no GRIB1 encoding), ERA5's
records reused where the variable is ERA5's, and names that make valid columns."""

from __future__ import annotations

import keyword
import re
from typing import Any

import pytest

from era5etl.core.catalogue import CATALOGUE, Variable
from era5etl.core.catalogue_land import LAND_CATALOGUE, LAND_DEFAULT_VARIABLES
from era5etl.core.datasets import LAND

from ...eccodes_keys import decoded

_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]*$")
GRIB2_ONLY = {260038}


def _message(var: Variable) -> dict[str, Any]:
    edition = 2 if var.param_id in GRIB2_ONLY else 1
    # GRIB2's sample has no ECMWF local section to carry a MARS class; the parameter is what matters.
    keys = (("marsClass", "l5"), ("marsStream", "oper")) if edition == 1 else ()
    return decoded(f"regular_ll_sfc_grib{edition}", (*keys, ("paramId", var.param_id)), var.step_type)


@pytest.mark.parametrize("var", LAND_CATALOGUE, ids=lambda v: v.cds_name)
def test_identity_is_ecCodes(var: Variable) -> None:
    got = _message(var)
    assert got["edition"] == (2 if var.param_id in GRIB2_ONLY else 1)
    assert got["paramId"] == var.param_id
    assert got["shortName"] == var.grib_name
    assert got["units"] == var.units
    assert got["name"] == var.name
    assert got["cfVarName"] == var.short_name
    assert got["stepType"] == var.step_type


def test_era5s_records_reused() -> None:
    era5 = {v.param_id: v for v in CATALOGUE}
    shared = [v for v in LAND_CATALOGUE if v.param_id in era5]
    assert len(shared) >= 25
    for v in shared:
        if v.cds_name == "snow_depth_water_equivalent":  # ERA5's snow_depth, ERA5-Land's request name
            assert v.column == era5[v.param_id].column == "snow_depth"
        else:
            assert v is era5[v.param_id], v.cds_name
    for name in ("temperature_2m", "dewpoint_2m", "surface_pressure", "total_precipitation",
                 "surface_solar_radiation_downwards", "zonal_wind_10m", "snowmelt", "runoff", "evaporation",
                 "snow_density", "soil_temperature_level_1", "skin_temperature", "surface_net_solar_radiation",
                 "surface_thermal_radiation_downwards", "snow_cover"):
        assert name in {v.column for v in LAND_CATALOGUE}, name


def test_names_unique_valid_and_defaults_catalogued() -> None:
    for attr in ("cds_name", "short_name", "grib_name", "param_id", "column"):
        values = [getattr(v, attr) for v in LAND_CATALOGUE]
        assert len(values) == len(set(values)), attr
    for v in LAND_CATALOGUE:
        assert _IDENTIFIER.match(v.column) and not keyword.iskeyword(v.column)
        assert v.high is None or v.low < v.high
    assert set(LAND_DEFAULT_VARIABLES) <= {v.cds_name for v in LAND_CATALOGUE}
    assert LAND.catalogue is LAND_CATALOGUE
