"""One hour's field (read.hour) read back from a real hypertable of the test server: every point's
values at that hour and no other's, in their binary form unpacked to 4-byte ints and floats, NULLs as NaN."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from psycopg import sql

from era5etl.db import connect
from era5etl.read.hour import HOUR_COLUMNS, hour_columns

pytestmark = pytest.mark.integration

HOUR = datetime(2024, 1, 1, 6, tzinfo=UTC)


def test_one_hours_values_are_the_rows_at_that_hour(db_url: str, table: str) -> None:
    rows = [(HOUR, 10, 45.0, 7.0, 1.5, 0.25), (HOUR, 11, 45.0, 7.25, -3.125, None),
            (datetime(2024, 1, 1, 7, tzinfo=UTC), 10, 45.0, 7.0, 99.0, 9.0)]
    with connect(db_url) as conn:
        with conn.cursor() as cur:
            cur.executemany(sql.SQL("INSERT INTO {} (time, location_id, latitude, longitude, temperature_2m,"
                                    " total_precipitation) VALUES (%s, %s, %s, %s, %s, %s)").format(
                                        sql.Identifier(table)), rows)
        got = hour_columns(conn, table, HOUR, list(HOUR_COLUMNS))
        empty = hour_columns(conn, table, datetime(2024, 1, 2, tzinfo=UTC), ["location_id", "temperature_2m"])
        conn.rollback()
    order = np.argsort(got["location_id"])
    # The server's binary form, unpacked as it is sent (big-endian): 4-byte ints and floats.
    assert (got["location_id"].dtype.kind, got["location_id"].dtype.itemsize) == ("i", 4)
    assert (got["temperature_2m"].dtype.kind, got["temperature_2m"].dtype.itemsize) == ("f", 4)
    assert got["location_id"][order].tolist() == [10, 11]
    assert got["longitude"][order].tolist() == [7.0, 7.25]
    assert got["temperature_2m"][order].tolist() == [1.5, -3.125]
    precipitation = got["total_precipitation"][order]
    assert precipitation[0] == 0.25 and np.isnan(precipitation[1])
    assert all(len(v) == 0 for v in empty.values())
