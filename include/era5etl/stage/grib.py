"""Stage a GRIB download (ERA5 single levels are GRIB edition 1) with ECMWF's ecCodes.

Two passes, so memory stays bounded whatever the file's size:

* **index** (at open): every message's header is read once by ecCodes (``headers_only``): where it
  is in its file, its parameter, valid time, expver and grid. Nothing is decoded. A file cut short
  (ecCodes' ``PrematureEndOfFileError``) or holding bytes that are neither a message nor the zero
  padding the CDS puts between messages is refused here, before any row is written.
* **blocks**: each block's messages are read back by offset (``os.pread``) and decoded by ecCodes
  (``codes_get_values``), then ``table = value * Variable.scale + Variable.offset`` in float64, then
  float32, exactly as the NetCDF stager does; points a message's bitmap marks missing are NaN.

What a GRIB file holds that the NetCDF conversion hides, and how it is loaded:

* **valid time**: analyses are at step 0; accumulations and extremes are forecasts from the 06 and
  18 UTC runs, valid at base time + end of step (``dataDate``/``dataTime`` + ``endStep``).
* **ERA5 and ERA5T in one file**: the switch follows the forecast base time, so one valid time can
  hold expver 0005 analyses and 0001 accumulations. Per variable and valid time one message is
  loaded: final ERA5 (0001) over ERA5T (0005) over any other; the replaced ones are counted in
  ``notes``. The same hour twice with the same expver is loaded once if the two decode equal, and
  refused if they differ (which one is right cannot be told).
* **one lattice, two encodings**: ERA5-Land's GRIB2-only snow cover comes in messages whose grid
  section differs from the GRIB1 ones' (longitudes 0..360 instead of -180..180); grids whose points
  are the same after mapping longitude to (-180, 180] are one grid.
* **messages not loaded** (another stream's parameters such as the wave model's on its 0.5 degree
  grid, variables the table has no column for) are named in ``ignored``, never dropped silently.
  The table's variables must all be on one regular lat/lon grid.

Header keys are read with typed getters and few of them: ecCodes' ``paramId`` lookup alone costs
~80 us a message, so for GRIB1 at ECMWF the parameter is ``table2Version`` and
``indicatorOfParameter`` (paramId = the indicator for table 128, table * 1000 + indicator otherwise).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import eccodes
import numpy as np
import numpy.typing as npt

from era5etl.core.expver import FINAL, PRELIMINARY
from era5etl.core.variables import BY_PARAM_ID, VARIABLES, Variable
from era5etl.stage.block import DT64, F32, Block, BlockReader, grid_block, level_points
from era5etl.stage.errors import StageError
from era5etl.stage.points import Points, grid_points

if TYPE_CHECKING:
    from era5etl.core.datasets import LatLonGrid

log = logging.getLogger(__name__)

ECMWF = 98  # GRIB centre of ERA5
_EXPVER_RANK = {FINAL: 0, PRELIMINARY: 1}  # lower wins for the same variable and valid time
_READ = 4 * 2**20  # bytes read at a time when checking what lies between messages


@dataclass(frozen=True)
class _Grid:
    label: str  # "5x4 regular_ll, latitude 7.02..6.27, longitude 121.42..122.42"
    points: Points | None  # None for a grid the table cannot hold (not regular lat/lon)
    refusal: str  # why not, when points is None


@dataclass
class _Index:
    """The messages of the files, one row per message, as parallel arrays."""

    file: list[int]
    offset: list[int]
    length: list[int]
    param: list[int]
    valid: list[int]  # seconds since 1970, UTC
    expver: list[str]
    grid: list[str]  # md5 of the grid section
    level: list[int]  # hPa for a message on an isobaric level, -1 for any other kind of level
    names: dict[int, str]  # paramId -> ecCodes shortName, for messages that are not loaded
    grids: dict[str, _Grid]


def _param(h: int) -> int:
    if eccodes.codes_get_long(h, "edition") == 1 and eccodes.codes_get_long(h, "centre") == ECMWF:
        table, number = eccodes.codes_get_long(h, "table2Version"), eccodes.codes_get_long(h, "indicatorOfParameter")
        return int(number if table == 128 else table * 1000 + number)
    return int(eccodes.codes_get_long(h, "paramId"))


def _isobaric_level(h: int) -> int:
    """The message's pressure level in hPa, or -1 when it is not on an isobaric level (single levels)."""
    if eccodes.codes_get_long(h, "edition") == 1:
        isobaric = eccodes.codes_get_long(h, "indicatorOfTypeOfLevel") == 100  # isobaricInhPa
    else:
        isobaric = eccodes.codes_get_long(h, "typeOfFirstFixedSurface") == 100  # isobaric surface (Pa)
    return int(eccodes.codes_get_long(h, "level")) if isobaric else -1


