"""The load's errors: a chunk that could not be written (a Failure) and a year with nothing to copy
(an InputError)."""

from __future__ import annotations

from era5etl.core.errors import Failure, InputError


class LoadError(Failure, RuntimeError):
    """A chunk could not be written; chunks committed before it stay, the failed one is untouched."""


class NothingToCopy(InputError):
    """A year the table has no rows in."""
