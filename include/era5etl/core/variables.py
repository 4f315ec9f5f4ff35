"""The ERA5 variables: the catalogue of those the project knows, and the six the table holds.

:data:`CATALOGUE` (:mod:`era5etl.core.catalogue`) lists every known ERA5 single-level variable, the
table's six first. :data:`VARIABLES`, :data:`DATA_COLUMNS` and :data:`DEFAULT_VARIABLES` are the
table's six columns, in its column order.

``BY_CDS_NAME`` and ``BY_PARAM_ID`` cover the whole catalogue. ``BY_SHORT_NAME`` is the table's six
(also named ``TABLE_BY_SHORT_NAME``): what the NetCDF stager loads when a caller names no variables;
a load names its own (:func:`load_variables`: the six and any other asked for). The whole catalogue
by NetCDF name is ``CATALOGUE_BY_SHORT_NAME``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from era5etl.core.catalogue import CATALOGUE as CATALOGUE, PACKING_TOLERANCE as PACKING_TOLERANCE, Variable
from era5etl.core.datasets import SINGLE_LEVELS, Dataset
from era5etl.core.errors import InputError

__all__ = [
    "BY_CDS_NAME",
    "BY_PARAM_ID",
    "BY_SHORT_NAME",
    "CATALOGUE",
    "CATALOGUE_BY_SHORT_NAME",
    "DATA_COLUMNS",
    "DEFAULT_VARIABLES",
    "LIST_COMMAND",
    "TABLE_BY_SHORT_NAME",
    "VARIABLES",
    "Variable",
    "load_variables",
    "parse_list",
    "resolve",
]

# The table's six columns, in its order: the first six of the catalogue.
VARIABLES: tuple[Variable, ...] = CATALOGUE[:6]

BY_CDS_NAME: dict[str, Variable] = {v.cds_name: v for v in CATALOGUE}
CATALOGUE_BY_SHORT_NAME: dict[str, Variable] = {v.short_name: v for v in CATALOGUE}
BY_PARAM_ID: dict[int, Variable] = {v.param_id: v for v in CATALOGUE}
TABLE_BY_SHORT_NAME: dict[str, Variable] = {v.short_name: v for v in VARIABLES}
BY_SHORT_NAME = TABLE_BY_SHORT_NAME  # the stager's default: the table's six by NetCDF name
DATA_COLUMNS: tuple[str, ...] = tuple(v.column for v in VARIABLES)
DEFAULT_VARIABLES: tuple[str, ...] = tuple(v.cds_name for v in VARIABLES)
LIST_COMMAND = "python -m era5etl variables"

if len(BY_CDS_NAME) != len(CATALOGUE) or len(CATALOGUE_BY_SHORT_NAME) != len(CATALOGUE):
    raise RuntimeError("the catalogue names a variable twice")


def lookup(name: str, catalogue: Sequence[Variable] = CATALOGUE) -> Variable | None:
    """A catalogued variable by CDS name or NetCDF short name."""
    if catalogue is CATALOGUE:
        return BY_CDS_NAME.get(name) or CATALOGUE_BY_SHORT_NAME.get(name)
    return next((v for v in catalogue if name in (v.cds_name, v.short_name)), None)


def resolve(names: Iterable[str], catalogue: Sequence[Variable] = CATALOGUE) -> list[Variable]:
    """Catalogued variables by CDS name or NetCDF short name, in catalogue order (the single-level
    table's six first, in its column order); unknown names are an error. ``catalogue``: another
    dataset's (core.datasets)."""
    wanted: set[Variable] = set()
    unknown = []
    for name in names:
        var = lookup(name, catalogue)
        if var is None:
            unknown.append(name)
        else:
            wanted.add(var)
    if unknown:
        if catalogue is CATALOGUE:
            raise InputError(
                f"unknown variable(s) {', '.join(map(repr, unknown))}: not in the catalogue of ERA5 single-level "
                f"variables (CDS or NetCDF names; `{LIST_COMMAND}` lists them); the table holds "
                + ", ".join(v.cds_name for v in VARIABLES)
            )
        raise InputError(f"unknown variable(s) {', '.join(map(repr, unknown))}: not in the dataset's catalogue "
                         f"({', '.join(v.cds_name for v in catalogue)})")
    if not wanted:
        raise InputError("no variables requested")
    return [v for v in catalogue if v in wanted]


def parse_list(text: str | Sequence[str], catalogue: Sequence[Variable] = CATALOGUE) -> list[Variable]:
    names = text.split(",") if isinstance(text, str) else list(text)
    return resolve((n.strip() for n in names if n.strip()), catalogue)


def load_variables(asked: Iterable[Variable], dataset: Dataset = SINGLE_LEVELS) -> tuple[Variable, ...]:
    """The variables a load of ``dataset`` writes: its table's base columns
    (:attr:`Dataset.base_variables`: the six of single levels, ERA5-Land's table too; a row is replaced
    whole, so one not in the download is written NULL), then any other variable of the dataset's
    catalogue asked for, in its order (ERA5-Land's snow cover is in its catalogue, not in ERA5's)."""
    base = dataset.base_variables
    extra = set(asked) - set(base)
    return (*base, *(v for v in dataset.catalogue if v in extra))
