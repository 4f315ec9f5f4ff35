"""The loader's cutting of blocks (load.loader): pieces in the order a chunk's batches are told they come."""

from __future__ import annotations

import numpy as np
import pytest

from era5etl.core.tiles import tile_of
from era5etl.load.loader import Tiling, block_hours, block_pieces
from era5etl.stage import Block


def _grid(hours: int, points: int, first_id: int = 1) -> tuple[Block, np.ndarray]:
    times = np.arange(np.datetime64("2024-03-01T00"), np.datetime64("2024-03-01T00") + hours).astype("datetime64[s]")
    ids = np.arange(first_id, first_id + points, dtype=np.int32)
    values = np.arange(hours * points, dtype=np.float32).reshape(hours, points)
    return Block(times, ids, ids.astype(np.float32), ids.astype(np.float32), {"temperature_2m": values}), values


@pytest.mark.parametrize(("hours", "points", "rows"), [
    (744, 441, 262_144), (24, 20_000, 262_144), (1, 1_038_240, 262_144), (3, 10, 7), (5, 4, 100)])
def test_a_blocks_pieces_keep_its_rows_in_time_then_point_order(hours: int, points: int, rows: int) -> None:
    # The columnstore is told the rows come sorted by (time, location_id): pieces, in order, must be
    # the block's rows in that order, each at most ``rows`` rows (a piece is never a copy).
    block, values = _grid(hours, points)
    order: list[np.ndarray] = []
    for piece, tiles in block_pieces(block, rows):
        assert tiles is None
        assert piece.rows <= rows
        assert np.shares_memory(piece.values["temperature_2m"], values)
        order.append(piece.values["temperature_2m"].ravel())
    np.testing.assert_array_equal(np.concatenate(order), values.ravel())


@pytest.mark.parametrize(("hours", "points", "first", "rows"), [
    (24, 46_080, 1, 262_144), (2256, 441, 5, 262_144), (24, 100, 30, 96), (48, 70, 1, 10)])
def test_in_tiles_the_pieces_are_whole_tiles_point_by_point(hours: int, points: int, first: int, rows: int) -> None:
    # A tiled table's batches are (tile, location_id, time): the pieces, encoded point by point
    # (encode.encode_block with tiles), must give the block's rows in that order, whatever order the
    # download holds its points in (here north to south as the CDS sends them: ids descending).
    block, values = _grid(hours, points, first)
    flipped = Block(block.valid_time, block.location_id[::-1], block.latitude[::-1], block.longitude[::-1],
                    {"temperature_2m": values[:, ::-1]})
    order = np.argsort(flipped.location_id, kind="stable")
    tiling = Tiling(order, tile_of(flipped.location_id[order]))
    seen: list[np.ndarray] = []
    starts: list[int] = []
    for piece, tiles in block_pieces(flipped, rows, tiling):
        assert tiles is not None and len(tiles) == len(piece.latitude)
        np.testing.assert_array_equal(tiles, tile_of(piece.location_id))
        # whole tiles: no tile is cut between two pieces
        assert piece.rows <= rows or len(np.unique(tiles)) == 1
        seen.append(piece.values["temperature_2m"].T.ravel())  # point by point
        starts.append(int(piece.location_id[0]))
    np.testing.assert_array_equal(np.concatenate(seen), values.T.ravel())
    assert all(tile_of(s) != tile_of(s - 1) or s == first for s in starts)


def test_a_tiled_block_is_whole_days() -> None:
    assert block_hours(1_038_240, tiled=False) == 1
    assert block_hours(1_038_240, tiled=True) == 24
    assert block_hours(46_080, tiled=True) == 24
    assert block_hours(441, tiled=False) == 2267
    assert block_hours(441, tiled=True) == 2256
    assert block_hours(4, tiled=True) == 24 * 366
