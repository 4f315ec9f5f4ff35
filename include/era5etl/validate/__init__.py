"""Validate: a loaded month checked against what it must hold, with Great Expectations."""

from era5etl.validate.lattice import area_predicates as area_predicates
from era5etl.validate.month import (
    Validation as Validation,
    validate_month as validate_month,
)
