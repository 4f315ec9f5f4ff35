"""The staging's error: a download that cannot be staged (a BadInput, exit status 2)."""

from __future__ import annotations

from era5etl.core.errors import BadInput


class StageError(BadInput):
    """A download that cannot be staged; the message names the file and what is wrong with it."""
