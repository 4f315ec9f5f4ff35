"""One hour's field: every grid point's values at one time, one array per column; or a run of hours'
rows at once (:func:`hours_columns`), each batch of the columnstore decoded once for the run."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from era5etl.db import table_ident
from era5etl.read.packed import packed, unpack

# The hour slice's columns: where each point is and two of its values, as a map of one variable needs.
HOUR_COLUMNS = ("location_id", "latitude", "longitude", "temperature_2m", "total_precipitation")


def hour_statement(table: str, columns: list[str], level: bool = False) -> sql.Composed:
    """One hour's field as one row: each column's values concatenated in their binary form
    (``read.packed``: a million rows cost the client more as rows than the server spends reading them).
    ``level``: a table on pressure levels, read at one level (the second parameter)."""
    parts = [packed(sql.Identifier(c), "int4" if c == "location_id" else "float4") for c in columns]
    return sql.SQL("SELECT {} FROM {} WHERE time = %s AND location_id IS NOT NULL{}").format(
        sql.SQL(", ").join(parts), table_ident(table), sql.SQL(" AND level = %s") if level else sql.SQL(""))


def hour_columns(conn: psycopg.Connection[Any], table: str, at: datetime | str, columns: list[str],
                 level: int | None = None) -> dict[str, np.ndarray]:
    """One hour's values of ``columns`` (``location_id`` as int32, the rest float32), one array each;
    at ``level`` (hPa) for a table on pressure levels."""
    params = (at,) if level is None else (at, level)
    row = conn.cursor(binary=True).execute(hour_statement(table, columns, level is not None), params).fetchone()
    return {c: unpack(b, "int4" if c == "location_id" else "float4")
            for c, b in zip(columns, row or [None] * len(columns), strict=True)}


def hours_columns(conn: psycopg.Connection[Any], table: str, start: datetime, end: datetime, columns: list[str],
                  level: int | None = None) -> dict[str, np.ndarray]:
    """The rows of the hours in [start, end) as :func:`hour_columns` gives one hour's, with ``time``
    (datetime64[us], UTC) beside ``columns``, in no particular order. One statement: where a
    columnstore batch holds many hours of a point (a table in tiles) it is decoded once for the run,
    not once an hour."""
    parts = [packed(sql.Identifier("time"), "timestamptz")]
    parts += [packed(sql.Identifier(c), "int4" if c == "location_id" else "float4") for c in columns]
    statement = sql.SQL("SELECT {} FROM {} WHERE time >= %s AND time < %s AND location_id IS NOT NULL{}").format(
        sql.SQL(", ").join(parts), table_ident(table), sql.SQL(" AND level = %s") if level is not None else sql.SQL(""))
    params = (start, end) if level is None else (start, end, level)
    row = conn.cursor(binary=True).execute(statement, params).fetchone()
    values = list(row) if row else [None] * (len(columns) + 1)
    out = {"time": unpack(values[0], "timestamptz")}
    out.update({c: unpack(b, "int4" if c == "location_id" else "float4")
                for c, b in zip(columns, values[1:], strict=True)})
    return out
