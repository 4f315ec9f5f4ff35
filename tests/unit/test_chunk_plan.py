"""Which chunks a load creates: a whole month when it is small and free, else the table's interval."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise

import numpy as np
import pytest

from era5etl import load


def _secs(start: str, hours: int) -> np.ndarray:
    t0 = np.datetime64(start, "s").astype(np.int64)
    return t0 + 3600 * np.arange(hours, dtype=np.int64)


def _epoch(text: str) -> int:
    return int(np.datetime64(text, "s").astype(np.int64))


def test_a_small_month_is_one_chunk_and_a_large_one_a_chunk_a_day(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ERA5_MONTH_CHUNK_ROWS", raising=False)
    march = _secs("2024-03-01T00:00", 31 * 24)
    assert load._new_chunks(march, [], timedelta(days=1), points=441) == [
        (datetime(2024, 3, 1, tzinfo=UTC), datetime(2024, 4, 1, tzinfo=UTC))]
    # A global month (1,038,240 points) is far over 25M rows: 31 daily chunks.
    daily = load._new_chunks(march, [], timedelta(days=1), points=1_038_240)
    assert len(daily) == 31 and daily[0] == (datetime(2024, 3, 1, tzinfo=UTC), datetime(2024, 3, 2, tzinfo=UTC))
    monkeypatch.setenv("ERA5_MONTH_CHUNK_ROWS", "0")
    assert len(load._new_chunks(march, [], timedelta(days=1), points=1)) == 31


def test_decades_of_a_few_points_make_a_chunk_a_month() -> None:
    hours = _secs("1940-01-01T00:00", 24 * 366 * 3)  # 1940..1942, and into 1943
    made = load._new_chunks(hours, [], timedelta(days=1), points=4)
    assert len(made) == 36 + 1
    assert made[0] == (datetime(1940, 1, 1, tzinfo=UTC), datetime(1940, 2, 1, tzinfo=UTC))
    assert all(b == c for (_, b), (c, _) in pairwise(made))  # back to back


def test_a_month_that_already_has_chunks_gets_daily_ones_beside_them() -> None:
    # Days 1-5 were loaded before as daily chunks; the rest of the month must not overlap them.
    existing = [(_epoch(f"2024-03-0{d}T00:00"), _epoch(f"2024-03-0{d + 1}T00:00")) for d in range(1, 6)]
    rest = _secs("2024-03-06T00:00", 26 * 24)
    made = load._new_chunks(rest, existing, timedelta(days=1), points=4)
    assert len(made) == 26 and made[0][0] == datetime(2024, 3, 6, tzinfo=UTC)


def test_times_are_assigned_to_the_chunk_holding_them() -> None:
    ranges = [(_epoch("2024-03-01T00:00"), _epoch("2024-04-01T00:00")),
              (_epoch("2024-04-01T00:00"), _epoch("2024-04-02T00:00"))]
    secs = np.array([_epoch("2024-02-29T23:00"), _epoch("2024-03-15T00:00"), _epoch("2024-04-01T05:00"),
                     _epoch("2024-04-02T00:00")])
    assert load._containing(secs, ranges).tolist() == [-1, 0, 1, -1]
    assert load._uncovered(secs, ranges).tolist() == [secs[0], secs[3]]
