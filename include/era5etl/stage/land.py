"""ERA5-Land's two conventions, applied to a staged download: land points only, hourly amounts.

**The land mask comes from the data.** ERA5-Land has values over land only: sea points are NaN in
its NetCDF and missing in its GRIB bitmaps. A point is land when any variable has a value there at
any hour of the download; the others are sea and are not rows. A point that is land in one variable
and missing at every hour in another (never seen in the CDS's files, but a download could join parts
cut differently) is a row, with the other variable NULL, and ``notes`` says how many such points each
variable has. A download with no land point at all (an area all sea) is refused: ERA5-Land has
nothing there, and an empty load would look like success.

**Accumulations become hourly amounts.** ERA5-Land's accumulated variables (``step_type`` accum:
precipitation, runoff, evaporation, radiation, ...) are running totals from 00 UTC, whatever the GRIB
step labels say: the value valid at 06 UTC is 00-06 UTC's total, and the value valid at 00 UTC is the
previous day's 24-hour total. The table stores the hour ending at the valid time, as for ERA5:

* at 01 UTC, the value itself (the first hour of the day's total);
* at any other hour h, the value at h minus the value at h - 1 hour (at 00 UTC: the previous day's
  total minus its 23 UTC value).

The difference is taken on the file's values as decoded (float64), then the unit change, then float32,
so a loaded value is exactly ``float32((R(h) - R(h-1)) * scale + offset)``. An hour whose previous
hour is not in the download (a month's first 00 UTC when the previous day's 23 UTC was not fetched,
a single downloaded day's 00 UTC, a file of every 4th hour) has no hourly amount: its accumulations
are stored NULL, never the running total, and ``notes`` names how many hours and the first of them.
Differences are not clipped: a running total that dips (GRIB packing) gives a small negative amount,
as the data say.

The inner stager (NetCDF or GRIB) is asked for the file's values, unit-free, in float64; this reader
does the mask, the differences and the unit change. Reading the mask costs one pass over the file
before loading.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from era5etl.core.catalogue import Variable
from era5etl.core.datasets import Dataset
from era5etl.stage.block import DT64, F32, Block, BlockReader, StagedDownload
from era5etl.stage.errors import StageError
from era5etl.stage.points import readonly

_MASK_ROWS = 2_000_000  # values a variable per block while reading the mask
# Values of one variable read at once while loading: a band of latitude rows over some time steps
# (stage.land._bands); with one row of the file's chunks cached, what reading holds beside the window.
READ_VALUES = 2_000_000
_HOUR = 3600


@runtime_checkable
class RowReader(Protocol):
    """An inner download that reads a band of the grid's latitude rows (NetCDF; not GRIB, whose
    messages are decoded whole)."""

    grid_shape: tuple[int, int]
    row_chunk: int

    def read_rows(self, column: str, i0: int, i1: int, r0: int, r1: int) -> F32 | npt.NDArray[np.float64]: ...


@dataclass(frozen=True)
class _Band:
    """Latitude rows of the grid read together (None: the whole grid, by ``read_column``), where their
    land points go in a block (``columns``), which of the rows' points they are (``local``; None: all),
    the time steps a read takes at most, and whether the cached chunks are given back after it."""

    rows: tuple[int, int] | None
    columns: slice
    local: npt.NDArray[np.intp] | None
    steps: int
    release: bool


def raw_variables(variables: Sequence[Variable]) -> list[Variable]:
    """The variables as the inner stager should read them: the file's values, no unit change."""
    return [replace(v, scale=1.0, offset=0.0) for v in variables]


