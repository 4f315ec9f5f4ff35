"""The catalogue of ERA5 variables: every identity as ecCodes' own tables give it, the table's six as
they were, names that make valid columns, and bounds that make sense."""

from __future__ import annotations

import keyword
import re
from typing import Any

import pytest

from era5etl.core.catalogue import PACKING_TOLERANCE
from era5etl.core.errors import InputError
from era5etl.core.variables import (
    BY_CDS_NAME,
    BY_PARAM_ID,
    BY_SHORT_NAME,
    CATALOGUE,
    CATALOGUE_BY_SHORT_NAME,
    DATA_COLUMNS,
    DEFAULT_VARIABLES,
    TABLE_BY_SHORT_NAME,
    VARIABLES,
    Variable,
    parse_list,
    resolve,
)
from era5etl.read.columns import ROLLUP_COLUMNS, known
from era5etl.validate.bounds import BOUNDS, Bounds, bounds_for

from ...eccodes_keys import decoded

# The table's six as they were before the catalogue: (cds_name, short_name, column, step_type, scale,
# offset, param_id, grib_name) and their bounds.
SIX = [
    ("2m_temperature", "t2m", "temperature_2m", "instant", 1.0, -273.15, 167, "2t"),
    ("10m_u_component_of_wind", "u10", "zonal_wind_10m", "instant", 1.0, 0.0, 165, "10u"),
    ("10m_v_component_of_wind", "v10", "meridional_wind_10m", "instant", 1.0, 0.0, 166, "10v"),
    ("total_cloud_cover", "tcc", "total_cloud_cover", "instant", 1.0, 0.0, 164, "tcc"),
    ("total_precipitation", "tp", "total_precipitation", "accum", 1000.0, 0.0, 228, "tp"),
    ("snowfall", "sf", "snowfall", "accum", 1000.0, 0.0, 144, "sf"),
]
SIX_BOUNDS = [
    Bounds("temperature_2m", -95.0, 65.0),
    Bounds("zonal_wind_10m", -120.0, 120.0),
    Bounds("meridional_wind_10m", -120.0, 120.0),
    Bounds("total_cloud_cover", 0.0, 1.0 + 1e-4),
    Bounds("total_precipitation", 0.0, None),
    Bounds("snowfall", 0.0, None),
]

_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]*$")


def _grib1(var: Variable) -> dict[str, Any]:
    """What ecCodes makes of the variable's paramId in an ERA5 GRIB1 message (as the CDS delivers)."""
    return decoded("regular_ll_sfc_grib1", (("marsClass", "ea"), ("marsStream", "oper"),
                                            ("generatingProcessIdentifier", 145), ("paramId", var.param_id),
                                            ("typeOfLevel", "surface"), ("level", 0)), var.step_type)


def test_size() -> None:
    assert 40 <= len(CATALOGUE) <= 60


@pytest.mark.parametrize("var", CATALOGUE, ids=lambda v: v.cds_name)
def test_identity_is_ecCodes(var: Variable) -> None:
    got = _grib1(var)
    assert got["edition"] == 1
    assert got["paramId"] == var.param_id
    assert got["shortName"] == var.grib_name
    assert got["units"] == var.units
    assert got["name"] == var.name
    assert got["cfVarName"] == var.short_name  # what cfgrib, and so the CDS's NetCDF, names it
    assert got["stepType"] == var.step_type  # what the CDS's NetCDF split files by


def test_names_and_columns_unique_and_valid() -> None:
    for attr in ("cds_name", "short_name", "grib_name", "param_id", "column"):
        values = [getattr(v, attr) for v in CATALOGUE]
        assert len(values) == len(set(values)), attr
    for v in CATALOGUE:
        assert _IDENTIFIER.match(v.column) and len(v.column) <= 63 and not keyword.iskeyword(v.column), v.column
        assert v.step_type in ("instant", "accum", "max", "avg"), v
        assert v.scale > 0 and v.units and v.table_unit and v.name
    # A future column must not collide with what a read derives or the rollups name.
    taken = {*known("hour"), *known("day"), *ROLLUP_COLUMNS} - set(DATA_COLUMNS)
    assert not {v.column for v in CATALOGUE} & taken


