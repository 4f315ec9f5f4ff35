"""The rows in memory: a download's rows as numpy columns, read through the product's stager (the form
every row-taking method is given)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from era5bench.common import BenchError

F32 = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Rows:
    """Rows as columns, in the table's units, sorted by time: what every row-taking method is given."""

    time: npt.NDArray[np.datetime64]  # datetime64[us], UTC
    location_id: npt.NDArray[np.int32]
    latitude: F32
    longitude: F32
    values: dict[str, F32]

    def __len__(self) -> int:
        return len(self.time)

    def part(self, a: int, b: int) -> Rows:
        return Rows(self.time[a:b], self.location_id[a:b], self.latitude[a:b], self.longitude[a:b],
                    {c: v[a:b] for c, v in self.values.items()})

    @property
    def columns(self) -> tuple[str, ...]:
        return ("time", "location_id", "latitude", "longitude", *self.values)

    def day_ranges(self) -> list[tuple[int, int]]:
        """Index ranges of the rows of each UTC day: each one hypertable chunk (1-day interval)."""
        day = self.time.astype("datetime64[D]")
        cuts = np.flatnonzero(day[1:] != day[:-1]) + 1
        edges = [0, *cuts.tolist(), len(self)]
        return list(itertools.pairwise(edges))


def read_rows(paths: Sequence[Path]) -> Rows:
    """A download's rows through the product's stager (so the values are exactly what load() sends)."""
    from era5etl.stage import open_download

    with open_download(list(paths)) as staged:
        if staged.location_id is None:
            raise BenchError("the bench's grid must be on the 0.25 degree lattice (location_id)")
        times, ids, lat, lon = [], [], [], []
        values: dict[str, list[F32]] = {v.column: [] for v in staged.variables}
        for block in staged.blocks(hours=max(1, len(staged.valid_time))):
            assert block.location_id is not None
            t, p = len(block.valid_time), len(block.latitude)
            times.append(np.repeat(block.valid_time.astype("datetime64[us]"), p))
            ids.append(np.tile(block.location_id, t))
            lat.append(np.tile(block.latitude, t))
            lon.append(np.tile(block.longitude, t))
            for c, a in block.values.items():
                values[c].append(a.reshape(-1))
    return Rows(np.concatenate(times), np.concatenate(ids), np.concatenate(lat), np.concatenate(lon),
                {c: np.concatenate(a) for c, a in values.items()})
