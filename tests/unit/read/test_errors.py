"""What a read refuses (read.errors): a ReadError is the input's fault, so exit 2 on the CLI and 400
over HTTP, and callers that catch ValueError keep catching it. Raised here by a real read argument check."""

from __future__ import annotations

import pytest

from era5etl.core.errors import BadInput, Failure, InputError
from era5etl.read.errors import ReadError
from era5etl.read.where import where


def test_a_read_error_is_bad_input() -> None:
    assert issubclass(ReadError, InputError) and issubclass(ReadError, BadInput)
    assert issubclass(ReadError, ValueError) and not issubclass(ReadError, Failure)


def test_a_read_refusal_says_what_to_give() -> None:
    with pytest.raises(ReadError) as err:
        where(10.0, None, None, None)
    assert "latitude and its longitude" in str(err.value)
