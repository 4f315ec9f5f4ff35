"""The unit a staged download is read in (a block of time steps in table columns), what every
staged download offers whatever its format, and the error staging raises."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, Self

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from era5etl.core.variables import Variable

DT64 = npt.NDArray[np.datetime64]
F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]



def dt64(moment: datetime) -> np.datetime64:
    """A datetime as numpy microseconds; naive ones are taken as UTC."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return np.datetime64(moment, "us")


def time_span(valid_time: DT64, start: datetime | None, end: datetime | None) -> tuple[int, int]:
    """The indices [i0, i1) of ``valid_time`` (sorted) inside [start, end)."""
    vt = valid_time.astype("datetime64[us]")
    i0 = 0 if start is None else int(np.searchsorted(vt, dt64(start), "left"))
    i1 = len(vt) if end is None else int(np.searchsorted(vt, dt64(end), "left"))
    return i0, i1


@dataclass
class Block:
    """A run of consecutive time steps over all grid points, in table columns and units."""

    valid_time: DT64  # (T,) datetime64[s], UTC
    # (P,) latitude-major in file order (ERA5-Land's land points: location_id order), shared between
    # blocks; None for a grid off the global 0.25 degree lattice, whose points have no location_id
    # (stored NULL).
    location_id: npt.NDArray[np.int32] | None
    latitude: F32  # (P,)
    longitude: F32  # (P,) in (-180, 180]
    values: dict[str, F32]  # column -> (T, P), NaN where missing; only the columns the download holds
    # (P,) hPa for a download on pressure levels, whose P runs over (level, point) pairs level-major
    # (levels ascending, each level's points as above); None for a dataset without levels.
    level: npt.NDArray[np.int16] | None = None

    @property
    def rows(self) -> int:
        return len(self.valid_time) * len(self.latitude)


def grid_block(valid_time: DT64, values: dict[str, F32], p: slice | None,
               grid: tuple[npt.NDArray[np.int32] | None, F32, F32, npt.NDArray[np.int16] | None]) -> Block:
    """A block on the download's grid arrays (location_id, latitude, longitude, level): the arrays
    themselves, shared by every block, or for a run of levels their level-major slice ``p``."""
    ids, lat, lon, level = grid
    if p is None:
        return Block(valid_time, ids, lat, lon, values, level)
    return Block(valid_time, None if ids is None else ids[p], lat[p], lon[p], values,
                 None if level is None else level[p])


def level_points(points: int, levels: int, run: tuple[int, int] | None) -> slice:
    """The slice of a download's level-major P axis (``points`` in all, over ``levels`` levels) that
    holds the levels run[0]..run[1]-1; all of it when ``run`` is None."""
    if run is None:
        return slice(0, points)
    per_level = points // max(levels, 1)
    return slice(run[0] * per_level, run[1] * per_level)


class StagedDownload(Protocol):
    """A download opened for loading: the NetCDF stager's ``NetcdfDownload`` or the GRIB stager's
    ``GribDownload`` (``open_download`` picks by the files' first bytes). The loader needs only this."""

    paths: list[Path]
    parts: list[str]  # every file read, ZIP members included, as messages name them
    variables: list[Variable]  # the table's variables the download holds, in column order
    ignored: list[str]  # what is in the files but not loaded, named
    missing_columns: list[str]
    notes: list[str]  # what was found and resolved (GRIB: ERA5T beside final ERA5, duplicate hours)
    valid_time: DT64  # sorted, unique
    expver: list[str]  # of the values loaded

    @property
    def points(self) -> int: ...
    @property
    def latitude(self) -> F32: ...
    @property
    def longitude(self) -> F32: ...
    @property
    def location_id(self) -> npt.NDArray[np.int32] | None: ...
    @property
    def level(self) -> npt.NDArray[np.int16] | None: ...  # (P,) hPa, or None: no levels
    @property
    def levels(self) -> tuple[int, ...]: ...  # the levels held, ascending hPa; () for none
    @property
    def rows(self) -> int: ...
    def blocks(self, start: datetime | None = None, end: datetime | None = None, hours: int = 1,
               levels: int = 0) -> Iterator[Block]: ...
    def read_column(self, column: str, i0: int, i1: int) -> F32 | F64: ...
    def release_column(self, column: str) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> StagedDownload: ...
    def __exit__(self, *exc: object) -> None: ...


class BlockReader:
    """What both stagers share: ``blocks`` checks its arguments at the call, finds the window's time
    steps and hands them to the format's ``_blocks``; ``close`` ends reading; a context manager."""

    valid_time: DT64
    _closed: bool = False
    # What blocks' values are: float32 in table units; the ERA5-Land stager (stage.land) asks its
    # inner reader for float64 file values (unit-free variables) and makes the table's from them.
    dtype: type[np.floating] = np.float32

    def blocks(self, start: datetime | None = None, end: datetime | None = None, hours: int = 1,
               levels: int = 0) -> Iterator[Block]:
        """Blocks of ``hours`` consecutive time steps (of the download, not of the clock) in [start, end).

        ``levels``: on pressure levels, at most this many levels a block (0: all of them). A block cut
        by levels holds one time step and a run of ascending levels, so the blocks still come in
        (time, level, point) order and memory follows the run, not the 37 levels of an hour.
        Naive datetimes are taken as UTC. Only what each block holds is read from disk.
        """
        if hours < 1:
            raise ValueError(f"hours must be at least 1, not {hours}")
        if levels < 0:
            raise ValueError(f"levels must be 0 (all) or more, not {levels}")
        if self._closed:
            raise ValueError("the staged download is closed")
        i0, i1 = time_span(self.valid_time, start, end)
        # Not a generator itself, so bad arguments fail at the call rather than at the first next().
        # Every staged download says its levels (StagedDownload.levels: () for none), some as a property.
        if levels and len(getattr(self, "levels", ())) > levels:
            return self._level_runs(i0, i1, levels)
        return self._blocks(i0, i1, hours)

    def _level_runs(self, i0: int, i1: int, levels: int) -> Iterator[Block]:
        count = len(getattr(self, "levels", ()))
        for t in range(i0, i1):
            for k0 in range(0, count, levels):
                yield from self._blocks(t, t + 1, 1, (k0, min(k0 + levels, count)))

    def _blocks(self, i0: int, i1: int, hours: int, run: tuple[int, int] | None = None) -> Iterator[Block]:
        """Blocks of ``hours`` steps from i0 to i1; ``run``: only the levels run[0]..run[1]-1 (indices
        into ``levels``), for a download on pressure levels."""
        raise NotImplementedError

    def read_column(self, column: str, i0: int, i1: int) -> F32 | F64:
        """One column's time steps i0..i1-1 at every point, (steps, points) in ``dtype``: for a reader
        that goes variable by variable (stage.land), holding one variable's chunks at a time."""
        raise NotImplementedError

    def release_column(self, column: str) -> None:
        """Give back what reading ``column`` cached (HDF5 chunks): the next read needs other chunks."""

    def _release(self) -> None:
        """Give back what the files hold open (called once, by ``close``)."""

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._release()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
