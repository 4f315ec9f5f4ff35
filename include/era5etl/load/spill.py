"""The rolled-up values of one-hour days read in runs of levels, kept on disk until their rows go out.

A global hour on 37 pressure levels is 38.4M (level, point) rollup rows, read as runs of levels of
about a million (``load.loader.block_levels``). When the load holds that one hour of its UTC day (a
*lone* day, ``load.rollup.WindowRollup.adopt``), each run already holds its points' whole day: the
day's rows are the hour's values. Summing them into arrays over all 38.4M columns, as a day of
several hours needs, held 5.9 GB of client memory (docs/benchmarks.md#rollups-on-pressure-levels).
Instead each run's values go to an unlinked temporary file as they pass (4 bytes a variable and
row, 8 for a wind speed), and are read back one run at a time: for the chunk's daily rows once its
hourly rows are copied, and for the month's rows once the chunks are committed (``load.monthly``).
Memory then follows a run, not the globe; the disk holds the hour's rolled-up values once (922 MB
for the global hour's six variables), and the operating system's page cache usually serves them
back.
"""

from __future__ import annotations

import tempfile
import threading
from dataclasses import dataclass
from typing import IO

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class SpilledRun:
    """One run of levels of a one-hour day: its columns among the load's points, where its values are."""

    day: np.datetime64
    cols: slice
    # Each variable's (dtype, offset in the file, length).
    at: tuple[tuple[str, str, int, int], ...]


class Spill:
    """An unlinked temporary file of runs' values, written and read by the threads of one load."""

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._lock = threading.Lock()

    def put(self, day: np.datetime64, cols: slice, hour: dict[str, npt.NDArray[np.floating]]) -> SpilledRun:
        at: list[tuple[str, str, int, int]] = []
        with self._lock:
            if self._file is None:
                # kept open for the load, closed by close(); unlinked already, so never left behind
                self._file = tempfile.TemporaryFile(prefix="era5-rollup-")  # noqa: SIM115
            f = self._file
            f.seek(0, 2)
            for variable, values in hour.items():
                at.append((variable, values.dtype.str, f.tell(), values.size))
                np.ascontiguousarray(values).tofile(f)
        return SpilledRun(day, cols, tuple(at))

    def get(self, run: SpilledRun) -> dict[str, npt.NDArray[np.floating]]:
        with self._lock:
            assert self._file is not None
            f = self._file
            f.flush()
            out: dict[str, npt.NDArray[np.floating]] = {}
            for variable, dtype, offset, size in run.at:
                f.seek(offset)
                out[variable] = np.fromfile(f, dtype=np.dtype(dtype), count=size)
            return out

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
