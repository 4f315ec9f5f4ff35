"""Which chunks a load creates: a whole year or month when it is free and fits, else the table's interval."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise

import numpy as np
import pytest

from era5etl.load import chunks

DAY = timedelta(days=1)


def _secs(start: str, hours: int) -> np.ndarray:
    t0 = np.datetime64(start, "s").astype(np.int64)
    return t0 + 3600 * np.arange(hours, dtype=np.int64)


def _epoch(text: str) -> int:
    return int(np.datetime64(text, "s").astype(np.int64))


def _utc(*ymd: int) -> datetime:
    return datetime(*ymd, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _default_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ERA5_CHUNK_ROWS", raising=False)


def test_the_span_follows_the_area(monkeypatch: pytest.MonkeyPatch) -> None:
    march = _secs("2024-03-01T00:00", 31 * 24)
    # 441 points: a whole year is 3.9M rows, one chunk for 2024.
    assert chunks.new_chunks(march, [], DAY, points=441) == [(_utc(2024, 1, 1), _utc(2025, 1, 1))]
    # 30,000 points: a year is 264M rows, a month 22M: one chunk for March.
    assert chunks.new_chunks(march, [], DAY, points=30_000) == [(_utc(2024, 3, 1), _utc(2024, 4, 1))]
    # A global month (1,038,240 points) is 772M rows: 31 daily chunks.
    daily = chunks.new_chunks(march, [], DAY, points=1_038_240)
    assert len(daily) == 31 and daily[0] == (_utc(2024, 3, 1), _utc(2024, 3, 2))
    monkeypatch.setenv("ERA5_CHUNK_ROWS", "0")
    assert len(chunks.new_chunks(march, [], DAY, points=1)) == 31
    # Without TimescaleDB's chunk API (the Apache licence): always the interval.
    monkeypatch.delenv("ERA5_CHUNK_ROWS")
    assert len(chunks.new_chunks(march, [], DAY, points=1, whole_spans=False)) == 31


def test_decades_of_a_few_points_make_a_chunk_a_year() -> None:
    hours = _secs("1940-01-01T00:00", 24 * (366 + 365 + 365) + 5)  # 1940..1942 and 5 hours of 1943
    made = chunks.new_chunks(hours, [], DAY, points=4)
    assert made == [(_utc(y, 1, 1), _utc(y + 1, 1, 1)) for y in range(1940, 1944)]
    assert all(b == c for (_, b), (c, _) in pairwise(made))  # back to back


def test_a_span_that_already_has_chunks_is_not_taken_again() -> None:
    # Days 1-5 of March were loaded before as daily chunks: neither 2024 nor March is free, so the
    # rest of the month gets daily chunks beside them, and April (free) a chunk of its own.
    existing = [(_epoch(f"2024-03-0{d}T00:00"), _epoch(f"2024-03-0{d + 1}T00:00")) for d in range(1, 6)]
    rest = _secs("2024-03-06T00:00", 26 * 24 + 30 * 24)
    made = chunks.new_chunks(rest, existing, DAY, points=4)
    assert len(made) == 26 + 1 and made[0] == (_utc(2024, 3, 6), _utc(2024, 3, 7))
    assert made[-1] == (_utc(2024, 4, 1), _utc(2024, 5, 1))


def test_times_are_assigned_to_the_chunk_holding_them() -> None:
    ranges = [(_epoch("2024-03-01T00:00"), _epoch("2024-04-01T00:00")),
              (_epoch("2024-04-01T00:00"), _epoch("2024-04-02T00:00"))]
    secs = np.array([_epoch("2024-02-29T23:00"), _epoch("2024-03-15T00:00"), _epoch("2024-04-01T05:00"),
                     _epoch("2024-04-02T00:00")])
    assert chunks.containing(secs, ranges).tolist() == [-1, 0, 1, -1]
    assert chunks.uncovered(secs, ranges).tolist() == [secs[0], secs[3]]


def test_the_daily_rollup_gets_a_chunk_a_decade_less_what_is_there() -> None:
    years = [(_utc(y, 1, 1), _utc(y + 1, 1, 1)) for y in (1999, 2000, 2001, 2024)]
    # Four yearly windows in three decades: a chunk for each decade, made once.
    assert chunks.daily_ranges(years, [], decades=True) == [
        (_utc(1990, 1, 1), _utc(2000, 1, 1)), (_utc(2000, 1, 1), _utc(2010, 1, 1)),
        (_utc(2020, 1, 1), _utc(2030, 1, 1))]
    # Yearly chunks made by an earlier version stay: the new chunk takes the decade's free part
    # around its window, and a window they cover gets none.
    have = [(_utc(y, 1, 1), _utc(y + 1, 1, 1)) for y in (2000, 2002, 2003)]
    assert chunks.daily_ranges(years, have, decades=True) == [
        (_utc(1990, 1, 1), _utc(2000, 1, 1)), (_utc(2001, 1, 1), _utc(2002, 1, 1)),
        (_utc(2020, 1, 1), _utc(2030, 1, 1))]
    # Too many points for a decade (decades=False): the hourly chunks' own ranges, as before.
    march = [(_utc(2024, 3, d), _utc(2024, 3, d + 1)) for d in (1, 2)]
    assert chunks.daily_ranges(march, [march[0]], decades=False) == [march[1]]
    # A month's window in a decade where a later month already has a chunk: up to that chunk.
    may = [(_utc(2024, 5, 1), _utc(2024, 6, 1))]
    assert chunks.daily_ranges(may, [(_utc(2024, 7, 1), _utc(2024, 8, 1))], decades=True) == [
        (_utc(2020, 1, 1), _utc(2024, 7, 1))]
