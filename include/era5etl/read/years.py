"""Where a place's hours (or days) are read from: the table (or its daily rollup), or its copy of years
(``db.years``) for the years the copy holds whole and current.

A place's hourly series over decades of a global table would otherwise decode a batch of its
neighbours' rows for every day (docs/table.md#a-places-decades-the-copy-of-years); the copy holds
each of its years as two batches of the place's own rows. The range asked for is cut at the copied
years' bounds: each copied run of years is read from the copy, the rest from the table, in time
order. ``era5_year_copies`` is read in the same statement's snapshot only in spirit: a load that
rewrites a copied year deletes its record first, so a year is never read from a stale copy once the
load has committed (a read already running when it commits sees the rows as they were).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import psycopg

from era5etl.db.layout import in_tiles
from era5etl.db.years import copied_years, copy_name


@dataclass(frozen=True)
class Part:
    """One relation read for [start, end) of a series' range (None: open), ``tiled`` when its rows have
    their tile (``db.layout``) so the read names the place's tile."""

    relation: str
    start: datetime | None
    end: datetime | None
    tiled: bool = False


def year_runs(years: list[int]) -> list[tuple[datetime, datetime]]:
    """Runs of consecutive years as [first Jan 1, Jan 1 after the last), UTC."""
    runs: list[list[int]] = []
    for year in sorted(years):
        if runs and runs[-1][1] == year:
            runs[-1][1] = year + 1
        else:
            runs.append([year, year + 1])
    return [(datetime(a, 1, 1, tzinfo=UTC), datetime(b, 1, 1, tzinfo=UTC)) for a, b in runs]


def split_range(table: str, tiled: bool, copied: list[tuple[datetime, datetime]], start: datetime | None,
                end: datetime | None) -> list[Part]:
    """[start, end) cut into parts in time order: the copied runs' stretches from ``<table>_years``,
    the rest from ``table``."""
    parts: list[Part] = []
    cursor = start
    for a, b in copied:
        lo, hi = (a if start is None else max(a, start)), (b if end is None else min(b, end))
        if lo >= hi:
            continue
        if cursor is None or cursor < lo:
            parts.append(Part(table, cursor, lo, tiled))
        parts.append(Part(copy_name(table), lo, hi))
        cursor = hi
    if not parts or end is None or (cursor is not None and cursor < end):
        parts.append(Part(table, cursor, end, tiled))
    return parts


def parts_of(conn: psycopg.Connection[Any], relation: str, start: datetime | None, end: datetime | None) -> list[Part]:
    """The parts a place's rows of ``relation`` (a weather table, or a rollup: the daily one has a copy of
    years too, the monthly none) in [start, end) are read from."""
    return split_range(relation, in_tiles(conn, relation), year_runs(copied_years(conn, relation)), start, end)
