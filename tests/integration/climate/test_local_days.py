"""--tz: a UTC-8 place's daily maximum is the maximum of its local day's hours, the hourly rows shifted
by the offset in SQL here, not the UTC day's of the rollup."""

from __future__ import annotations

from datetime import UTC, date, datetime

import numpy as np

from era5etl.db import connect
from era5etl.read.places import find_place
from era5etl.read.points import nearest_point

from ..helpers import cli


def _local_maxima(db_url: str, table: str, location_id: int) -> dict[date, tuple[float, int]]:
    # Written apart from the product's statement: the instant moved to the offset's wall clock, cast to a date.
    with connect(db_url) as conn:
        conn.execute("SET TIME ZONE 'UTC'")
        rows = conn.execute(
            f"SELECT (time - interval '8 hours')::date AS d, max(temperature_2m), count(*) FROM {table}"
            " WHERE location_id = %s AND time >= %s AND time < %s GROUP BY d ORDER BY d",
            (location_id, datetime(2000, 1, 1, 8, tzinfo=UTC), datetime(2001, 1, 1, 8, tzinfo=UTC))).fetchall()
    return {r[0]: (float(r[1]), int(r[2])) for r in rows}


def test_the_daily_maximum_of_a_utc_minus_8_place_is_its_local_days(db_url: str, places_table: str) -> None:
    code, out, err, data = cli("series", "--place", "Los Angeles", "--country", "US", "--daily", "--tz", "local",
                               "--from", "2000-01-01", "--to", "2000-12-31", "--variables", "temperature_2m,hours",
                               "--table", places_table, "--json")
    assert code == 0, out + err
    assert "days of UTC-08:00 from the hourly rows" in out.splitlines()[0]
    assert data is not None and data["utc_offset_hours"] == -8
    assert data["time"][0] == "2000-01-01T00:00:00-08:00" and data["time"][-1] == "2000-12-31T00:00:00-08:00"
    la = find_place("Los Angeles", "US")
    with connect(db_url) as conn:
        point = nearest_point(conn, places_table, la.latitude, la.longitude)
    want = _local_maxima(db_url, places_table, point.location_id)
    assert len(want) == 366 and all(hours == 24 for _, hours in want.values())
    got = np.array(data["values"]["temperature_2m_max"], dtype=np.float32)
    assert np.array_equal(got, np.array([v for v, _ in want.values()], dtype=np.float32))
    assert data["values"]["hours"] == [24] * 366
    # The same offset given as a number reads the same days.
    code, _, err, fixed = cli("series", "34.05", "-118.24", "--daily", "--tz=-08:00", "--from", "2000-01-01",
                              "--to", "2000-12-31", "--variables", "temperature_2m_max", "--table", places_table,
                              "--json")
    assert code == 0, err
    assert fixed is not None and fixed["values"]["temperature_2m_max"] == data["values"]["temperature_2m_max"]
    # And they are not the UTC days of the rollup: the afternoon maxima fall in other days.
    code, _, err, utc = cli("series", "34.05", "-118.24", "--daily", "--from", "2000-01-01", "--to", "2000-12-31",
                            "--variables", "temperature_2m_max", "--table", places_table, "--json")
    assert code == 0, err
    assert utc is not None and "utc_offset_hours" not in utc
    differ = np.array(utc["values"]["temperature_2m_max"]) != got
    assert differ.sum() > 30


def test_tz_is_for_daily_series_of_a_place(places_table: str) -> None:
    code, _, err, _ = cli("series", "34.05", "-118.24", "--tz", "-8", "--table", places_table)
    assert code == 2 and "a day boundary (tz) is for daily series" in err
    code, _, err, _ = cli("series", "34.05", "-118.24", "--daily", "--tz", "local", "--table", places_table)
    assert code == 2 and "--tz local needs a place by name" in err
