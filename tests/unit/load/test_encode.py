"""The binary COPY encoder, read back by a small reference decoder written from the PostgreSQL docs
("COPY ... File Formats, Binary Format") with struct, one field at a time."""

from __future__ import annotations

import math
import struct
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from era5etl.core.variables import DATA_COLUMNS
from era5etl.load import encode
from era5etl.stage import Block, open_download

F4_MAX = float(np.finfo(np.float32).max)
F4_TINY = float(np.finfo(np.float32).smallest_subnormal)
F4_MIN_NORMAL = float(np.finfo(np.float32).tiny)
SPECIALS = [0.0, -0.0, math.nan, F4_MAX, -F4_MAX, F4_TINY, -F4_TINY, F4_MIN_NORMAL, math.inf, -math.inf, 1.5,
            -273.15]
TIMES = [
    datetime(1940, 1, 1, tzinfo=UTC),
    datetime(1969, 12, 31, 23, tzinfo=UTC),
    datetime(1970, 1, 1, tzinfo=UTC),
    datetime(1999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
    datetime(2000, 1, 1, tzinfo=UTC),
    datetime(2000, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
    datetime(2024, 2, 29, 23, tzinfo=UTC),
    datetime(2100, 12, 31, 23, tzinfo=UTC),
]
UNIX = datetime(1970, 1, 1, tzinfo=UTC)
PG_ZERO = datetime(2000, 1, 1, tzinfo=UTC)

Row = tuple[object, ...]


def decode(stream: bytes) -> list[Row]:
    """Header, tuples, trailer. Times come back as datetimes, int4 as int, float4 as their 4 raw
    big-endian bytes (so -0.0, subnormals and infinities compare exactly), NULL as None."""
    assert stream[:11] == b"PGCOPY\n\xff\r\n\x00"
    flags, ext = struct.unpack_from(">ii", stream, 11)
    assert flags == 0 and ext == 0
    pos = 19 + ext
    rows: list[Row] = []
    while True:
        (nfields,) = struct.unpack_from(">h", stream, pos)
        pos += 2
        if nfields == -1:
            break
        assert nfields == 10
        row: list[object] = []
        for i in range(nfields):
            (length,) = struct.unpack_from(">i", stream, pos)
            pos += 4
            if length == -1:
                row.append(None)
                continue
            data = stream[pos:pos + length]
            pos += length
            if i == 0:
                assert length == 8
                row.append(PG_ZERO + timedelta(microseconds=struct.unpack(">q", data)[0]))
            elif i == 1:
                assert length == 4
                row.append(struct.unpack(">i", data)[0])
            else:
                assert length == 4
                row.append(data)
        rows.append(tuple(row))
    assert pos == len(stream), "bytes after the trailer"
    return rows


def f4(v: float) -> bytes | None:
    """What a float4 field must hold: the value rounded to float4, big-endian, or NULL for NaN."""
    return None if math.isnan(v) else struct.pack(">f", v)


def unix_us(t: datetime) -> int:
    return (t - UNIX) // timedelta(microseconds=1)


def test_constants() -> None:
    assert encode.HEADER == b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8
    assert encode.TRAILER == b"\xff\xff"
    assert encode.COPY_COLUMNS == ("time", "location_id", "latitude", "longitude", "temperature_2m",
                                   "zonal_wind_10m", "meridional_wind_10m", "total_cloud_cover",
                                   "total_precipitation", "snowfall")


def test_rows_specials_epochs_and_absent_column() -> None:
    n = len(SPECIALS) * len(TIMES)
    time_us = np.array([unix_us(t) for t in TIMES for _ in SPECIALS], dtype=np.int64)
    ids = np.arange(n, dtype=np.int32) - 3
    values = np.array(SPECIALS * len(TIMES), dtype=np.float32)
    cols = {c: np.roll(values, k) for k, c in enumerate(DATA_COLUMNS[:-1])}  # snowfall absent
    lat = np.roll(values, 7)  # NaN latitude is NULL too
    lon = np.linspace(-179.75, 180, n).astype(np.float32)

    rows = decode(encode.HEADER + encode.encode_rows(time_us, ids, lat, lon, cols) + encode.TRAILER)

    assert len(rows) == n
    for i, row in enumerate(rows):
        assert row[0] == TIMES[i // len(SPECIALS)]
        assert row[1] == int(ids[i])
        assert row[2] == f4(float(lat[i])) and row[3] == f4(float(lon[i]))
        for k, c in enumerate(DATA_COLUMNS[:-1]):
            assert row[4 + k] == f4(float(cols[c][i])), (i, c, cols[c][i])
        assert row[9] is None


def test_special_values_are_exact_on_the_wire() -> None:
    vals = np.array([-0.0, 0.0, F4_TINY, F4_MAX, math.inf, -math.inf, math.nan], dtype=np.float32)
    n = len(vals)
    (stream,) = [encode.encode_rows(np.zeros(n, np.int64), np.zeros(n, np.int32), vals, vals,
                                    {"temperature_2m": vals})]
    rows = decode(encode.HEADER + stream + encode.TRAILER)
    assert [r[4] for r in rows] == [b"\x80\x00\x00\x00", b"\x00\x00\x00\x00", b"\x00\x00\x00\x01",
                                    b"\x7f\x7f\xff\xff", b"\x7f\x80\x00\x00", b"\xff\x80\x00\x00", None]
    assert [r[0] for r in rows] == [UNIX] * n  # Unix zero is -946684800 s on PostgreSQL's clock
    assert stream[2:6] == b"\x00\x00\x00\x08" and stream[6:14] == struct.pack(">q", -946_684_800_000_000)


def _block(t: int, p: int, columns: dict[str, npt.NDArray[np.float32]]) -> Block:
    times = np.datetime64("2023-12-31T22:00:00", "s") + np.arange(t) * np.timedelta64(1, "h")
    return Block(times, np.arange(1, p + 1, dtype=np.int32) * 7, np.linspace(-90, 90, p).astype(np.float32),
                 np.linspace(-179.75, 180, p).astype(np.float32), columns)


def test_block_rows_are_time_major_and_absent_columns_null() -> None:
    t, p = 3, 4
    tp = np.arange(t * p, dtype=np.float32).reshape(t, p) / np.float32(8)
    tp[1, 2] = np.nan
    t2m = -tp
    block = _block(t, p, {"total_precipitation": tp, "temperature_2m": t2m})
    rows = decode(encode.HEADER + encode.encode_block(block) + encode.TRAILER)
    assert len(rows) == block.rows == 12
    for i, row in enumerate(rows):
        ti, pi = divmod(i, p)
        assert row[0] == datetime(2023, 12, 31, 22, tzinfo=UTC) + timedelta(hours=ti)
        assert row[1] == 7 * (pi + 1)
        assert row[2] == f4(float(block.latitude[pi])) and row[3] == f4(float(block.longitude[pi]))
        assert row[4] == f4(float(t2m[ti, pi]))
        assert row[8] == f4(float(tp[ti, pi]))
        assert row[5] is row[6] is row[7] is row[9] is None
    assert rows[6][8] is None and rows[6][4] is None  # the NaN, in both columns


def test_block_form_is_the_row_form_repeated_per_step() -> None:
    rng = np.random.default_rng(7)
    t, p = 5, 333
    cols = {c: rng.normal(0, 50, (t, p)).astype(np.float32) for c in DATA_COLUMNS}
    cols["snowfall"][rng.random((t, p)) < 0.3] = np.nan
    cols["total_cloud_cover"][:] = np.nan  # entirely NULL: takes the no-mask route
    cols["zonal_wind_10m"][2, 5] = -0.0
    block = _block(t, p, cols)
    by_rows = encode.encode_rows(
        np.repeat(block.valid_time, p), np.tile(block.location_id, t), np.tile(block.latitude, t),
        np.tile(block.longitude, t), {c: v.ravel() for c, v in cols.items()})
    assert encode.encode_block(block) == by_rows

    rows = decode(encode.HEADER + by_rows + encode.TRAILER)
    flat = {c: v.ravel() for c, v in cols.items()}
    for i, row in enumerate(rows):
        for k, c in enumerate(DATA_COLUMNS):
            assert row[4 + k] == f4(float(flat[c][i])), (i, c)


@pytest.mark.parametrize("nan_fraction", [0.0, 0.001, 0.5, 1.0])
def test_random_blocks_decode_field_by_field(nan_fraction: float) -> None:
    rng = np.random.default_rng(int(nan_fraction * 1000))
    t, p = 3, 1000
    present = [c for c in DATA_COLUMNS if rng.random() < 0.7]
    cols = {}
    for c in present:
        v = (rng.standard_normal((t, p)) * 10.0 ** rng.integers(-40, 38, (t, p))).astype(np.float32)
        v[rng.random((t, p)) < nan_fraction] = np.nan
        cols[c] = v
    block = _block(t, p, cols)
    stream = encode.encode_block(block)
    nulls = sum(int(np.isnan(v).sum()) for v in cols.values())
    # count, time, id, lat, lon (length + data each), then 8 bytes per value, 4 per NULL
    row_bytes = 2 + 12 + 8 + 8 + 8 + 8 * len(present) + 4 * (6 - len(present))
    assert len(stream) == block.rows * row_bytes - 4 * nulls
    rows = decode(encode.HEADER + stream + encode.TRAILER)
    for i, row in enumerate(rows):
        ti, pi = divmod(i, p)
        assert row[1] == int(block.location_id[pi])
        for k, c in enumerate(DATA_COLUMNS):
            assert row[4 + k] == (f4(float(cols[c][ti, pi])) if c in cols else None), (i, c)


def test_empty_blocks_and_rows_encode_to_nothing() -> None:
    none = np.array([], dtype=np.float32)
    assert encode.encode_block(_block(0, 5, {"snowfall": np.zeros((0, 5), np.float32)})) == b""
    assert encode.encode_block(_block(4, 0, {"snowfall": np.zeros((4, 0), np.float32)})) == b""
    assert encode.encode_rows(np.array([], np.int64), np.array([], np.int32), none, none,
                              {c: none for c in DATA_COLUMNS}) == b""
    assert decode(encode.HEADER + b"" + encode.TRAILER) == []


def test_times_may_be_datetime64_and_ids_wider_ints() -> None:
    stamps = np.array(["1940-01-01T00", "2000-01-01T00", "2038-01-19T03:14:08"], dtype="datetime64[s]")
    as_int = stamps.astype("datetime64[us]").astype(np.int64)
    lat = np.zeros(3, np.float32)
    one = encode.encode_rows(stamps, np.arange(3, dtype=np.int64), lat, lat, {})
    assert one == encode.encode_rows(as_int, np.arange(3, dtype=np.int32), lat, lat, {})
    rows = decode(encode.HEADER + one + encode.TRAILER)
    assert [r[0] for r in rows] == [datetime(1940, 1, 1, tzinfo=UTC), PG_ZERO,
                                    datetime(2038, 1, 19, 3, 14, 8, tzinfo=UTC)]
    assert all(r[4:] == (None,) * 6 for r in rows)


def test_float64_input_is_rounded_to_float4_and_overflow_refused() -> None:
    v64 = np.array([0.1, 1e-46, 3.4028235e38, -273.15, math.inf, math.nan])
    z = np.zeros(len(v64), np.int64)
    rows = decode(encode.HEADER + encode.encode_rows(z, z.astype(np.int32), v64, v64, {"snowfall": v64})
                  + encode.TRAILER)
    assert [r[9] for r in rows] == [struct.pack(">f", x) for x in v64[:-1]] + [None]  # 1e-46 -> 0.0
    # PostgreSQL refuses 1e39 for a real ("out of range"); it must not quietly become Infinity.
    with pytest.raises(ValueError, match="float4"):
        encode.encode_rows(z[:1], z[:1].astype(np.int32), v64[:1], v64[:1], {"snowfall": np.array([-1e39])})


def test_bad_input_is_refused() -> None:
    z = np.zeros(3, np.float32)
    t = np.zeros(3, np.int64)
    i = np.zeros(3, np.int32)
    with pytest.raises(ValueError, match="not a data column"):
        encode.encode_rows(t, i, z, z, {"t2m": z})
    with pytest.raises(ValueError, match="shape"):
        encode.encode_rows(t, i, z, z, {"snowfall": np.zeros(4, np.float32)})
    with pytest.raises(ValueError, match="shape"):
        encode.encode_rows(t, i[:2], z, z, {})
    with pytest.raises(ValueError, match="int4"):
        encode.encode_rows(t, np.array([0, 1, 2**31], np.int64), z, z, {})
    with pytest.raises(TypeError, match="float"):
        encode.encode_rows(t, i, z, z, {"snowfall": i})  # type: ignore[dict-item]  # on purpose
    with pytest.raises(ValueError, match="shape"):
        encode.encode_block(replace(_block(2, 3, {}), values={"snowfall": np.zeros((3, 2), np.float32)}))


def test_a_real_download_survives_the_round_trip(samples: Path) -> None:
    paths = [samples / "newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc",
             samples / "newcds_accum_tp_2025-05_hourly_expver0005.nc"]
    with open_download(paths) as staged:
        blocks = list(staged.blocks(hours=24))
    stream = encode.HEADER + b"".join(encode.encode_block(b) for b in blocks) + encode.TRAILER
    rows = decode(stream)
    assert len(rows) == staged.rows == 7200
    p = staged.points
    for i in range(0, len(rows), 37):  # a spread of rows, every column
        b, j = divmod(i, 24 * p)
        ti, pi = divmod(j, p)
        block = blocks[b]
        row = rows[i]
        assert row[0] == datetime.fromtimestamp(int(block.valid_time[ti].astype(np.int64)), UTC)
        assert row[1] == int(staged.location_id[pi])
        for k, c in enumerate(DATA_COLUMNS):
            want = f4(float(block.values[c][ti, pi])) if c in block.values else None
            assert row[4 + k] == want, (i, c)
    assert all(r[7] is None and r[9] is None for r in rows)  # tcc and sf are not in these files


def test_block_off_the_lattice_has_null_location_ids() -> None:
    rng = np.random.default_rng(3)
    t, p = 2, 7
    cols = {"temperature_2m": rng.normal(0, 10, (t, p)).astype(np.float32)}
    block = _block(t, p, cols)
    block.location_id = None
    rows = decode(encode.HEADER + encode.encode_block(block) + encode.TRAILER)
    assert len(rows) == t * p
    assert all(row[1] is None for row in rows)
    assert [row[4] for row in rows] == [f4(float(v)) for v in cols["temperature_2m"].ravel()]


@pytest.mark.parametrize(("days", "points", "rows"), [(1, 10, 4), (5, 3, 7), (3, 10, 4), (2, 5, 100), (0, 5, 4)])
def test_pieces_cover_every_row_once_in_time_then_point_order(days: int, points: int, rows: int) -> None:
    """The pieces a COPY is sent in (hourly rows, daily and monthly rollup rows): every (step, point)
    once, in the order the columnstore is told the rows come (time, location_id), none over ``rows``."""
    grid = np.arange(days * points).reshape(days, points)
    sent = [grid[t, p].ravel() for t, p in encode.piece_slices(days, points, rows)]
    assert np.array_equal(np.concatenate(sent) if sent else np.zeros(0), grid.ravel())
    assert all(piece.size <= rows for piece in sent)


def test_in_tiles_rows_go_point_by_point_with_their_tile() -> None:
    # A tiled table (core.tiles): each tuple has the tile after the coordinates, and the rows go point
    # by point, each point's steps in time order: the order (tile, location_id, time) of its batches.
    t, p = 3, 4
    tp = np.arange(t * p, dtype=np.float32).reshape(t, p)
    tp[2, 1] = np.nan
    block = _block(t, p, {"total_precipitation": tp})
    tiles = np.array([0, 0, 5, 5], dtype=np.int32)
    stream = encode.encode_block(block, tiles=tiles)
    assert encode.copy_columns(int_columns=("tile",))[4] == "tile"
    pos, rows = 0, []
    while pos < len(stream):
        (n,) = struct.unpack_from(">h", stream, pos)
        pos += 2
        assert n == 11
        fields: list[bytes | None] = []
        for _ in range(n):
            (length,) = struct.unpack_from(">i", stream, pos)
            pos += 4
            fields.append(None if length == -1 else stream[pos:pos + length])
            pos += max(length, 0)
        rows.append(fields)
    assert len(rows) == t * p
    for i, fields in enumerate(rows):
        pi, ti = divmod(i, t)  # point-major
        assert fields[0] is not None and fields[1] is not None and fields[4] is not None
        assert PG_ZERO + timedelta(microseconds=struct.unpack(">q", fields[0])[0]) == (
            datetime(2023, 12, 31, 22, tzinfo=UTC) + timedelta(hours=ti))
        assert struct.unpack(">i", fields[1])[0] == 7 * (pi + 1)
        assert struct.unpack(">i", fields[4])[0] == tiles[pi]
        want = tp[ti, pi]
        got = fields[5 + DATA_COLUMNS.index("total_precipitation")]
        assert (got is None) if np.isnan(want) else got == f4(float(want))
