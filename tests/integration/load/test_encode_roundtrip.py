"""The binary COPY encoder against the real server: what goes in is what PostgreSQL stores."""

from __future__ import annotations

import math
import struct
from datetime import UTC, datetime

import numpy as np
import pytest

from era5etl.core.variables import DATA_COLUMNS
from era5etl.db import connect
from era5etl.load import encode

F4_MAX = float(np.finfo(np.float32).max)
F4_TINY = float(np.finfo(np.float32).smallest_subnormal)

TIMES = [
    datetime(1940, 1, 1, tzinfo=UTC),
    datetime(1969, 12, 31, 23, tzinfo=UTC),
    datetime(1970, 1, 1, tzinfo=UTC),
    datetime(1999, 12, 31, 23, tzinfo=UTC),
    datetime(2000, 1, 1, tzinfo=UTC),
    datetime(2000, 1, 1, 1, tzinfo=UTC),
    datetime(2024, 2, 29, 23, tzinfo=UTC),
    datetime(2100, 12, 31, 23, tzinfo=UTC),
]
SPECIALS = [0.0, -0.0, math.nan, F4_MAX, -F4_MAX, F4_TINY, math.inf, -math.inf, 1.5]


def _us(t: datetime) -> int:
    return int((t - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds()) * 1_000_000


@pytest.fixture
def plain_table(db_url: str) -> str:
    name = "copy_roundtrip"
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {name}")
        conn.execute(f"CREATE TABLE {name} (time timestamptz NOT NULL, location_id int, latitude float4, "
                     f"longitude float4, {', '.join(c + ' float4' for c in DATA_COLUMNS)})")
    return name


def _copy(url: str, table: str, payload: bytes) -> list[tuple[object, ...]]:
    cols = ", ".join(encode.COPY_COLUMNS)
    with connect(url) as conn:
        with conn.transaction(), conn.cursor() as cur:
            cur.execute(f"TRUNCATE {table}")
            with cur.copy(f"COPY {table} ({cols}) FROM STDIN (FORMAT BINARY)") as cp:
                cp.write(encode.HEADER + payload + encode.TRAILER)
        # float4send: the stored bits, so -0.0 and subnormals are compared exactly.
        sel = ", ".join(["time", "location_id", *[f"float4send({c})" for c in ("latitude", "longitude",
                                                                               *DATA_COLUMNS)]])
        return conn.execute(f"SELECT {sel} FROM {table} ORDER BY location_id").fetchall()


def test_roundtrip_specials_and_epochs(db_url: str, plain_table: str) -> None:
    n = len(SPECIALS) * len(TIMES)
    time_us = np.array([_us(t) for t in TIMES for _ in SPECIALS], dtype=np.int64)
    ids = np.arange(n, dtype=np.int32) - 3  # negative ids too
    values = np.array(SPECIALS * len(TIMES), dtype=np.float32)
    cols = {c: np.roll(values, k) for k, c in enumerate(DATA_COLUMNS[:-1])}  # snowfall absent -> NULL
    lat = np.linspace(-90, 90, n).astype(np.float32)
    lon = np.linspace(-179.75, 180, n).astype(np.float32)
    got = _copy(db_url, plain_table, encode.encode_rows(time_us, ids, lat, lon, cols))
    assert len(got) == n
    for i, row in enumerate(got):
        assert row[0] == TIMES[i // len(SPECIALS)]
        assert row[1] == ids[i]
        assert row[2] == struct.pack(">f", lat[i]) and row[3] == struct.pack(">f", lon[i])
        for k, c in enumerate(DATA_COLUMNS[:-1]):
            v = cols[c][i]
            if np.isnan(v):
                assert row[4 + k] is None, (i, c)  # NaN is NULL, not a float NaN
            else:
                assert row[4 + k] == struct.pack(">f", v), (i, c, v)
        assert row[-1] is None


def test_roundtrip_empty_batch(db_url: str, plain_table: str) -> None:
    empty = np.array([], dtype=np.float32)
    payload = encode.encode_rows(np.array([], dtype=np.int64), np.array([], dtype=np.int32), empty, empty,
                                 {c: empty for c in DATA_COLUMNS})
    assert payload == b""
    assert _copy(db_url, plain_table, payload) == []
