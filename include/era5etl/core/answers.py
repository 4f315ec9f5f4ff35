"""The one place the product's own errors become what a user is told: an exit status and an HTTP status.

The CLI (``era5etl.cli.main``) and the HTTP reads (``era5etl.serve.http_status``, the plugin) both ask
:func:`answer`. Bad input (a value the user gave, a file that cannot be loaded, a table the pipeline
does not own) is exit status 2 and HTTP 400 (404 for a table that is not there, 422 for a request over
a limit); a failure the message explains (the database unreachable or restarted, the CDS, a full disk)
is exit status 1 and HTTP 503. None: not one of the product's errors - a bug, whose traceback is shown.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass


@dataclass(frozen=True)
class Answer:
    exit_code: int
    http_status: int


BAD_INPUT = Answer(2, 400)
NOT_FOUND = Answer(2, 404)
TOO_LARGE = Answer(2, 422)
FAILURE = Answer(1, 503)


def answer(exc: BaseException) -> Answer | None:
    """What ``exc`` is answered with, or None when it is not one of the product's errors."""
    from era5etl.core.errors import InputError
    from era5etl.db.errors import DatabaseError
    from era5etl.fetch.errors import FetchError
    from era5etl.serve.errors import LimitError, NotFoundError, TooSlowError

    if isinstance(exc, LimitError):
        return TOO_LARGE
    from era5etl.read.places import UnknownPlace

    if isinstance(exc, NotFoundError | UnknownPlace):
        return NOT_FOUND
    if isinstance(exc, InputError):
        return BAD_INPUT
    if isinstance(exc, DatabaseError | FetchError | TooSlowError):
        return FAILURE
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return FAILURE  # a full disk: the message names the file; what was half-written is removed
    # Imported here: these modules pull in xarray, Great Expectations and psycopg, which `db up` never needs.
    import psycopg

    from era5etl.load.results import LoadError
    from era5etl.stage.block import StageError

    if isinstance(exc, StageError):
        return BAD_INPUT
    # A database that went away mid-run: each chunk is whole or untouched, so the message and a rerun
    # are what the user needs, not a traceback.
    from era5etl.pipeline.steps import PipelineError

    if isinstance(exc, PipelineError | LoadError | psycopg.OperationalError):
        return FAILURE
    return None
