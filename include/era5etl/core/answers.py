"""The one place the product's own errors become what a user is told: an exit status and an HTTP status.

The CLI (``era5etl.cli.main``) and the HTTP reads (``era5etl.serve.http_status``, the plugin) both ask
:func:`answer`, which goes by the error's branch of ``core.errors``: bad input (a value the user gave, a
file that cannot be loaded, a table the pipeline does not own) is exit status 2 and the class's HTTP
status (400; 404 for a table or place that is not there, 422 for a request over a limit); a failure the
message explains (the database unreachable or restarted, the CDS, a full disk) is exit status 1 and HTTP
503. None: not one of the product's errors - a bug, whose traceback is shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from era5etl.core.errors import BadInput, Failure, is_failure


@dataclass(frozen=True)
class Answer:
    exit_code: int
    http_status: int


FAILURE = Answer(1, Failure.http_status)


def answer(exc: BaseException) -> Answer | None:
    """What ``exc`` is answered with, or None when it is not one of the product's errors."""
    if isinstance(exc, BadInput):
        return Answer(2, exc.http_status)
    if is_failure(exc):
        return FAILURE
    return None
