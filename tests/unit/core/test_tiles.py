"""Tiles (core.tiles): 32 consecutive ids, the same numbers as the SQL function era5_tile."""

from __future__ import annotations

import re

import numpy as np
import pytest

from era5etl.core.tiles import TILE_POINTS, tile_groups, tile_of, tile_runs
from era5etl.db import SQL_DIR


def test_a_tile_is_thirty_two_consecutive_ids_from_one() -> None:
    ids = np.arange(1, 200, dtype=np.int32)
    tiles = tile_of(ids)
    assert tiles.dtype == np.int32
    assert tiles[:32].tolist() == [0] * 32 and tiles[32] == 1
    assert tile_of(1) == 0 and tile_of(32) == 0 and tile_of(33) == 1
    # ERA5's rows (1,440 points) are whole tiles; ERA5-Land's (3,600) are not, so a tile may run over
    # a row's end there, its ids consecutive all the same.
    assert 1440 % TILE_POINTS == 0


def test_the_sql_function_computes_what_python_does() -> None:
    text = (SQL_DIR / "007_tiles.sql").read_text()
    body = re.search(r"RETURN \(location_id - 1\) / (\d+);", text)
    assert body is not None and int(body.group(1)) == TILE_POINTS


def test_runs_and_groups_cut_at_tile_boundaries() -> None:
    ids = np.array([1, 2, 3, 33, 34, 65, 97, 98, 99, 100], dtype=np.int32)
    tiles = tile_of(ids)
    assert tile_runs(tiles).tolist() == [0, 3, 5, 6, 10]
    # Each group whole tiles, at most 4 rows over 1 hour, or one tile alone when it holds more.
    groups = tile_groups(tiles, 1, 4)
    assert [(g.start, g.stop) for g in groups] == [(0, 3), (3, 6), (6, 10)]
    assert [(g.start, g.stop) for g in tile_groups(tiles, 2, 4)] == [(0, 3), (3, 5), (5, 6), (6, 10)]
    assert [(g.start, g.stop) for g in tile_groups(tiles, 1, 100)] == [(0, 10)]
    assert tile_groups(tiles[:0], 1, 4) == []


def test_auto_lays_out_in_tiles_the_tables_whose_month_fits_a_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    from era5etl.core.datasets import PRESSURE_LEVELS, SINGLE_LEVELS
    from era5etl.db import new_layout

    monkeypatch.delenv("ERA5_LAYOUT", raising=False)
    monkeypatch.delenv("ERA5_CHUNK_ROWS", raising=False)
    assert new_layout(SINGLE_LEVELS, 441) == "tiles"  # the default area: chunks of a year
    assert new_layout(SINGLE_LEVELS, 33_602) == "tiles"  # 33,602 x 744 hours: 24,999,888 rows, one chunk a month
    assert new_layout(SINGLE_LEVELS, 33_603) == "time"  # a day a chunk: a tile's batch would be its day
    assert new_layout(SINGLE_LEVELS, 1_038_240) == "time"
    assert new_layout(SINGLE_LEVELS, None) == "time"  # breadth unknown (a table made before any load)
    assert new_layout(PRESSURE_LEVELS, 441) == "time"
    monkeypatch.setenv("ERA5_CHUNK_ROWS", "0")  # every chunk a day
    assert new_layout(SINGLE_LEVELS, 441) == "time"
    monkeypatch.setenv("ERA5_LAYOUT", "tiles")
    assert new_layout(SINGLE_LEVELS, 1_038_240) == "tiles"
    monkeypatch.setenv("ERA5_LAYOUT", "time")
    assert new_layout(SINGLE_LEVELS, 441) == "time"
