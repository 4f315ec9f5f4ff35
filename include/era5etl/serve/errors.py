"""What a refused read is, and the HTTP status each kind of refusal is answered with.

Every refusal is an :class:`~era5etl.core.errors.InputError` (a value the user gave that cannot be
used as given), so the CLI and the plugin treat them alike; the two kinds below only choose a
status: a request the server will not answer at this size, and a table that is not there.
"""

from __future__ import annotations

from era5etl.core.answers import answer
from era5etl.core.errors import Failure, InputError


class LimitError(InputError):
    """The request would answer with more than a response may hold; the message says the limit and how
    to narrow the request."""

    http_status = 422

    def __init__(self, message: str, *, limit: int, requested: int) -> None:
        super().__init__(message)
        self.limit = limit
        self.requested = requested


class NotFoundError(InputError):
    """The table asked for does not exist, or holds nothing yet."""

    http_status = 404


class TooSlowError(Failure, RuntimeError):
    """The database did not answer within the time a request may take."""


def http_status(exc: Exception) -> int:
    """400 bad input, 404 no such table or place, 422 over a limit, 503 database unreachable or too slow, else 500
    (``core.answers``, which the CLI's exit statuses come from too)."""
    found = answer(exc)
    return 500 if found is None else found.http_status
