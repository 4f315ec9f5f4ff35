"""What a read refuses: a place, an hour, a range or a variable the table cannot answer for."""

from __future__ import annotations

from era5etl.core.errors import InputError


class ReadError(InputError):
    """A read asked for something the table does not hold; the message says what it does hold
    (the loaded area's bounds, the loaded range, the known variables). An InputError: exit status 2
    on the CLI, a 400 on the HTTP API."""
