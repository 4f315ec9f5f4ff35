"""Columns packed as one row: the bytes PostgreSQL's send functions produce, back as arrays."""

from __future__ import annotations

import numpy as np
from psycopg import sql

from era5etl.read.packed import packed, unpack


def test_unpack_reads_network_order_and_times_from_2000() -> None:
    assert unpack(np.array([1, -2], dtype=">i4").tobytes(), "int4").tolist() == [1, -2]
    assert unpack(np.array([2**40], dtype=">i8").tobytes(), "int8").tolist() == [2**40]
    floats = unpack(np.array([1.5, np.nan], dtype=">f4").tobytes(), "float4")
    assert floats[0] == 1.5 and np.isnan(floats[1])
    micros = np.array([0, 86_400_000_000 + 3_600_000_000], dtype=">i8").tobytes()
    assert [str(t) for t in unpack(micros, "timestamptz")] == ["2000-01-01T00:00:00.000000",
                                                               "2000-01-02T01:00:00.000000"]
    assert unpack(None, "float4").size == 0


def test_a_null_float_is_sent_as_nan() -> None:
    text = packed(sql.Identifier("snowfall"), "float4").as_string(None)
    assert "coalesce(float4send((\"snowfall\")::float4), float4send('NaN'::float4))" in text
    assert packed(sql.Identifier("time"), "timestamptz").as_string(None) == \
        "string_agg(timestamptz_send(\"time\"), ''::bytea)"
