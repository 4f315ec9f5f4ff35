"""Columns read as one row: each column's values in their binary form concatenated by ``string_agg``.

A program that draws or computes on many rows wants one array per column, not rows: COPY sends each
row as its own message and the client handles every one (a global hour, a million rows, about 600 ms
for two columns where the server spends 200), while ``string_agg`` of each value's ``*send`` form
comes back as one bytes object per column that numpy views without a copy. Every aggregate of one
query sees the rows in the same order, so the arrays line up; a missing float arrives as NaN rather
than being skipped (an integer or time column must not be NULL).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from psycopg import sql

Kind = Literal["int4", "int8", "float4", "float8", "timestamptz"]

# Each kind's send function and the numpy dtype of its binary form (network order).
_FORMS: dict[str, tuple[str, str]] = {
    "int4": ("int4send", ">i4"),
    "int8": ("int8send", ">i8"),
    "float4": ("float4send", ">f4"),
    "float8": ("float8send", ">f8"),
    "timestamptz": ("timestamptz_send", ">i8"),  # microseconds since 2000-01-01 00:00 UTC
}
POSTGRES_EPOCH = np.datetime64("2000-01-01T00:00:00", "us")


def packed(expr: sql.Composable, kind: Kind) -> sql.Composed:
    """``string_agg`` of ``expr``'s binary values as ``kind``; a NULL float becomes NaN."""
    send = sql.SQL(_FORMS[kind][0])
    if kind in ("float4", "float8"):
        return sql.SQL("string_agg(coalesce({send}(({expr})::{kind}), {send}('NaN'::{kind})), ''::bytea)").format(
            send=send, expr=expr, kind=sql.SQL(kind))
    return sql.SQL("string_agg({send}({expr}), ''::bytea)").format(send=send, expr=expr)


def unpack(data: bytes | None, kind: Kind) -> np.ndarray:
    """The array ``packed`` sent: a view of the bytes in network order, or for a time, datetime64[us]
    (naive, UTC)."""
    values = np.frombuffer(data or b"", dtype=_FORMS[kind][1])
    if kind == "timestamptz":
        return POSTGRES_EPOCH + values.astype(np.int64).astype("timedelta64[us]")
    return values
