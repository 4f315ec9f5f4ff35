"""The pressure-level catalogue and dataset: every identity as ecCodes' own tables give it for an ERA5
GRIB1 message on an isobaric level, column names that neither repeat nor read as a single-level
column, bounds that make sense, and the levels a request may ask for."""

from __future__ import annotations

import re
from typing import Any

import pytest

from era5etl.core.catalogue import CATALOGUE
from era5etl.core.catalogue_pl import PL_CATALOGUE, PRESSURE_LEVELS_HPA
from era5etl.core.datasets import DATASETS, PRESSURE_LEVELS, SINGLE_LEVELS, by_name
from era5etl.core.errors import InputError
from era5etl.core.variables import Variable

from ...eccodes_keys import KEYS, decoded

_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]*$")
# paramIds named by the issue (ECMWF's parameter database).
EXPECTED_IDS = {"t": 130, "u": 131, "v": 132, "z": 129, "q": 133, "r": 157, "w": 135, "vo": 138, "d": 155,
                "cc": 248, "o3": 203}


def _grib1(var: Variable, level: int) -> dict[str, Any]:
    """What ecCodes makes of the variable's paramId in an ERA5 GRIB1 message on ``level`` hPa."""
    return decoded("regular_ll_pl_grib1", (("marsClass", "ea"), ("marsStream", "oper"),
                                           ("generatingProcessIdentifier", 145), ("paramId", var.param_id),
                                           ("typeOfLevel", "isobaricInhPa"), ("level", level)),
                   wanted=(*KEYS, "typeOfLevel", "level"))


@pytest.mark.parametrize("var", PL_CATALOGUE, ids=lambda v: v.cds_name)
def test_identity_is_eccodes(var: Variable) -> None:
    got = _grib1(var, 500)
    assert got["edition"] == 1
    assert got["paramId"] == var.param_id
    assert got["shortName"] == var.grib_name
    assert got["cfVarName"] == var.short_name  # the new CDS's NetCDF names variables by cfVarName
    assert got["units"] == var.units
    assert got["name"] == var.name
    assert got["stepType"] == var.step_type == "instant"
    assert (got["typeOfLevel"], got["level"]) == ("isobaricInhPa", 500)


def test_issue_param_ids() -> None:
    by_short = {v.short_name: v for v in PL_CATALOGUE}
    assert {s: by_short[s].param_id for s in EXPECTED_IDS} == EXPECTED_IDS


def test_columns_are_identifiers_and_not_single_level_ones() -> None:
    single = {v.column for v in CATALOGUE}
    for var in PL_CATALOGUE:
        assert _IDENTIFIER.match(var.column), var.column
        assert var.column not in single, var.column
        assert var.column not in {"time", "location_id", "latitude", "longitude", "level"}


@pytest.mark.parametrize("var", PL_CATALOGUE, ids=lambda v: v.cds_name)
def test_bounds(var: Variable) -> None:
    assert var.high is not None and var.low < var.high
    # The bounds hold a value typical of the free troposphere, converted from the file's unit.
    typical = {"t": 250.0, "u": 10.0, "v": -5.0, "z": 55000.0, "r": 60.0, "q": 0.002, "w": 0.1, "vo": 1e-5,
               "d": -1e-5, "cc": 0.5, "o3": 5e-6, "clwc": 1e-4, "ciwc": 1e-5, "crwc": 1e-5, "cswc": 1e-5}
    assert var.low <= var.to_table(typical[var.short_name]) <= var.high


def test_temperature_in_degc() -> None:
    t = PRESSURE_LEVELS.variable("t")
    assert t is not None and t.to_table(273.15) == 0.0 and t.table_unit == "degC"


def test_dataset_record() -> None:
    assert DATASETS["pressure-levels"] is PRESSURE_LEVELS is by_name(" Pressure-Levels ")
    assert PRESSURE_LEVELS.collection == "reanalysis-era5-pressure-levels"
    assert PRESSURE_LEVELS.request_keys == {"product_type": ["reanalysis"]}
    assert len(PRESSURE_LEVELS.levels) == 37 == len(set(PRESSURE_LEVELS.levels))
    assert PRESSURE_LEVELS.levels == tuple(sorted(PRESSURE_LEVELS_HPA)) and PRESSURE_LEVELS.levels[-1] == 1000
    assert PRESSURE_LEVELS.has_levels and not SINGLE_LEVELS.has_levels
    assert PRESSURE_LEVELS.default_variables == ("temperature", "u_component_of_wind", "v_component_of_wind",
                                                 "geopotential", "relative_humidity", "specific_humidity")


def test_parse_levels() -> None:
    assert PRESSURE_LEVELS.parse_levels("850, 500,1000hPa") == (500, 850, 1000)
    assert PRESSURE_LEVELS.parse_levels([500, "500"]) == (500,)
    assert PRESSURE_LEVELS.parse_levels(None) == PRESSURE_LEVELS.levels
    assert SINGLE_LEVELS.parse_levels("") == ()
    for bad in ("600.5", "1013", "high"):
        with pytest.raises(InputError, match="level"):
            PRESSURE_LEVELS.parse_levels(bad)
    with pytest.raises(InputError, match="no pressure levels"):
        SINGLE_LEVELS.parse_levels("500")


def test_unknown_dataset() -> None:
    with pytest.raises(InputError, match="pressure-levels"):
        by_name("model-levels")
