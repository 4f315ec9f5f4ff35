"""One helper (core.answers) turns the product's errors into the CLI's exit status and the HTTP status."""

from __future__ import annotations

import errno

import psycopg
import pytest

from era5etl.cli import exit_code
from era5etl.core.answers import answer
from era5etl.core.errors import InputError
from era5etl.db.errors import DatabaseError
from era5etl.db.registry import NotOurTable
from era5etl.fetch.errors import FetchError
from era5etl.load.errors import LoadError
from era5etl.read.errors import ReadError
from era5etl.serve import http_status
from era5etl.serve.errors import LimitError, NotFoundError, TooSlowError
from era5etl.stage.errors import StageError


@pytest.mark.parametrize(("exc", "code", "status"), [
    (InputError("bad month"), 2, 400),
    (NotOurTable("a user's table"), 2, 400),
    (ReadError("no such variable"), 2, 400),
    (StageError("a damaged GRIB"), 2, 400),
    (NotFoundError("no such table"), 2, 404),
    (LimitError("too many rows", limit=1, requested=2), 2, 422),
    (DatabaseError("unreachable"), 1, 503),
    (FetchError("the CDS refused"), 1, 503),
    (TooSlowError("30 s"), 1, 503),
    (LoadError("the load died"), 1, 503),
    (psycopg.OperationalError("server closed the connection"), 1, 503),
    (OSError(errno.ENOSPC, "No space left on device"), 1, 503),
])
def test_the_products_errors_are_answered_alike(exc: Exception, code: int, status: int) -> None:
    found = answer(exc)
    assert found is not None and (found.exit_code, found.http_status) == (code, status)
    assert exit_code(exc) == code and http_status(exc) == status


@pytest.mark.parametrize("exc", [KeyError("x"), OverflowError("date value out of range"), OSError(errno.EACCES, "x")])
def test_a_bug_is_not_dressed_up(exc: Exception) -> None:
    assert answer(exc) is None and exit_code(exc) is None and http_status(exc) == 500
