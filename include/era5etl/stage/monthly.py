"""A download of monthly means read as rows of months: each time step of the files becomes the month it
means (``period`` month: 00 UTC on the 1st) or that month's hour of the day (``month_by_hour``).

Why the files' times are not the rows' times: the new CDS splits a monthly-means download by step
type, and the accumulation's file stamps each month at 06 UTC on the 1st while the instantaneous file
stamps 00 UTC (the base time of the forecasts the accumulations come from); both are the same month.
By hour of day, an accumulation's field is stamped at the end of its hour, from 07 UTC on the 1st to
06 UTC on the 2nd (bases 06 and 18 UTC, steps 0-1 .. 11-12), while the instantaneous fields are at
00 .. 23 UTC on the 1st: the hour of the day is the valid time's, the month the one it falls in.

Every column of a row comes from the file times that mean that row; a column found at two of them
keeps the first (they are the same field: a file never holds a month twice), and the notes say so.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from era5etl.core.datasets import Dataset
from era5etl.stage.block import DT64, F32, Block, BlockReader, StagedDownload

_HOUR = 3600


def row_times(valid_time: DT64, dataset: Dataset) -> DT64:
    """The row time each valid time means (datetime64[s])."""
    t = np.asarray(valid_time).astype("datetime64[s]")
    month = t.astype("datetime64[M]").astype("datetime64[s]")
    if dataset.period == "month":
        return month
    if dataset.period == "month_by_hour":
        hour = (t.astype(np.int64) % 86400) // _HOUR
        by_hour: DT64 = month + hour.astype("timedelta64[h]")
        return by_hour
    raise ValueError(f"{dataset.name} is not a monthly dataset")


class MonthlyDownload(BlockReader):
    def __init__(self, inner: StagedDownload, dataset: Dataset) -> None:
        self._inner = inner
        self.dataset = dataset
        self.paths = inner.paths
        self.parts = inner.parts
        self.variables = inner.variables
        self.ignored = inner.ignored
        self.missing_columns = inner.missing_columns
        self.expver = inner.expver
        self.notes = list(inner.notes)
        mapped = row_times(inner.valid_time, dataset)
        self.valid_time: DT64 = np.unique(mapped)
        self._out_index = np.searchsorted(self.valid_time, mapped)
        shifted = int((mapped != np.asarray(inner.valid_time).astype("datetime64[s]")).sum())
        if shifted:
            what = "its month" if dataset.period == "month" else "its month's hour of the day"
            self.notes.append(f"{shifted} of the files' {len(mapped)} time steps are stamped off the row they "
                              f"mean ({what}): read as {len(self.valid_time)} row time(s)")
        self.dtype = getattr(inner, "dtype", np.float32)

    def __getattr__(self, name: str) -> Any:  # what only one stager has (land_points, time_chunk, ...)
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._inner, name)

    @property
    def points(self) -> int:
        return self._inner.points

    @property
    def latitude(self) -> F32:
        return self._inner.latitude

    @property
    def longitude(self) -> F32:
        return self._inner.longitude

    @property
    def location_id(self) -> npt.NDArray[np.int32] | None:
        return self._inner.location_id

    @property
    def level(self) -> npt.NDArray[np.int16] | None:
        return self._inner.level

    @property
    def levels(self) -> tuple[int, ...]:
        return self._inner.levels

    @property
    def rows(self) -> int:
        return len(self.valid_time) * self.points

    def _blocks(self, i0: int, i1: int, hours: int, run: tuple[int, int] | None = None) -> Iterator[Block]:
        for a in range(i0, i1, hours):
            b = min(a + hours, i1)
            wanted = np.flatnonzero((self._out_index >= a) & (self._out_index < b))
            if not wanted.size:
                continue
            j0, j1 = int(wanted[0]), int(wanted[-1]) + 1
            values: dict[str, F32] = {}
            for block in self._inner._blocks(j0, j1, j1 - j0):  # type: ignore[attr-defined]
                index = self._out_index[j0:j0 + len(block.valid_time)] - a
                j0 += len(block.valid_time)
                for column, x in block.values.items():
                    out = values.setdefault(column, np.full((b - a, x.shape[1]), np.nan, dtype=x.dtype))
                    for k, o in enumerate(index):
                        if 0 <= o < b - a:
                            empty = np.isnan(out[o])
                            out[o, empty] = x[k, empty]
            yield Block(self.valid_time[a:b].copy(), self.location_id, self.latitude, self.longitude, values,
                        self.level)

    def _release(self) -> None:
        self._inner.close()

    def __repr__(self) -> str:
        return f"<MonthlyDownload {self.dataset.name} of {self._inner!r}: {len(self.valid_time)} row times>"
