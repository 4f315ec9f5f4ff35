"""What a weather table may be called: checked once, at the edge, by every entry point.

The CLI's ``--table``, the DAG's ``table`` param, the HTTP ``table`` parameter and ``ERA5_TABLE`` all
go through :func:`check_table` before anything is read, created or written. A name is one plain
identifier (``[A-Za-z_][A-Za-z0-9_]*``), never schema-qualified (the table lives in the connection's
first schema, ``public`` on the local server), short enough that every name derived from it (its
rollups ``<table>_daily`` and ``<table>_monthly``, its copy of years ``<table>_years``) stays within
PostgreSQL's 63 bytes, and never a system name or one of the pipeline's own bookkeeping tables.
Folders derived from the name (validation results) therefore stay inside their parent.
"""

from __future__ import annotations

import hashlib
import re

from era5etl.core.errors import InputError

PATTERN = r"[A-Za-z_][A-Za-z0-9_]*"
_NAME = re.compile(PATTERN)
MAX_IDENTIFIER = 63  # PostgreSQL's NAMEDATALEN - 1: a longer name is cut, silently
# Every name the pipeline derives from a table's: its rollups (db.ROLLUP_STEPS) and its place-major
# copy of finished years (db.years).
DERIVED_SUFFIXES = ("_daily", "_monthly", "_years")
MAX_TABLE = MAX_IDENTIFIER - max(len(s) for s in DERIVED_SUFFIXES)  # 55
# A chunk the pipeline names (the copy's yearly chunks) goes to the columnstore, where TimescaleDB
# names its compressed twin "<chunk>_compressed" and refuses ("chunk name too long") past 63 bytes.
MAX_CHUNK_NAME = MAX_IDENTIFIER - len("_compressed")  # 52
# The pipeline's own bookkeeping (sql/002..006, 008, 009, 011): never a weather table.
BOOKKEEPING = frozenset({"era5_months", "era5_metrics", "era5_cds_jobs", "era5_validation_days",
                         "era5_land_points", "era5_tables", "era5_extents", "era5_regions",
                         "era5_region_weights", "era5_year_copies"})
# What PostgreSQL and TimescaleDB reserve (pg_*: system catalogs and schemas; the others: their schemas).
SYSTEM_PREFIXES = ("pg_", "_timescaledb", "timescaledb_")
SYSTEM_NAMES = frozenset({"information_schema"})


def table_problem(name: object) -> str | None:
    """Why ``name`` cannot be a weather table's name, or None when it can."""
    if not isinstance(name, str) or not name:
        return "a table name is required"
    shown = repr(name if len(name) <= 80 else name[:77] + "...")
    if "." in name and all(_NAME.fullmatch(part) for part in name.split(".")):
        return (f"table {shown} is schema-qualified: give the table's name alone (it is made in the "
                "connection's first schema, public on the local server)")
    if not _NAME.fullmatch(name):
        return f"table {shown} is not a table name: letters, digits and _, not starting with a digit"
    if len(name) > MAX_TABLE:
        return (f"table {shown} is {len(name)} characters: at most {MAX_TABLE}, so that its rollups "
                f"{', '.join('<table>' + s for s in DERIVED_SUFFIXES)} stay within PostgreSQL's "
                f"{MAX_IDENTIFIER} bytes")
    lower = name.lower()
    if lower in SYSTEM_NAMES or lower.startswith(SYSTEM_PREFIXES):
        return f"table {shown} is a system name (pg_*, information_schema, TimescaleDB's): choose another"
    if lower in BOOKKEEPING:
        return f"table {shown} is one of the pipeline's own bookkeeping tables: choose another"
    return None


def printable(text: object, width: int = 80) -> str:
    """``text`` safe to print on a terminal: control characters (a name someone stored over HTTP may
    hold escape sequences) shown as escapes, and at most ``width`` characters (``...`` marks a cut)."""
    shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in str(text))
    return shown if len(shown) <= width else shown[: width - 3] + "..."


def fitted(name: str, limit: int = MAX_IDENTIFIER) -> str:
    """``name`` when it fits ``limit`` bytes (PostgreSQL's 63; a chunk's :data:`MAX_CHUNK_NAME`), else its
    first ``limit - 9`` characters, ``_`` and 8 hex digits of its SHA-1: a name the pipeline derives
    beyond the table's own suffixes (a rollup's copy of years, a copy's yearly chunk) stays whole and
    distinct where the server would cut it silently or refuse it."""
    if len(name.encode()) <= limit:
        return name
    digest = hashlib.sha1(name.encode(), usedforsecurity=False).hexdigest()[:8]
    return f"{name[:limit - 9]}_{digest}"


def check_table(name: object) -> str:
    """``name`` when it can be a weather table's name; InputError saying why otherwise."""
    problem = table_problem(name)
    if problem is not None:
        raise InputError(problem)
    assert isinstance(name, str)
    return name