def _valid(date: int, hhmm: int, step_h: int) -> int:
    day = np.datetime64(f"{date // 10000:04d}-{date // 100 % 100:02d}-{date % 100:02d}", "s")
    return int(day.astype(np.int64)) + (hhmm // 100) * 3600 + (hhmm % 100) * 60 + step_h * 3600


def _describe_grid(h: int, label: str, lattice: LatLonGrid | None) -> _Grid:
    kind = eccodes.codes_get_string(h, "gridType")
    ni, nj = eccodes.codes_get_long(h, "Ni"), eccodes.codes_get_long(h, "Nj")
    lat1, lat2 = (eccodes.codes_get_double(h, f"latitudeOf{e}GridPointInDegrees") for e in ("First", "Last"))
    lon1, lon2 = (eccodes.codes_get_double(h, f"longitudeOf{e}GridPointInDegrees") for e in ("First", "Last"))
    text = f"{ni}x{nj} {kind}, latitude {lat1:g}..{lat2:g}, longitude {lon1:g}..{lon2:g}"
    if kind != "regular_ll":
        return _Grid(text, None, f"a {kind} grid; request a regular latitude/longitude grid (the 'grid' keyword)")
    if eccodes.codes_get_long(h, "iScansNegatively") or eccodes.codes_get_long(h, "jPointsAreConsecutive"):
        return _Grid(text, None, "points not in rows scanned west to east")
    lats = eccodes.codes_get_array(h, "latitudes")
    lons = eccodes.codes_get_array(h, "longitudes")
    try:
        return _Grid(text, grid_points(lats[::ni], lons[:ni], f"{label} ({text})", lattice), "")
    except StageError as exc:  # refused only if the table's variables are on it, not for an ignored stream
        return _Grid(text, None, str(exc))


def _check_gap(f: object, label: str, start: int, stop: int) -> None:
    """The bytes [start, stop) between messages (or after the last) must be zero padding."""
    fd = f.fileno()  # type: ignore[attr-defined]
    at = start
    while at < stop:
        chunk = os.pread(fd, min(_READ, stop - at), at)
        if chunk.strip(b"\0"):
            raise StageError(f"{label}: {stop - start:,} bytes at offset {start:,} are not a GRIB message "
                             "(a damaged message or junk in the file); refused, nothing loaded")
        at += len(chunk)


def _index(paths: Sequence[Path], labels: Sequence[str], lattice: LatLonGrid | None = None) -> _Index:
    ix = _Index([], [], [], [], [], [], [], [], {}, {})
    for n, (path, label) in enumerate(zip(paths, labels, strict=True)):
        size, end, count = path.stat().st_size, 0, 0
        with path.open("rb") as f:
            while True:
                try:
                    h = eccodes.codes_grib_new_from_file(f, headers_only=True)
                except eccodes.PrematureEndOfFileError:
                    raise StageError(f"{label}: the file is cut short inside message {count + 1} (offset "
                                     f"{end:,} of {size:,} bytes); the download did not complete, nothing "
                                     "loaded") from None
                except eccodes.GribInternalError as exc:
                    raise StageError(f"{label}: message {count + 1} at offset {end:,} cannot be read by "
                                     f"ecCodes ({exc}); nothing loaded") from None
                if h is None:
                    break
                try:
                    offset, length = eccodes.codes_get_long(h, "offset"), eccodes.codes_get_long(h, "totalLength")
                    _check_gap(f, label, end, offset)
                    param = _param(h)
                    grid = eccodes.codes_get_string(h, "md5GridSection")
                    if grid not in ix.grids:
                        ix.grids[grid] = _describe_grid(h, label, lattice)
                    if param not in BY_PARAM_ID and param not in ix.names:
                        ix.names[param] = eccodes.codes_get_string(h, "shortName")
                    ix.file.append(n)
                    ix.offset.append(offset)
                    ix.length.append(length)
                    ix.param.append(param)
                    ix.valid.append(_valid(eccodes.codes_get_long(h, "dataDate"),
                                           eccodes.codes_get_long(h, "dataTime"),
                                           eccodes.codes_get_long(h, "endStep")))
                    ix.expver.append(eccodes.codes_get_string(h, "expver"))
                    ix.grid.append(grid)
                    ix.level.append(_isobaric_level(h))
                # A section overwritten: a key it must have is missing, or holds no date (0x00: month 0).
                except (eccodes.GribInternalError, ValueError) as exc:
                    raise StageError(f"{label}: message {count + 1} at offset {end:,} is damaged: ecCodes cannot "
                                     f"read its header ({type(exc).__name__}: {exc}); nothing loaded") from None
                finally:
                    eccodes.codes_release(h)
                end, count = offset + length, count + 1
        if count == 0:
            raise StageError(f"{label}: no GRIB message in the file ({size:,} bytes)")
        with path.open("rb") as f:
            _check_gap(f, label, end, size)
    return ix


class GribDownload(BlockReader):
    """The GRIB files of one download, indexed and open for reading in blocks (``open_download``
    builds it for GRIB files)."""

    def __init__(self, paths: list[Path], files: Sequence[Path], labels: Sequence[str],
                 variables: Sequence[Variable] = VARIABLES, lattice: LatLonGrid | None = None,
                 dataset_levels: tuple[int, ...] = ()) -> None:
        self.paths = paths
        self.parts = list(labels)
        self.time_chunk = 1  # one message per variable and hour
        ix = _index(files, labels, lattice)
        self.messages = len(ix.param)
        table = {v.param_id: v for v in variables}
        params = np.asarray(ix.param)
        mine = np.isin(params, list(table))
        self.ignored = _ignored(ix, params, mine, table)
        if not mine.any():
            raise StageError(f"{', '.join(self.parts)}: none of the table's variables are in the download "
                             f"(it needs some of {', '.join(v.grib_name for v in variables)}; "
                             f"found {', '.join(self.ignored)})")
        grids = _same_points(ix, sorted({ix.grid[i] for i in np.flatnonzero(mine)}))
        if len(grids) > 1:
            raise StageError(f"{', '.join(self.parts)}: the table's variables are on different grids: "
                             + "; ".join(ix.grids[g].label for g in grids))
        grid = ix.grids[grids[0]]
        if grid.points is None:
            raise StageError(f"{', '.join(self.parts)}: {grid.label}: {grid.refusal}")
        self.levels = _levels(self.parts, np.asarray(ix.level)[mine], dataset_levels)
        self._grid_points = grid.points.count
        self._points = grid.points.on_levels(self.levels)
        self._fds = [os.open(p, os.O_RDONLY) for p in files]
        try:
            self._pick(ix, params, mine, table)
        except BaseException:
            self._release()
            raise

    def _pick(self, ix: _Index, params: npt.NDArray[np.int64], mine: npt.NDArray[np.bool_],
              table: dict[int, Variable]) -> None:
        """One message per (variable, valid time): final over ERA5T, an equal duplicate once."""
        valid = np.asarray(ix.valid, dtype=np.int64)
        level = np.asarray(ix.level, dtype=np.int64)
        rank = np.asarray([_EXPVER_RANK.get(e, 2) for e in ix.expver])
        self._msg = (np.asarray(ix.file), np.asarray(ix.offset), np.asarray(ix.length))
        self.valid_time: DT64 = np.unique(valid[mine]).astype("datetime64[s]")
        self.variables = [v for v in table.values() if (params == v.param_id).any()]
        self.missing_columns = [v.column for v in table.values() if v not in self.variables]
        self.notes: list[str] = []
        # column -> (T, L) message number (L = 1 without levels), -1: none
        self._where: dict[str, npt.NDArray[np.int64]] = {}
        chosen: set[str] = set()
        for var in self.variables:
            where = np.full((self.valid_time.size, max(1, len(self.levels))), -1, dtype=np.int64)
            for k, lev in enumerate(self.levels or (-1,)):
                chosen.update(self._pick_one(ix, var, np.flatnonzero((params == var.param_id) & (level == lev)),
                                             valid, rank, where[:, k], "" if lev < 0 else f" at {lev} hPa"))
            self._where[var.column] = where
        self.expver = sorted(chosen)
        self._scale = {v.column: (v.scale, v.offset) for v in self.variables}

    def _pick_one(self, ix: _Index, var: Variable, rows: npt.NDArray[np.int64], valid: npt.NDArray[np.int64],
                  rank: npt.NDArray[np.int64], where: npt.NDArray[np.int64], at: str) -> set[str]:
        """The messages of one variable (on one level): ``where`` set to the chosen one of each hour."""
        if rows.size:
            rows = rows[np.lexsort((rank[rows], valid[rows]))]  # by valid time, the best expver first
            first = np.r_[True, valid[rows][1:] != valid[rows][:-1]]
            best = rows[first][np.cumsum(first) - 1]  # each message's winner: its hour's first
            extra, winner = rows[~first], best[~first]
            worse = rank[extra] > rank[winner]
            for i, w in zip(extra[~worse], winner[~worse], strict=True):
                if not np.array_equal(self._decode(int(w)), self._decode(int(i)), equal_nan=True):
                    raise StageError(f"{self.parts[ix.file[i]]}: {var.grib_name}{at} at "
                                     f"{np.datetime64(int(valid[i]), 's')} is in two messages with expver "
                                     f"{ix.expver[i]} and different values; which to load is ambiguous")
            pairs = sorted({(ix.expver[i], ix.expver[w]) for i, w in zip(extra[worse], winner[worse], strict=True)})
            for lost, kept in pairs:
                n = sum(ix.expver[i] == lost and ix.expver[w] == kept
                        for i, w in zip(extra[worse], winner[worse], strict=True))
                self.notes.append(f"{var.grib_name}{at}: {n} hour(s) in both expver {lost} and {kept}; {kept} loaded")
            if (~worse).any():
                self.notes.append(f"{var.grib_name}{at}: {int((~worse).sum())} hour(s) in two identical "
                                  "messages, loaded once")
            keep = rows[first]
            where[np.searchsorted(self.valid_time.astype(np.int64), valid[keep])] = keep
            return {ix.expver[i] for i in keep}
        return set()

    @property
    def points(self) -> int:
        return self._points.count

    @property
    def latitude(self) -> F32:
        return self._points.latitude

    @property
    def longitude(self) -> F32:
        return self._points.longitude

    @property
    def location_id(self) -> npt.NDArray[np.int32] | None:
        return self._points.location_id

    @property
    def level(self) -> npt.NDArray[np.int16] | None:
        return self._points.level

    @property
    def rows(self) -> int:
        return len(self.valid_time) * self.points

    def _decode(self, i: int) -> npt.NDArray[np.float64]:
        """Message ``i``'s values as ecCodes decodes them, NaN where its bitmap says missing."""
        file, offset, length = (int(a[i]) for a in self._msg)
        data = os.pread(self._fds[file], length, offset)
        h = eccodes.codes_new_from_message(data)
        try:
            values: npt.NDArray[np.float64] = eccodes.codes_get_values(h)
            if eccodes.codes_get_long(h, "bitmapPresent"):
                values[values == eccodes.codes_get_double(h, "missingValue")] = np.nan
        except eccodes.GribInternalError as exc:
            raise StageError(f"{self.parts[file]}: the message at offset {offset:,} cannot be decoded ({exc}); "
                             "the file is corrupt") from None
        finally:
            eccodes.codes_release(h)
        if values.size != self._grid_points:
            raise StageError(f"{self.parts[file]}: the message at offset {offset:,} holds {values.size} "
                             f"values, the grid {self._grid_points}")
        return values

    def _blocks(self, i0: int, i1: int, hours: int, run: tuple[int, int] | None = None) -> Iterator[Block]:
        p = level_points(self.points, len(self.levels), run)
        grid = (self.location_id, self.latitude, self.longitude, self.level)
        for a in range(i0, i1, hours):
            b = min(a + hours, i1)
            values = {column: self._column(column, a, b, run) for column in self._where}
            yield grid_block(self.valid_time[a:b].copy(), values, None if run is None else p, grid)

    def read_column(self, column: str, i0: int, i1: int) -> F32:
        return self._column(column, i0, i1, None)

    def _column(self, column: str, a: int, b: int, run: tuple[int, int] | None) -> F32:
        """Steps a..b-1 of one column, the levels of ``run`` (all: None), level-major."""
        where, n = self._where[column], self._grid_points
        k0, k1 = run if run is not None else (0, where.shape[1])
        out = np.full((b - a, (k1 - k0) * n), np.nan, dtype=self.dtype)
        scale, offset = self._scale[column]
        for t in range(a, b):
            for k in range(k0, k1):  # level by level, ascending: the block's level-major P
                if where[t, k] >= 0:
                    x = self._decode(int(where[t, k]))
                    np.multiply(x, scale, out=x)
                    np.add(x, offset, out=x)
                    out[t - a, (k - k0) * n:(k - k0 + 1) * n] = x
        return out

    def _release(self) -> None:
        for fd in self._fds:
            os.close(fd)

    def __repr__(self) -> str:
        return (f"<GribDownload {', '.join(p.name for p in self.paths)}: {self.messages} messages, "
                f"{len(self.valid_time)} hours x {self.points} points, columns {[v.column for v in self.variables]}>")


def _same_points(ix: _Index, grids: list[str]) -> list[str]:
    """The grid sections, those whose points are another's (GRIB1 at -180..180 and GRIB2 at 0..360 of
    one lattice) merged into the first: their messages are relabelled with it."""
    kept: list[str] = []
    for g in grids:
        p = ix.grids[g].points
        same = next((k for k in kept if p is not None and (q := ix.grids[k].points) is not None
                     and p.count == q.count and np.array_equal(p.latitude, q.latitude)
                     and np.array_equal(p.longitude, q.longitude)), None)
        if same is None:
            kept.append(g)
        else:
            ix.grid = [same if x == g else x for x in ix.grid]
    return kept


def _levels(parts: list[str], found: npt.NDArray[np.int64], dataset_levels: tuple[int, ...]) -> tuple[int, ...]:
    """The pressure levels of the table's messages, ascending hPa; () for a dataset without levels.
    Messages that contradict the dataset (isobaric ones for single levels, others for pressure levels)
    are refused, never loaded as something they are not."""
    where = ", ".join(parts)
    isobaric = sorted({int(v) for v in found if v >= 0})
    if not dataset_levels:
        if isobaric:
            raise StageError(f"{where}: messages on pressure levels (isobaricInhPa {', '.join(map(str, isobaric))}), "
                             "not single levels; load it as the pressure-levels dataset (--dataset pressure-levels)")
        return ()
    if (found < 0).any():
        raise StageError(f"{where}: {int((found < 0).sum())} message(s) of the variables asked for are not on "
                         "pressure levels (typeOfLevel is not isobaricInhPa); the file is not a pressure-level "
                         "download: load it as a dataset without levels (--dataset single-levels)")
    unknown = sorted(set(isobaric) - set(dataset_levels))
    if unknown:
        raise StageError(f"{where}: level(s) {', '.join(map(str, unknown))} hPa are not pressure levels of the "
                         f"dataset ({', '.join(map(str, dataset_levels))})")
    return tuple(isobaric)


def _ignored(ix: _Index, params: npt.NDArray[np.int64], mine: npt.NDArray[np.bool_],
             table: dict[int, Variable]) -> list[str]:
    """What is not loaded, by parameter: its name, paramId, message count and grid."""
    out = []
    for param in dict.fromkeys(params[~mine].tolist()):
        rows = np.flatnonzero(params == param)
        var = BY_PARAM_ID.get(param)
        name = var.grib_name if var is not None else ix.names.get(param, "?")
        why = "no column in the table" if var is not None else "not an ERA5 single-level variable of the catalogue"
        grids = "; ".join(sorted({ix.grids[ix.grid[i]].label for i in rows}))
        out.append(f"{name} (paramId {param}, {rows.size} messages, {grids}: {why})")
    return out
