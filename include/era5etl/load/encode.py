"""PostgreSQL binary COPY for the weather table, encoded with numpy a whole block at a time.

Wire format (PostgreSQL docs, "COPY ... Binary Format"): a header (signature, int32 flags, int32
header-extension length), then per tuple an int16 field count and per field an int32 byte length
(-1 = NULL) followed by the value in network byte order, then an int16 -1 trailer. Here every tuple
has the table's columns in the order of :func:`copy_columns`: timestamptz (int64 microseconds since
2000-01-01 UTC), int4 location_id, then float4 latitude, longitude and the data columns: the six by
default (ten fields), and after them any catalogued variable's column a load adds. A rollup's tuples
(:func:`encode_grid`) have latitude alone and its ``hours`` before its aggregates.

A tuple is one record of a packed structured dtype with big-endian fields, so numpy does the byte
swapping and the output is one ``tobytes``. NULL floats (NaN, or a column the block does not hold)
carry length -1 and no data bytes: absent columns are simply left out of the dtype; NaNs vary per row,
so when there are any the rows are written in full and the 4 data bytes of each NULL field are dropped
with a boolean mask (over 2-byte units: every field is a multiple of 2 bytes, so the mask is half the
size it would be over bytes).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from era5etl.core.rollups import COORDINATES as ROLLUP_COORDINATES
from era5etl.core.tiles import TILE_COLUMN
from era5etl.core.variables import DATA_COLUMNS
from era5etl.stage import Block

if TYPE_CHECKING:
    import psycopg
    from psycopg import sql

KEY_COLUMNS: tuple[str, ...] = ("time", "location_id", "latitude", "longitude")
COORDINATES: tuple[str, ...] = KEY_COLUMNS[2:]
COPY_COLUMNS: tuple[str, ...] = (*KEY_COLUMNS, *DATA_COLUMNS)  # a load of the six
HEADER: bytes = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
TRAILER: bytes = struct.pack(">h", -1)

# 2000-01-01T00:00:00Z in microseconds since the Unix epoch: PostgreSQL's timestamp zero.
PG_EPOCH_US = 946_684_800_000_000
# Rows of a piece of tuples handed to a COPY: a global hour (1M rows, ~89 MB encoded) is cut by grid
# points so that the pieces in flight stay a few tens of MB each, and a server takes one piece while
# the next is encoded (``piece_slices``).
PIECE_ROWS = 262_144


LEVEL = "level"  # int2, hPa: the key column a table on pressure levels has after location_id


@contextmanager
def binary_copy(cur: psycopg.Cursor[Any], statement: sql.SQL | sql.Composed) -> Iterator[psycopg.Copy]:
    """``statement`` (a COPY ... FROM STDIN (FORMAT BINARY)) framed: the header before what the body
    writes, the trailer after it; an error in the body ends the COPY without a trailer, so nothing lands."""
    with cur.copy(statement) as cp:
        cp.write(HEADER)
        yield cp
        cp.write(TRAILER)


def copy_columns(data_columns: tuple[str, ...] = DATA_COLUMNS, int_columns: tuple[str, ...] = (),
                 level: bool = False, coordinates: tuple[str, ...] = COORDINATES) -> tuple[str, ...]:
    """The columns a COPY of ``data_columns`` names, in the order the tuples hold them (``int_columns``,
    int4 and never NULL, between the key columns and the data columns: a rollup's ``hours``; ``level``,
    int2 and never NULL, after location_id for a table on pressure levels; ``coordinates``: the float4
    key columns after them, latitude and longitude, or a rollup's latitude alone)."""
    keys = (*KEY_COLUMNS[:2], LEVEL) if level else KEY_COLUMNS[:2]
    return (*keys, *coordinates, *int_columns, *data_columns)


@lru_cache(maxsize=64)
def _tuple_dtype(present: frozenset[str], with_id: bool = True,
                 data_columns: tuple[str, ...] = DATA_COLUMNS, int_columns: tuple[str, ...] = (),
                 level: bool = False, coordinates: tuple[str, ...] = COORDINATES) -> np.dtype[np.void]:
    fields: list[tuple[str, str]] = [("nfields", ">i2"), ("time.len", ">i4"), ("time", ">i8"),
                                     ("location_id.len", ">i4")]
    if with_id:
        fields.append(("location_id", ">i4"))
    for c in copy_columns(data_columns, int_columns, level, coordinates)[2:]:
        fields.append((f"{c}.len", ">i4"))
        if c == LEVEL and level:
            fields.append((c, ">i2"))
        elif c in int_columns:
            fields.append((c, ">i4"))
        elif c in present:
            fields.append((c, ">f4"))
    return np.dtype(fields)  # packed: no alignment padding, exactly the wire layout


def _encode(shape: tuple[int, ...], pg_time: npt.NDArray[np.int64], location_id: npt.NDArray[Any] | None,
            floats: Mapping[str, npt.NDArray[np.floating[Any]]], data_columns: tuple[str, ...],
            ints: Mapping[str, npt.NDArray[np.integer[Any]]] | None = None,
            level: npt.NDArray[np.integer[Any]] | None = None,
            coordinates: tuple[str, ...] = COORDINATES, point_major: bool = False) -> bytes:
    """Tuples for arrays broadcastable to ``shape`` (flattened in C order, or with ``point_major`` a
    (T, P) shape's rows point by point: each point's T steps in turn); ``floats`` holds the
    ``coordinates`` (latitude, longitude) and the data columns present; ``ints`` the int4 columns after
    the key columns; ``level`` the int2 level of a table on pressure levels (None: the table has no
    level column)."""
    ints = ints or {}
    n = int(np.prod(shape))
    if n == 0:
        return b""
    # Tested on the native-endian input: isnan on the byte-swapped field is several times slower.
    present: dict[str, npt.NDArray[np.floating[Any]]] = {}
    nulls: dict[str, npt.NDArray[np.bool_]] = {}
    for c, a in floats.items():
        nan = np.isnan(a)
        if nan.all():
            continue  # NULL in every row: left out of the dtype like an absent column, no mask needed
        present[c] = a
        if nan.any():
            nulls[c] = np.broadcast_to(nan, shape)
    int_columns = tuple(ints)
    dt = _tuple_dtype(frozenset(present), location_id is not None, data_columns, int_columns, level is not None,
                      coordinates)
    rows = np.empty(shape, dtype=dt)
    rows["nfields"] = 2 + len(coordinates) + len(int_columns) + len(data_columns) + (level is not None)
    rows["time.len"] = 8
    rows["time"] = pg_time
    if location_id is None:  # a grid off the 0.25 degree lattice: no ids, NULL
        rows["location_id.len"] = -1
    else:
        rows["location_id.len"] = 4
        rows["location_id"] = location_id
    if level is not None:
        rows[f"{LEVEL}.len"] = 2
        rows[LEVEL] = level
    for c, counts in ints.items():
        rows[f"{c}.len"] = 4
        rows[c] = counts
    for c in copy_columns(data_columns, coordinates=coordinates)[2:]:
        if c not in present:
            rows[f"{c}.len"] = -1
            continue
        try:
            with np.errstate(over="raise"):
                rows[c] = present[c]
        except FloatingPointError:
            # PostgreSQL refuses such a value for a real; quietly sending Infinity would be worse.
            raise ValueError(f"{c}: finite values beyond the float4 range (+-3.4e38)") from None
        rows[f"{c}.len"] = np.where(nulls[c], np.int32(-1), np.int32(4)) if c in nulls else 4
    if point_major:
        rows = rows.T
        nulls = {c: nan.T for c, nan in nulls.items()}
    if not nulls:
        return rows.tobytes()  # C order of the (transposed) view: numpy copies it point by point
    units = np.ascontiguousarray(rows).reshape(-1).view(np.uint16).reshape(n, dt.itemsize // 2)
    keep = np.ones(units.shape, dtype=np.bool_)
    for c, nan in nulls.items():
        start = dt.fields[c][1] // 2  # type: ignore[index]
        keep[np.ascontiguousarray(nan).reshape(-1), start:start + 2] = False
    return units[keep].tobytes()


def _check_floats(values: Mapping[str, npt.NDArray[Any]], shape: tuple[int, ...], what: str,
                  data_columns: tuple[str, ...]) -> None:
    for c, a in values.items():
        if c not in data_columns:
            raise ValueError(f"{c!r} is not a data column of the load ({', '.join(data_columns)})")
        if a.shape != shape:
            raise ValueError(f"{c}: shape {a.shape}, expected {shape} ({what})")
        if a.dtype.kind != "f":
            raise TypeError(f"{c}: dtype {a.dtype}; float4 columns take floating-point arrays")


def encode_block(block: Block, data_columns: tuple[str, ...] = DATA_COLUMNS,
                 tiles: npt.NDArray[np.int32] | None = None) -> bytes:
    """A block's tuples (no header or trailer), time-major: all points of the first step, then the next.

    ``tiles`` (one per point, ``core.tiles``): the table is laid out in tiles, so each tuple also
    carries its point's tile (an int4 after the coordinates: :func:`copy_columns` with
    ``int_columns=("tile",)``) and the tuples go point by point, each point's steps in time order: the
    order (tile, location_id, time) of the table's batches when the block's points are in id order."""
    t, p = len(block.valid_time), len(block.latitude)
    _check_floats(block.values, (t, p), "time steps x points", data_columns)
    if block.latitude.shape != (p,) or block.longitude.shape != (p,):
        raise ValueError(f"latitude/longitude must have one value per point ({p})")
    pg_time = block.valid_time.astype("datetime64[us]").astype(np.int64) - PG_EPOCH_US
    # Broadcasting instead of repeat/tile: no (T, P) temporaries for the per-step and per-point columns.
    floats: dict[str, npt.NDArray[np.floating[Any]]] = {
        "latitude": block.latitude[None, :], "longitude": block.longitude[None, :], **block.values}
    ids = None if block.location_id is None else block.location_id[None, :]
    level = None
    if block.level is not None:
        if block.level.shape != (p,):
            raise ValueError(f"level must have one value per point ({p})")
        level = block.level[None, :]
    if tiles is not None:
        if tiles.shape != (p,):
            raise ValueError(f"tiles must have one value per point ({p})")
        return _encode((t, p), pg_time[:, None], ids, floats, data_columns, {TILE_COLUMN: tiles[None, :]},
                       level=level, point_major=True)
    return _encode((t, p), pg_time[:, None], ids, floats, data_columns, level=level)


def encode_grid(times: npt.NDArray[np.datetime64], location_id: npt.NDArray[Any], latitude: npt.NDArray[np.float32],
                ints: Mapping[str, npt.NDArray[np.integer[Any]]],
                values: Mapping[str, npt.NDArray[np.floating[Any]]], data_columns: tuple[str, ...],
                level: npt.NDArray[np.integer[Any]] | None = None) -> bytes:
    """Tuples for (T, P) arrays of ``values`` and ``ints`` at T times and P points (the rollup rows
    the loader writes: a bucket, a point, its latitude, its ``hours`` and its aggregates; no longitude,
    which the point's id fixes: ``era5etl.core.rollups``), time-major. ``level`` (P,): each point's
    pressure level, for the rollups of a table on levels."""
    t, p = len(times), len(latitude)
    _check_floats(values, (t, p), "buckets x points", data_columns)
    pg_time = times.astype("datetime64[us]").astype(np.int64) - PG_EPOCH_US
    floats: dict[str, npt.NDArray[np.floating[Any]]] = {"latitude": latitude[None, :], **values}
    return _encode((t, p), pg_time[:, None], location_id[None, :], floats, data_columns, ints,
                   level=None if level is None else level[None, :], coordinates=ROLLUP_COORDINATES)


def encode_rows(time_us: npt.NDArray[np.int64] | npt.NDArray[np.datetime64], location_id: npt.NDArray[Any],
                latitude: npt.NDArray[np.floating[Any]], longitude: npt.NDArray[np.floating[Any]],
                values: Mapping[str, npt.NDArray[np.floating[Any]]],
                data_columns: tuple[str, ...] = DATA_COLUMNS) -> bytes:
    """Tuples for n rows given column by column (``data_columns``: the COPY's, after the key columns).

    ``time_us``: microseconds since 1970-01-01 UTC (what ``datetime64[us]`` holds as int64), or a
    datetime64 array of any unit; shifted here to PostgreSQL's 2000-01-01 epoch. ``location_id``: any
    integer dtype whose values fit int4. Floats are rounded to float4 (float32 input goes through as is).
    NaN becomes NULL, as does every data column missing from ``values``.
    """
    times = np.asarray(time_us)
    n = len(times)
    for name, a in (("time_us", times), ("location_id", location_id), ("latitude", latitude),
                    ("longitude", longitude)):
        if a.shape != (n,):
            raise ValueError(f"{name}: shape {a.shape}, expected ({n},)")
    _check_floats(values, (n,), "one per row", data_columns)
    if latitude.dtype.kind != "f" or longitude.dtype.kind != "f":
        raise TypeError("latitude and longitude must be floating-point arrays")
    if location_id.dtype.kind not in "iu":
        raise TypeError(f"location_id: dtype {location_id.dtype}, expected integers")
    if location_id.dtype.itemsize > 4 or location_id.dtype == np.uint32:
        info = np.iinfo(np.int32)
        if n and (location_id.min() < info.min or location_id.max() > info.max):
            raise ValueError("location_id: values do not fit int4")
    if times.dtype.kind == "M":
        unix_us = times.astype("datetime64[us]").astype(np.int64)
    elif times.dtype.kind in "iu":
        unix_us = times.astype(np.int64)
    else:
        raise TypeError(f"time_us: dtype {times.dtype}, expected int64 microseconds or datetime64")
    return _encode((n,), unix_us - PG_EPOCH_US, location_id,
                   {"latitude": latitude, "longitude": longitude, **values}, data_columns)


def piece_slices(t: int, p: int, rows: int = PIECE_ROWS) -> Iterator[tuple[slice, slice]]:
    """(time steps, points) slices of T x P rows in pieces of at most ``rows`` rows that keep them in
    (time, point) order, the order a columnstore COPY is told they come in: runs of whole time steps
    when a step is smaller than a piece, else each step cut by points. (Cutting many hours by points
    first sent all hours of the first points, then all hours of the next: rows out of time order,
    which a direct-to-columnstore COPY told they are sorted stores with wrong batch bounds, so a read
    of one hour missed the second piece's points.)"""
    if t * p <= rows or p == 0:
        yield slice(0, t), slice(0, p)
    elif p <= rows:
        step = rows // p
        for a in range(0, t, step):
            yield slice(a, min(a + step, t)), slice(0, p)
    else:
        for d in range(t):
            for a in range(0, p, rows):
                yield slice(d, d + 1), slice(a, min(a + rows, p))