class LandDownload(BlockReader):
    """A staged ERA5-Land download: its land points, its accumulations as hourly amounts."""

    def __init__(self, inner: StagedDownload, variables: Sequence[Variable], dataset: Dataset) -> None:
        self._inner = inner
        self.dataset = dataset
        by_column = {v.column: v for v in variables}
        self.paths: list[Path] = inner.paths
        self.parts = inner.parts
        self.variables = [by_column[v.column] for v in inner.variables]
        self.ignored = inner.ignored
        self.missing_columns = inner.missing_columns
        self.valid_time: DT64 = inner.valid_time
        self.expver = inner.expver
        self.time_chunk = getattr(inner, "time_chunk", 1)
        self.notes = list(inner.notes)
        self.levels: tuple[int, ...] = ()  # ERA5-Land has no pressure levels
        self.level: npt.NDArray[np.int16] | None = None
        self._accum = {v.column for v in self.variables if v.step_type == "accum"} \
            if dataset.accumulation == "since_00utc" else set()
        self._scale = {v.column: (v.scale, v.offset) for v in self.variables}
        mask, per_column = self._land_mask()
        if dataset.land_only:
            if not mask.any():
                raise StageError(f"{', '.join(self.parts)}: no land point: every value of "
                                 f"{', '.join(v.short_name for v in self.variables)} is missing at every hour "
                                 f"at all {inner.points} grid points (the area is all sea, where "
                                 f"{dataset.title} has no data); nothing loaded")
            for column, has in per_column.items():
                lost = int((mask & ~has).sum())
                if lost:
                    self.notes.append(f"{column}: missing at every hour at {lost} of the {int(mask.sum())} land "
                                      "points (land in another variable): stored NULL there")
            sea = inner.points - int(mask.sum())
            if sea:
                self.notes.append(f"{sea} of {inner.points} grid points are sea (no value in any variable "
                                  "at any hour): not rows")
        else:
            mask = np.ones(inner.points, dtype=bool)
        self._index = _by_id(np.flatnonzero(mask), inner.location_id, getattr(inner, "grid_shape", None))
        self._all = bool(mask.all()) and bool((np.diff(self._index) == 1).all())
        self.land_points = int(mask.sum())
        # Each point's latitude row in the file, as _positions takes it (made by _bands).
        self._rows: tuple[npt.NDArray[np.intp], bool] | None = None
        self.latitude: F32 = readonly(inner.latitude[self._index])
        self.longitude: F32 = readonly(inner.longitude[self._index])
        ids = inner.location_id
        self.location_id: npt.NDArray[np.int32] | None = None if ids is None else readonly(ids[self._index])
        self.no_previous = self._no_previous()
        if self._accum and self.no_previous.size:
            first = np.datetime64(int(self.no_previous[0]), "s")
            self.notes.append(
                f"accumulations ({', '.join(sorted(self._accum))}) NULL at {self.no_previous.size} hour(s) from "
                f"{first} on: ERA5-Land's running totals from 00 UTC give an hour's amount only as the difference "
                "from the hour before, which the download does not hold")

    @property
    def points(self) -> int:
        return self.land_points

    @property
    def rows(self) -> int:
        return len(self.valid_time) * self.land_points

    def _land_mask(self) -> tuple[npt.NDArray[np.bool_], dict[str, npt.NDArray[np.bool_]]]:
        """Per column, the points with a value at some hour; and their union. Read variable by
        variable (``_steps``), so one variable's chunks are cached at a time, not all seven."""
        n = self._inner.points
        per_column = {v.column: np.zeros(n, dtype=bool) for v in self.variables}
        hours = max(1, _MASK_ROWS // max(n, 1))
        count = len(self.valid_time)
        for column, has in per_column.items():
            for a in range(0, count, hours):
                has |= np.isfinite(self._inner.read_column(column, a, min(a + hours, count))).any(axis=0)
            self._inner.release_column(column)
        union = np.zeros(n, dtype=bool)
        for has in per_column.values():
            union |= has
        return union, per_column

    def _no_previous(self) -> npt.NDArray[np.int64]:
        """Valid times (epoch s) whose hourly amount needs an hour the download lacks."""
        secs = self.valid_time.astype("datetime64[s]").astype(np.int64)
        have = np.isin(secs - _HOUR, secs)
        first_hour = (secs % 86400) // _HOUR == 1
        return np.asarray(secs[~have & ~first_hour])

    def _blocks(self, i0: int, i1: int, hours: int, run: tuple[int, int] | None = None) -> Iterator[Block]:
        """Windows of whole time chunks of the file (at least ``hours``), each read variable by
        variable and, within a variable, by bands of latitude rows (``_bands``): a variable's land
        values over the window, read a band at a time, its cached chunks given back once a row of
        chunks is read. Memory holds the window's land values (every variable's: a block is an hour of
        all of them), one row of one variable's chunks and one band's read, not a variable's chunks
        over the whole grid (a global day: 155 MB a variable) or every variable's (1.09 GB).
        The window is handed out ``hours`` at a time."""
        if i0 >= i1:
            return
        secs = self.valid_time.astype("datetime64[s]").astype(np.int64)
        # The hour before the window, when the download has it: the first hour's amount needs it.
        j0 = i0 - 1 if self._accum and i0 > 0 and secs[i0 - 1] == secs[i0] - _HOUR else i0
        width = max(hours, self.time_chunk)
        bands = self._bands(width)
        previous: dict[str, npt.NDArray[np.float64]] = {}
        prev_time: int | None = None
        a = j0
        while a < i1:
            b = min((a // width + 1) * width, i1)  # the file's time chunks start at its first step
            times = secs[a:b]
            values: dict[str, F32] = {}
            for v in self.variables:
                out = values[v.column] = np.empty((b - a, self.land_points), dtype=np.float32)
                accum = v.column in self._accum
                before_all = previous.get(v.column)
                last = np.empty(self.land_points, dtype=np.float64) if accum else None
                for band in bands:
                    before = None if before_all is None else before_all[band.columns]
                    before_time = prev_time
                    for t0 in range(a, b, band.steps):
                        t1 = min(t0 + band.steps, b)
                        x = self._land(v.column, t0, t1, band)
                        if accum:
                            tail = x[-1].copy()
                            x = _hourly(x, secs[t0:t1], before, before_time)
                            before, before_time = tail, int(secs[t1 - 1])
                        scale, offset = self._scale[v.column]
                        np.multiply(x, scale, out=x)
                        np.add(x, offset, out=x)
                        out[t0 - a:t1 - a, band.columns] = x  # float64 to float32, as astype rounds
                        del x
                    if last is not None and before is not None:
                        last[band.columns] = before
                    if band.release:
                        self._inner.release_column(v.column)
                if last is not None:
                    previous[v.column] = last
                del out
            prev_time = int(times[-1])
            first = int(np.searchsorted(times, secs[i0]))  # not the hour read before the window
            for k in range(first, b - a, hours):
                end = min(k + hours, b - a)
                yield Block(self.valid_time[a + k:a + end].copy(), self.location_id, self.latitude, self.longitude,
                            {c: val[k:end] for c, val in values.items()})
            del values
            a = b

    def _bands(self, steps: int) -> list[_Band]:
        """How a window of ``steps`` time steps of a variable is read: bands of the grid's latitude rows
        of at most about READ_VALUES values (at least one row), each read ``steps`` at a time or fewer,
        bands without a land point skipped. A download that reads whole fields only (GRIB) is one band
        of the whole grid, read as many steps at a time as keep to READ_VALUES."""
        inner = self._inner
        if not isinstance(inner, RowReader):
            return [_Band(None, slice(0, self.land_points), None if self._all else self._index,
                          max(1, READ_VALUES // max(inner.points, 1)), True)]
        nlat, nlon = inner.grid_shape
        if self._rows is None:  # ascending: the rows, or north to south in the file, their negatives
            rows_of = self._index // nlon
            descending = bool(rows_of.size and rows_of[0] > rows_of[-1])
            self._rows = (-rows_of if descending else rows_of, descending)
        key, descending = self._rows
        rows = min(nlat, max(1, READ_VALUES // max(nlon * steps, 1)))
        chunk = inner.row_chunk or nlat
        bands: list[_Band] = []
        # Bands are cut within each row of the file's chunks, so the cache holds one row of chunks:
        # given back after the row's last band, each chunk decompressed once a window.
        for c0 in range(0, nlat, chunk):
            c1 = min(c0 + chunk, nlat)
            for r0 in range(c0, c1, rows):
                r1 = min(r0 + rows, c1)
                lo, hi = _positions(key, r0, r1, descending)
                if hi > lo:  # a band of sea only is not read
                    picks = self._index[lo:hi] - r0 * nlon
                    # Every point of the band, in file order: the read as it is.
                    whole = hi - lo == (r1 - r0) * nlon and bool((np.diff(picks) == 1).all())
                    bands.append(_Band((r0, r1), slice(lo, hi), None if whole else picks,
                                       max(1, READ_VALUES // ((r1 - r0) * nlon)), False))
            if bands and not bands[-1].release:
                bands[-1] = replace(bands[-1], release=True)
        return bands

    def _land(self, column: str, a: int, b: int, band: _Band) -> npt.NDArray[np.float64]:
        """Steps a..b-1 of one column at the land points of ``band``, float64 (a fresh array)."""
        if band.rows is None:
            raw = self._inner.read_column(column, a, b)
        else:
            assert isinstance(self._inner, RowReader)
            raw = self._inner.read_rows(column, a, b, *band.rows)
        # The inner readers hand out fresh arrays (in float64: LandDownload asks for it), so the
        # band's values are used in place, not copied again.
        return np.asarray(raw if band.local is None else raw[:, band.local], dtype=np.float64)

    def _release(self) -> None:
        self._inner.close()

    def __repr__(self) -> str:
        return (f"<LandDownload {', '.join(p.name for p in self.paths)}: {len(self.valid_time)} hours x "
                f"{self.land_points} land points, columns {[v.column for v in self.variables]}>")


def _by_id(index: npt.NDArray[np.intp], ids: npt.NDArray[np.int32] | None,
           shape: tuple[int, int] | None) -> npt.NDArray[np.intp]:
    """The land points (``index``, into the file's grid) in location_id order, the order a columnstore
    chunk takes them: the loader then sends each block as it is instead of copying it into that order
    (an hour of a global day, 73 MB). Each latitude row of the file stays one run (ids are latitude
    row-major), so a band of rows is one run of points (``_positions``). Kept in file order when the grid
    has no ids or its rows are not monotonic in them."""
    if ids is None or index.size < 2:
        return index
    by_id = index[np.argsort(ids[index], kind="stable")]
    if shape is not None:
        rows = by_id // shape[1]
        steps = np.diff(rows)
        if not ((steps >= 0).all() or (steps <= 0).all()):
            return index
    return by_id


def _positions(key: npt.NDArray[np.intp], r0: int, r1: int, descending: bool) -> tuple[int, int]:
    """Where the points of the file's latitude rows r0..r1-1 are, [lo, hi), given each point's row in
    ascending runs (``key``), or with ``descending`` (the file north to south, the ids south to north)
    its negative."""
    if descending:
        return int(np.searchsorted(key, -r1, "right")), int(np.searchsorted(key, -r0, "right"))
    return int(np.searchsorted(key, r0, "left")), int(np.searchsorted(key, r1, "left"))


def _hourly(x: npt.NDArray[np.float64], times: npt.NDArray[np.int64], before: npt.NDArray[np.float64] | None,
            before_time: int | None) -> npt.NDArray[np.float64]:
    """Running totals from 00 UTC (T, P) at ``times`` -> the amount of the hour ending at each time;
    ``before``: the totals of the hour before ``times[0]`` (at ``before_time``), if read."""
    prev_t = np.r_[before_time if before_time is not None else -1, times[:-1]]
    prev_x = np.vstack([before if before is not None else np.full(x.shape[1], np.nan), x[:-1]])
    first_hour = (times % 86400) // _HOUR == 1
    diff = (prev_t == times - _HOUR) & ~first_hour
    out = np.full_like(x, np.nan)
    out[first_hour] = x[first_hour]
    out[diff] = x[diff] - prev_x[diff]
    return out
