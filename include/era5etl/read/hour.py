"""One hour's field: every grid point's values at one time, one array per column."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np
from psycopg import sql

from era5etl.db import table_ident

# The hour slice's columns: where each point is and two of its values, as a map of one variable needs.
HOUR_COLUMNS = ("location_id", "latitude", "longitude", "temperature_2m", "total_precipitation")


def hour_statement(table: str, columns: list[str]) -> sql.Composed:
    """One hour's field as one row: each column's values concatenated in their binary form.

    A program that draws or computes on an hour wants one array per column, not a million rows: COPY
    sends each row as its own message and the client handles a million of them (about 600 ms for
    two columns of a global hour, where the server spends 200), while ``string_agg`` of each
    value's ``*send`` form comes back as one bytes object per column that numpy views without a
    copy. Every aggregate sees the rows in the same order, so the arrays line up; a missing value
    arrives as NaN rather than being skipped.
    """
    nan = sql.SQL("float4send('NaN'::float4)")
    parts = [sql.SQL("string_agg(int4send({}), ''::bytea)").format(sql.Identifier(c)) if c == "location_id"
             else sql.SQL("string_agg(coalesce(float4send({}), {}), ''::bytea)").format(sql.Identifier(c), nan)
             for c in columns]
    return sql.SQL("SELECT {} FROM {} WHERE time = %s AND location_id IS NOT NULL").format(
        sql.SQL(", ").join(parts), table_ident(table))


def hour_columns(conn: Any, table: str, at: datetime | str, columns: list[str]) -> dict[str, np.ndarray]:
    """One hour's values of ``columns`` (``location_id`` as int32, the rest float32), one array each."""
    row = conn.cursor(binary=True).execute(hour_statement(table, columns), (at,)).fetchone()
    return {c: np.frombuffer(b or b"", dtype=">i4" if c == "location_id" else ">f4")
            for c, b in zip(columns, row or [None] * len(columns), strict=True)}
