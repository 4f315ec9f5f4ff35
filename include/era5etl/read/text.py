"""Values as text for CSV and JSON: times in ISO 8601 UTC, float4 values as the shortest decimals that
read back as the same float4, a missing value as an empty CSV field or a JSON null."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np

# Decimal places tried for each value: enough for what the table holds (-95..65 degC, 0..1 of cloud,
# mm of precipitation down to 1e-9); a value none of them round-trips keeps its exact binary value.
_PLACES = range(13)


def iso_times(times: np.ndarray) -> list[str]:
    """``2024-03-01T00:00:00Z`` for each time (numpy datetime64, UTC)."""
    return [str(t) for t in np.datetime_as_string(times.astype("datetime64[s]"), unit="s", timezone="UTC")]


def offset_times(times: np.ndarray, minutes: int) -> list[str]:
    """``2024-03-01T00:00:00+07:00``: each time (UTC) on the clock of a fixed offset, with the offset."""
    local = (times + np.timedelta64(minutes, "m")).astype("datetime64[s]")
    suffix = f"{'+' if minutes >= 0 else '-'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    return [f"{t}{suffix}" for t in np.datetime_as_string(local, unit="s")]


def iso_time(moment: datetime) -> str:
    """``2024-03-01T00:00:00Z`` for a datetime (naive: UTC)."""
    naive = moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment
    return iso_times(np.array([np.datetime64(naive, "s")]))[0]


def decimals(values: np.ndarray) -> list[float | None]:
    """Each float4 as the float8 of its shortest decimal with at most 12 places that is the same
    float4 again (7.37, not 7.369999885559082): what a reader parses back is what the table holds.
    NaN (a NULL in the table) is None."""
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
    return [None if v != v else v for v in out.tolist()]


def csv_text(header: Sequence[str], columns: Sequence[Sequence[str | float | None]]) -> str:
    """CSV with ``header`` and one column per sequence (equal lengths); None is an empty field."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(zip(*columns, strict=True))
    return out.getvalue()
