"""Validate: a loaded month checked against what it must hold, with Great Expectations."""

from era5etl.validate.validation import (
    Validation as Validation,
    area_predicates as area_predicates,
    validate_month as validate_month,
)
