"""Blocks of time steps read from a staged download: bounds, sizes, shared grid arrays, closing.

See samples.py for the reference the values are compared with.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from era5etl.stage import StagedDownload, open_download

from .samples import (
    NEW_ACCUM,
    NEW_INSTANT,
    OLD_3H,
    Reference,
    assert_bits_equal,
    collect,
)


def test_blocks_cover_start_to_end_exclusive_in_steps_of_hours(samples: Path) -> None:
    ref = Reference(samples / NEW_INSTANT)
    start, end = datetime(2025, 5, 2, tzinfo=UTC), datetime(2025, 5, 3, tzinfo=UTC)
    with open_download([samples / NEW_INSTANT]) as s:
        blocks = list(s.blocks(start=start, end=end, hours=5))
        assert [len(b.valid_time) for b in blocks] == [5, 5, 5, 5, 4]
        times, got = collect(blocks)
        assert (times[0], times[-1]) == (np.datetime64("2025-05-02T00:00"), np.datetime64("2025-05-02T23:00"))
        assert_bits_equal(got["temperature_2m"], ref.values["temperature_2m"][24:48])

        # Bounds between steps, other time zones, naive = UTC.
        cet = timezone(timedelta(hours=2))
        (b,) = s.blocks(start=datetime(2025, 5, 2, 2, 30, tzinfo=cet),
                        end=datetime(2025, 5, 2, 3, 0, 1, tzinfo=cet))
        assert b.valid_time.tolist() == [np.datetime64("2025-05-02T01:00:00", "s")]
        assert [len(b.valid_time) for b in s.blocks(start=datetime(2025, 5, 12, 20), hours=2)] == [2, 2]
        assert list(s.blocks(start=end, end=start)) == []
        assert list(s.blocks(start=datetime(2030, 1, 1, tzinfo=UTC))) == []
        assert sum(b.rows for b in s.blocks(end=datetime(2025, 5, 1, 12, tzinfo=UTC), hours=100)) == 12 * 25
        with pytest.raises(ValueError, match="hours"):
            s.blocks(hours=0)

        # Grid arrays are shared by every block and read-only.
        b1, b2 = list(s.blocks(hours=144))
        assert b1.location_id is b2.location_id
        with pytest.raises(ValueError):
            b1.location_id[0] = 1


def test_hours_counts_time_steps_not_clock_hours(samples: Path) -> None:
    with open_download([samples / OLD_3H]) as s:
        blocks = list(s.blocks(hours=2))
    assert [len(b.valid_time) for b in blocks] == [2, 2, 2, 2]
    assert blocks[1].valid_time.tolist() == [np.datetime64("2023-01-01T06:00:00", "s"),
                                             np.datetime64("2023-01-01T09:00:00", "s")]


def test_close_is_idempotent_and_ends_reading(samples: Path) -> None:
    s: StagedDownload = open_download([samples / NEW_ACCUM])
    s.close()
    s.close()
    with pytest.raises(ValueError, match="closed"):
        s.blocks()

