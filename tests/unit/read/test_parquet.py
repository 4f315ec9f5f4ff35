"""A series as Parquet: read back with pyarrow, the same rows and values as its CSV, NULLs as nulls."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from era5etl.read.parquet import series_parquet
from era5etl.read.points import Point
from era5etl.read.series import Series, series_csv


def test_parquet_reads_back_as_the_csv() -> None:
    times = np.arange(np.datetime64("2024-01-01", "D"), np.datetime64("2024-02-01", "D")).astype("datetime64[us]")
    rng = np.random.default_rng(7)
    values = {"temperature_2m_mean": rng.normal(3, 4, times.size).astype(np.float32),
              "total_precipitation_sum": rng.gamma(0.5, 2, times.size).astype(np.float32),
              "hours": np.full(times.size, 24, np.int64)}
    values["temperature_2m_mean"][5] = np.nan  # a NULL in the table
    s = Series(Point(42, 45.5, 7.5, 1.25), "day", list(values), times, values)

    table = pq.read_table(io.BytesIO(series_parquet(s)))
    assert table.column_names == ["time", "temperature_2m_mean", "total_precipitation_sum", "hours"]
    assert table.schema.field("time").type == pa.timestamp("us", tz="UTC")
    assert table.schema.field("temperature_2m_mean").type == pa.float32()
    assert table.schema.field("hours").type == pa.int64()
    meta = json.loads(table.schema.metadata[b"era5etl"])
    assert meta["point"]["location_id"] == 42 and meta["step"] == "day"
    assert meta["units"]["temperature_2m_mean"] == "degC"

    rows = list(csv.DictReader(io.StringIO(series_csv(s))))
    assert table.num_rows == len(rows) == times.size
    got = table.to_pylist()
    for row, back in zip(rows, got, strict=True):
        assert back["time"].strftime("%Y-%m-%dT%H:%M:%SZ") == row["time"]
        for c in ("temperature_2m_mean", "total_precipitation_sum"):
            expected = None if row[c] == "" else np.float32(row[c])
            assert (back[c] is None and expected is None) or np.float32(back[c]) == expected, (c, row, back)
        assert back["hours"] == int(row["hours"])
    assert got[5]["temperature_2m_mean"] is None
