"""The unit a staged download is read in: a block of time steps in table columns, and the error
staging raises."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

DT64 = npt.NDArray[np.datetime64]
F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]


class StageError(Exception):
    """A download that cannot be staged; the message names the file and what is wrong with it."""


@dataclass
class Block:
    """A run of consecutive time steps over all grid points, in table columns and units."""

    valid_time: DT64  # (T,) datetime64[s], UTC
    # (P,) latitude-major in file order, shared between blocks; None for a grid off the global 0.25
    # degree lattice, whose points have no location_id (stored NULL).
    location_id: npt.NDArray[np.int32] | None
    latitude: F32  # (P,)
    longitude: F32  # (P,) in (-180, 180]
    values: dict[str, F32]  # column -> (T, P), NaN where missing; only the columns the download holds

    @property
    def rows(self) -> int:
        return len(self.valid_time) * len(self.latitude)