def test_bounds() -> None:
    for v in CATALOGUE:
        assert v.high is None or v.low < v.high, v
        if v.table_unit == "0-1":
            assert (v.low, v.high) == (0.0, 1.0 + PACKING_TOLERANCE), v
        if v.step_type == "accum" and v.table_unit == "mm" and v.cds_name not in ("evaporation",
                                                                                  "potential_evaporation"):
            assert v.low == 0.0, v
    # Negative in ECMWF's convention (positive downwards): the bounds must allow it.
    for name in ("evaporation", "potential_evaporation", "surface_net_thermal_radiation",
                 "surface_latent_heat_flux", "surface_sensible_heat_flux"):
        assert BY_CDS_NAME[name].low < 0
    # The temperature conversions are one rule.
    for v in CATALOGUE:
        if v.units == "K" and v.table_unit == "degC":
            assert (v.scale, v.offset) == (1.0, -273.15)


def test_the_six_unchanged() -> None:
    got = [(v.cds_name, v.short_name, v.column, v.step_type, v.scale, v.offset, v.param_id, v.grib_name)
           for v in VARIABLES]
    assert got == SIX
    assert CATALOGUE[:6] == VARIABLES
    assert tuple(s[2] for s in SIX) == DATA_COLUMNS
    assert tuple(s[0] for s in SIX) == DEFAULT_VARIABLES
    assert list(BOUNDS) == SIX_BOUNDS
    # The stager's map stays the table's six: a d2m in a download stays ignored.
    assert BY_SHORT_NAME is TABLE_BY_SHORT_NAME
    assert set(BY_SHORT_NAME) == {s[1] for s in SIX}


def test_maps_cover_the_catalogue() -> None:
    assert set(BY_CDS_NAME.values()) == set(CATALOGUE)
    assert set(CATALOGUE_BY_SHORT_NAME.values()) == set(CATALOGUE)
    assert set(BY_PARAM_ID.values()) == set(CATALOGUE)
    assert BY_PARAM_ID[168].short_name == "d2m"


@pytest.mark.parametrize("var", CATALOGUE, ids=lambda v: v.cds_name)
def test_resolve_every_name(var: Variable) -> None:
    assert resolve([var.cds_name]) == [var]
    assert resolve([var.short_name]) == [var]


def test_resolve_orders_the_six_first_then_the_catalogue() -> None:
    got = parse_list("swvl1, sea_surface_temperature,tp,d2m,2m_temperature")
    assert [v.column for v in got] == ["temperature_2m", "total_precipitation", "dewpoint_2m",
                                       "sea_surface_temperature", "soil_water_layer_1"]
    assert parse_list(list(reversed(DEFAULT_VARIABLES))) == list(VARIABLES)
    assert resolve(v.short_name for v in reversed(CATALOGUE)) == list(CATALOGUE)


def test_unknown_name_says_where_the_list_is() -> None:
    with pytest.raises(InputError) as caught:
        parse_list("2m_temperature,precipitation_type,not_a_variable")
    text = str(caught.value)
    assert "unknown variable" in text and "'precipitation_type'" in text and "'not_a_variable'" in text
    assert "python -m era5etl variables" in text
    with pytest.raises(InputError, match="no variables"):
        parse_list(" , ")


def test_bounds_for_any_column() -> None:
    got = bounds_for(["dewpoint_2m", "temperature_2m", "evaporation"])
    assert got == (Bounds("dewpoint_2m", -110.0, 45.0), Bounds("temperature_2m", -95.0, 65.0),
                   Bounds("evaporation", -50.0, 20.0))
    assert len(bounds_for(v.column for v in CATALOGUE)) == len(CATALOGUE)
    with pytest.raises(InputError, match="python -m era5etl variables"):
        bounds_for(["no_such_column"])


def test_conversion_round_trip() -> None:
    for v in CATALOGUE:
        assert v.to_file(v.to_table(1.5)) == pytest.approx(1.5)
    assert BY_CDS_NAME["surface_pressure"].to_table(101325.0) == pytest.approx(1013.25)
