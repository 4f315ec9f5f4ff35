"""The database package's one error: what cannot be reached or provisioned, and how to fix it."""

from era5etl.core.errors import Failure


class DatabaseError(Failure, RuntimeError):
    """The database cannot be reached or provisioned; the message says which and how to fix it."""
