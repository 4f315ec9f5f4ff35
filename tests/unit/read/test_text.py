"""Values as text: what a CSV or JSON reader parses back is the float4 the table holds."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta, timezone

import numpy as np

from era5etl.read.text import csv_columns, decimals, iso_time, iso_time_array, iso_times, shortest


def test_decimals_read_back_as_the_same_float4_and_are_short() -> None:
    rng = np.random.default_rng(1)
    values = np.concatenate([
        rng.uniform(-95, 65, 20_000), rng.uniform(0, 1, 5_000), rng.exponential(1e-3, 5_000),
        [0.0, -0.0, 7.37, 1e-9, 123456789.0, 3.4e38, 1.17e-38, -273.15],
    ]).astype(np.float32)
    got = decimals(values)
    assert np.array_equal(np.array(got, dtype=np.float32), values)
    assert decimals(np.array([7.37, 0.1, 45.25], dtype=np.float32)) == [7.37, 0.1, 45.25]
    # Shortest decimals: never longer than numpy's own shortest float32 repr plus a couple of digits.
    longest = max(len(repr(g)) - len(str(v)) for g, v in zip(got[:20_000], values[:20_000], strict=True))
    assert longest <= 2


def test_a_missing_value_is_none() -> None:
    assert decimals(np.array([1.5, np.nan, -2.0], dtype=np.float32)) == [1.5, None, -2.0]
    assert decimals(np.array([], dtype=np.float32)) == []


def test_times_are_iso_utc() -> None:
    times = np.array(["2024-03-01T00:00:00", "2024-12-31T23:00:00"], dtype="datetime64[us]")
    assert iso_times(times) == ["2024-03-01T00:00:00Z", "2024-12-31T23:00:00Z"]
    assert iso_time(datetime(2024, 3, 1, 5, tzinfo=UTC)) == "2024-03-01T05:00:00Z"
    assert iso_time(datetime(2024, 3, 1, 7, tzinfo=timezone(timedelta(hours=2)))) == "2024-03-01T05:00:00Z"
    assert iso_time(datetime(2024, 3, 1, 5)) == "2024-03-01T05:00:00Z"  # naive: UTC


def test_csv_has_a_header_and_empty_fields_for_missing_values() -> None:
    times = iso_time_array(np.array(["2024-03-01T00", "2024-03-01T01"], dtype="datetime64[h]"))
    text = csv_columns(["time", "a", "b"], [times, shortest(np.array([1.5, np.nan], dtype=np.float32)),
                                             np.array([2, 3])])
    assert text == "time,a,b\n2024-03-01T00:00:00Z,1.5,2\n2024-03-01T01:00:00Z,,3\n"
    assert list(csv.DictReader(io.StringIO(text)))[1] == {"time": "2024-03-01T01:00:00Z", "a": "", "b": "3"}


def test_csv_values_read_back_as_the_float4_the_table_holds() -> None:
    rng = np.random.default_rng(2)
    values = np.concatenate([rng.uniform(-95, 65, 20_000), rng.exponential(1e-3, 5_000),
                             [0.0, -0.0, 7.37, 1e-9, 123456789.0, 3.4e38, 1.17e-38, np.nan]]).astype(np.float32)
    text = csv_columns(["v"], [shortest(values)])
    lines = text.splitlines()[1:]
    assert len(lines) == values.size
    back = np.array([float(v) if v else np.nan for v in lines], dtype=np.float32)
    assert np.array_equal(back, values, equal_nan=True)
    # As short as the float8 of the shortest decimal Python writes (Arrow writes 1e-9 for 1e-09).
    assert [line for line, v in zip(lines, shortest(values), strict=True) if v == v and len(line) > len(repr(v))] == []
