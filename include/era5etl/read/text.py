"""Values as text for CSV and JSON: times in ISO 8601 UTC, float4 values as the shortest decimals that
read back as the same float4, a missing value as an empty CSV field or a JSON null."""

# Imports inside functions: pyarrow loads only when CSV or Parquet is written.

from __future__ import annotations

import io
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # Arrow is imported by the CSV writer only: the other reads start without it
    import pyarrow as pa

# Decimal places tried for each value: enough for what the table holds (-95..65 degC, 0..1 of cloud,
# mm of precipitation down to 1e-9); a value none of them round-trips keeps its exact binary value.
_PLACES = range(13)


def iso_time_array(times: np.ndarray) -> pa.Array:
    """``2024-03-01T00:00:00Z`` for each time (numpy datetime64, UTC), as an Arrow string array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    naive = pa.array(np.datetime_as_string(times.astype("datetime64[s]"), unit="s"), type=pa.string())
    return pc.binary_join_element_wise(naive, "Z", "")


def iso_times(times: np.ndarray) -> list[str]:
    """``2024-03-01T00:00:00Z`` for each time (numpy datetime64, UTC)."""
    return [f"{t}Z" for t in np.datetime_as_string(times.astype("datetime64[s]"), unit="s")]


def offset_times(times: np.ndarray, minutes: int) -> list[str]:
    """``2024-03-01T00:00:00+07:00``: each time (UTC) on the clock of a fixed offset, with the offset."""
    local = (times + np.timedelta64(minutes, "m")).astype("datetime64[s]")
    suffix = f"{'+' if minutes >= 0 else '-'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    return [f"{t}{suffix}" for t in np.datetime_as_string(local, unit="s")]


def iso_time(moment: datetime) -> str:
    """``2024-03-01T00:00:00Z`` for a datetime (naive: UTC)."""
    naive = moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment
    return iso_times(np.array([np.datetime64(naive, "s")]))[0]


def shortest(values: np.ndarray) -> np.ndarray:
    """Each float4 as the float8 of its shortest decimal with at most 12 places that is the same
    float4 again (7.37, not 7.369999885559082): what a reader parses back is what the table holds.
    NaN (a NULL in the table) stays NaN."""
    narrow = np.asarray(values, dtype=np.float32)
    wide = narrow.astype(np.float64)
    out = wide.copy()
    todo = np.isfinite(narrow)
    for places in _PLACES:
        index = np.flatnonzero(todo)
        if index.size == 0:
            break
        rounded = np.round(wide[index], places)
        same = rounded.astype(np.float32) == narrow[index]
        out[index[same]] = rounded[same]
        todo[index[same]] = False
    return out


def decimals(values: np.ndarray) -> list[float | None]:
    """``shortest`` as Python floats, a NaN (a NULL in the table) as None."""
    return [None if v != v else v for v in shortest(values).tolist()]


def csv_columns(header: Sequence[str], columns: Sequence[np.ndarray | pa.Array | list[str]]) -> str:
    """CSV with ``header`` and one column per array (equal lengths): floats (``shortest``'s, NaN an
    empty field), integers, or strings (``iso_time_array``'s; never holding a comma or a quote).
    Written by Arrow's CSV writer, which formats a column at a time in C++: a place's 85 years of
    hourly rows (745,009 lines) in about a second, where Python's csv module takes several
    (docs/benchmarks.md)."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    arrays = [c if isinstance(c, pa.Array) else pa.array(c, from_pandas=True) for c in columns]
    table = pa.Table.from_arrays(arrays, names=[f"c{i}" for i in range(len(arrays))])
    out = io.BytesIO()
    pa_csv.write_csv(table, out, pa_csv.WriteOptions(include_header=False, quoting_style="none"))
    return ",".join(header) + "\n" + out.getvalue().decode()
