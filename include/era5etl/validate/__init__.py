"""Validate: a loaded month checked against what it must hold, with Great Expectations."""

from era5etl.validate.validation import (
    Validation as Validation,
)
from era5etl.validate.validation import (
    area_predicates as area_predicates,
)
from era5etl.validate.validation import (
    validate_month as validate_month,
)
