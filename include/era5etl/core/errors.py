"""The product's one error tree: what the user is told follows from the branch an error is on.

    Era5Error
    ├── BadInput          the input is wrong: exit status 2, HTTP 400 (``http_status`` refines it)
    │   ├── InputError    a value the user gave (month, area, variable, setting, table name); a ValueError
    │   └── StageError    a file that cannot be loaded (stage/block.py)
    └── Failure           something failed that the message explains: exit status 1, HTTP 503
        └── Transient     a fault worth another attempt (retried where it happens)

Each stage keeps its errors in its own module (fetch/errors.py, read/errors.py, db/errors.py, ...), each
class under one branch; where callers catch a built-in (``ValueError``, ``RuntimeError``) the class keeps
that base too. ``core.answers`` and ``cli.exit_code`` decide by branch alone.
"""

from __future__ import annotations

import errno
import sys


class Era5Error(Exception):
    """The root of every error the product defines."""

    #: The HTTP status the read server answers with (``core.answers``).
    http_status = 500


class BadInput(Era5Error):
    """The input is wrong: the user changes the command, not the system (exit status 2)."""

    http_status = 400


class Failure(Era5Error):
    """Something failed (the database, the CDS, a check of loaded data); the message says what (exit status 1)."""

    http_status = 503


class Transient(Failure):
    """A fault worth another attempt; ``hint`` is the service's own wait (Retry-After), if any."""

    def __init__(self, message: str, hint: float | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class InputError(BadInput, ValueError):
    """A user-supplied value (month, area, grid, variable, setting) that cannot be used as given."""


def is_failure(exc: BaseException) -> bool:
    """A failure the message explains: one of ours, a database connection lost, or a full disk.

    The two outside ones are recognised here rather than wrapped where they happen: a database that goes
    away mid-run leaves each chunk whole or untouched, and a full disk's message names the file.
    """
    if isinstance(exc, Failure):
        return True
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    # psycopg is looked up, not imported: an error of it cannot exist unless something imported it.
    psycopg = sys.modules.get("psycopg")
    return psycopg is not None and isinstance(exc, psycopg.OperationalError)


def first_line(exc: BaseException) -> str:
    """What a message says first: libpq's run over several lines, and the first says what happened."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
