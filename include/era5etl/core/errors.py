"""The error every stage raises for a value a user gave that cannot be used as given."""


class InputError(ValueError):
    """A user-supplied value (month, area, grid, variable, setting) that cannot be used as given."""
