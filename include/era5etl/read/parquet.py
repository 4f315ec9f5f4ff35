"""A series as a Parquet file: the same rows and values as its CSV, typed as the table holds them.

``time`` is a UTC timestamp (microseconds), each value column float32 (a NULL stays null, not NaN)
and ``hours`` int64; the place, the step and each column's unit ride in the file's metadata, so a
file read back alone still says what it holds. pyarrow writes it: the reference implementation,
read by pandas, polars, DuckDB and Spark alike.
"""

from __future__ import annotations

import io
import json
from dataclasses import asdict

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from era5etl.read.columns import UNITS
from era5etl.read.series import Series


def series_table(s: Series) -> pa.Table:
    """The series as an Arrow table: ``time`` then one column per series column, in order."""
    arrays: list[pa.Array] = [pa.array(s.time.astype("datetime64[us]"), type=pa.timestamp("us", tz="UTC"))]
    for column in s.columns:
        values = s.values[column]
        if column == "hours":
            arrays.append(pa.array(values.astype(np.int64), type=pa.int64()))
        else:
            narrow = values.astype(np.float32)
            arrays.append(pa.array(narrow, type=pa.float32(), mask=np.isnan(narrow)))
    metadata = {"era5etl": json.dumps({"point": asdict(s.point), "step": s.step,
                                       "units": {c: UNITS.get(c, "") for c in s.columns}})}
    return pa.Table.from_arrays(arrays, names=["time", *s.columns]).replace_schema_metadata(metadata)


def series_parquet(s: Series) -> bytes:
    """The series as the bytes of one Parquet file (zstd-compressed)."""
    out = io.BytesIO()
    pq.write_table(series_table(s), out, compression="zstd")
    return out.getvalue()
