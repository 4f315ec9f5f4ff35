"""One error tree (core.errors): every stage's errors sit on a branch, and the branch decides the answer."""

from __future__ import annotations

import errno
import importlib
import inspect
import pkgutil

import psycopg
import pytest

import era5etl
from era5etl.cli import exit_code
from era5etl.cli.stack import LaunchError
from era5etl.core.answers import answer
from era5etl.core.errors import BadInput, Era5Error, Failure, InputError, Transient
from era5etl.core.months import Month
from era5etl.db.errors import DatabaseError
from era5etl.db.registry import NotOurTable
from era5etl.fetch import cost
from era5etl.fetch.errors import CostLimitError, FetchError, FetchPending, JobLost
from era5etl.load.errors import LoadError
from era5etl.pipeline.errors import PipelineError
from era5etl.read.errors import ReadError
from era5etl.read.places import UnknownPlace
from era5etl.report.model import ReportError, parse_month
from era5etl.serve import http_status
from era5etl.serve.errors import LimitError, NotFoundError, TooSlowError
from era5etl.stage.errors import StageError

# FetchPending is not an error: "not done yet, come back later", a BaseException like Airflow's
# TaskDeferred so that bookkeeping which catches Exception lets it pass (fetch/errors.py).
NOT_ERRORS = {FetchPending}


def raised(call: object, *args: object) -> Exception:
    """The error a real call of the product raises."""
    with pytest.raises(Exception) as caught:
        call(*args)  # type: ignore[operator]
    return caught.value


@pytest.mark.parametrize(("stage", "exc", "code", "status"), [
    ("core", lambda: raised(Month.parse, "2024-13"), 2, 400),
    ("fetch (cost)", lambda: raised(cost.split, 1, 1, 24, 1e9, 1.0), 2, 400),
    ("report", lambda: raised(parse_month, "May"), 2, 400),
    ("stage", lambda: StageError("a damaged GRIB"), 2, 400),
    ("read", lambda: ReadError("no such variable"), 2, 400),
    ("db (names)", lambda: NotOurTable("a user's table"), 2, 400),
    ("serve (not found)", lambda: NotFoundError("no such table"), 2, 404),
    ("read (places)", lambda: UnknownPlace("no place named Atlantis"), 2, 404),
    ("serve (limit)", lambda: LimitError("too many rows", limit=1, requested=2), 2, 422),
    ("fetch", lambda: CostLimitError("2024-05: over the limit", 2.0, 1.0), 1, 503),
    ("fetch (transient)", lambda: JobLost("the CDS does not know the job"), 1, 503),
    ("load", lambda: LoadError("the load died"), 1, 503),
    ("pipeline", lambda: PipelineError("the month is not loaded"), 1, 503),
    ("db", lambda: DatabaseError("unreachable"), 1, 503),
    ("serve (slow)", lambda: TooSlowError("30 s"), 1, 503),
    ("cli (stack)", lambda: LaunchError("the local CDS did not start"), 1, 503),
])
def test_each_stages_error_is_answered_by_its_branch(stage: str, exc: object, code: int, status: int) -> None:
    error = exc()  # type: ignore[operator]
    assert isinstance(error, Era5Error), stage
    assert isinstance(error, BadInput if code == 2 else Failure), stage
    assert exit_code(error) == code and http_status(error) == status, stage
    found = answer(error)
    assert found is not None and (found.exit_code, found.http_status) == (code, status)


def test_callers_that_catch_builtins_still_catch_them() -> None:
    assert issubclass(InputError, ValueError) and issubclass(cost.CostError, ValueError)
    assert issubclass(ReportError, ValueError)
    for kind in (FetchError, LoadError, PipelineError, DatabaseError, TooSlowError):
        assert issubclass(kind, RuntimeError), kind
    # Submitted again, not retried in place: the retry loops retry a Transient only.
    assert not issubclass(JobLost, Transient | FetchError) and issubclass(Transient, Failure)


@pytest.mark.parametrize(("exc", "code"), [
    (psycopg.OperationalError("server closed the connection"), 1),
    (OSError(errno.ENOSPC, "No space left on device"), 1),
    (OSError(errno.EACCES, "Permission denied"), None),
    (KeyError("x"), None),
])
def test_outside_errors_only_a_lost_database_or_full_disk_are_failures(exc: Exception, code: int | None) -> None:
    assert exit_code(exc) == code


def product_exceptions() -> list[type[BaseException]]:
    """Every exception class a module of era5etl defines, found by importing each module."""
    found = []
    for info in pkgutil.walk_packages(era5etl.__path__, "era5etl."):
        if info.name.endswith("__main__"):  # runs the CLI when imported
            continue
        module = importlib.import_module(info.name)
        found += [c for _, c in inspect.getmembers(module, inspect.isclass)
                  if issubclass(c, BaseException) and c.__module__ == info.name]
    return found


def test_every_exception_the_product_defines_derives_from_the_root() -> None:
    classes = product_exceptions()
    assert len(classes) > 20 and StageError in classes and LaunchError in classes
    outside = sorted(f"{c.__module__}.{c.__qualname__}" for c in classes
                     if not issubclass(c, Era5Error) and c not in NOT_ERRORS)
    assert not outside, f"not under era5etl.core.errors.Era5Error: {outside}"
