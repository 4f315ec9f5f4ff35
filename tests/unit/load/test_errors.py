"""The load's errors (load.errors) on the error tree: a chunk not written is a failure (exit status 1,
HTTP 503; a RuntimeError for callers that catch one), a year with nothing to copy is bad input."""

from __future__ import annotations

from era5etl.core.answers import answer
from era5etl.core.errors import BadInput, Failure, InputError
from era5etl.load.errors import LoadError, NothingToCopy


def test_a_load_error_is_a_failure() -> None:
    assert issubclass(LoadError, Failure) and issubclass(LoadError, RuntimeError)
    found = answer(LoadError("the load died"))
    assert found is not None and (found.exit_code, found.http_status) == (1, 503)


def test_nothing_to_copy_is_bad_input() -> None:
    assert issubclass(NothingToCopy, InputError) and issubclass(NothingToCopy, BadInput)
    found = answer(NothingToCopy("weather holds no rows of 1900"))
    assert found is not None and found.exit_code == 2
