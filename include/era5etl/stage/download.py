"""Stage what the CDS delivered: open a download's files lazily and hand them out as blocks of
consecutive time steps, already in the table's columns and units. ``open_download`` tells the
formats apart by their first bytes; GRIB downloads are read by ``grib``, NetCDF ones here.

Several paths, or the members of a ZIP, are parts of one download. Parts are joined on time step and
grid point: the time axis is the union of the parts' steps, a variable is NaN at steps its part lacks,
and the parts holding table variables must be on the identical grid. Parts holding none of the table's
variables (another stream, say) are only listed in ``ignored``. A variable may come from two parts
only for disjoint time steps; anything else would make the loaded value depend on file order.

The files are recognised and unpacked in ``archive``, each NetCDF file opened and read in
``netcdf``, the grid's points made in ``points``; what a block is, is in ``block``.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
import xarray as xr

from era5etl.core.datasets import SINGLE_LEVELS, Dataset, LatLonGrid
from era5etl.core.grid import normalize_longitude
from era5etl.core.variables import VARIABLES, Variable
from era5etl.stage.archive import extract_zip, sniff_kind
from era5etl.stage.block import DT64, F32, Block, BlockReader, StagedDownload, grid_block, level_points
from era5etl.stage.errors import StageError
from era5etl.stage.grib import GribDownload
from era5etl.stage.land import LandDownload, raw_variables
from era5etl.stage.monthly import MonthlyDownload
from era5etl.stage.netcdf import DEFAULT_CHUNK_CACHE_BYTES, Part, Source, open_part, release_chunk_caches
from era5etl.stage.points import grid_points

log = logging.getLogger(__name__)

_GRID_TOLERANCE = 1e-6  # degrees; old files store float32 coordinates, new ones float64


class NetcdfDownload(BlockReader):
    """The NetCDF parts of one download, open for reading in blocks. Build it with ``open_download``."""

    paths: list[Path]
    parts: list[str]  # every NetCDF read, ZIP members included, as messages name them
    variables: list[Variable]
    ignored: list[str]
    missing_columns: list[str]
    valid_time: DT64
    expver: list[str]
    points: int
    latitude: F32
    longitude: F32
    location_id: npt.NDArray[np.int32] | None  # None: off the 0.25 degree lattice, stored NULL
    level: npt.NDArray[np.int16] | None  # (P,) hPa on pressure levels: P runs over (level, point) pairs
    levels: tuple[int, ...]  # hPa ascending; () for a dataset without levels
    time_chunk: int  # the deepest time chunking of a table variable: blocks of this many hours read best
    row_chunk: int  # the largest latitude chunking of a table variable (0: none): reads of whole rows of chunks
    grid_shape: tuple[int, int]  # (latitude rows, longitude columns) of the grid; points are row-major

    def __init__(self, paths: list[Path], parts: list[Part], tmpdir: Path | None,
                 variables: Sequence[Variable] = VARIABLES, lattice: LatLonGrid | None = None) -> None:
        self.paths = paths
        self.parts = [p.label for p in parts]

        table_parts = [p for p in parts if p.table_names]
        seen: dict[str, None] = {}
        for p in parts:
            seen.update(dict.fromkeys(p.ignored))
        self.ignored = list(seen)
        if not table_parts:
            found = f"; found {', '.join(self.ignored)}" if self.ignored else ""
            raise StageError(f"{', '.join(self.parts)}: none of the table's variables are in the download "
                             f"(it needs some of {', '.join(v.short_name for v in variables)}{found})")

        first = table_parts[0]
        assert first.lat is not None and first.lon is not None
        lon_norm = normalize_longitude(first.lon)
        for p in table_parts[1:]:
            assert p.lat is not None and p.lon is not None
            if (p.lat.shape != first.lat.shape or p.lon.shape != first.lon.shape
                    or not np.allclose(p.lat, first.lat, rtol=0, atol=_GRID_TOLERANCE)
                    or not np.allclose(normalize_longitude(p.lon), lon_norm, rtol=0, atol=_GRID_TOLERANCE)):
                raise StageError(f"the parts of this download are on different grids: {_grid(first)} "
                                 f"but {_grid(p)}")
            if p.levels != first.levels:
                raise StageError(f"the parts of this download hold different pressure levels: {first.label} "
                                 f"{', '.join(map(str, first.levels))} hPa but {p.label} "
                                 f"{', '.join(map(str, p.levels))} hPa")

        by_name = {v.short_name: v for v in variables}
        sources: dict[str, list[Source]] = {}
        for p in table_parts:
            for name in p.table_names:
                var = by_name[name]
                for other in sources.get(var.column, []):
                    assert p.times is not None
                    common = np.intersect1d(other.times, p.times).size
                    if common:
                        raise StageError(f"{name} is in both {other.part.label} and {p.label} for {common} "
                                         "of the same time steps; which one to load is ambiguous")
                sources.setdefault(var.column, []).append(Source(p, name, var))
        self._sources = sources
        self._table_parts = table_parts
        self.variables = [v for v in variables if v.column in sources]
        self.missing_columns = [v.column for v in variables if v.column not in sources]
        self.valid_time = np.unique(np.concatenate([p.times for p in table_parts if p.times is not None]))
        self.expver = sorted({e for p in table_parts for e in p.expver})
        self.time_chunk = max(p.time_chunk for p in table_parts)
        self.row_chunk = max(p.row_chunk for p in table_parts)
        self.grid_shape = (first.lat.size, first.lon.size)

        self.levels = first.levels
        grid = grid_points(first.lat, first.lon, _grid(first), lattice).on_levels(self.levels)
        self.points = grid.count
        self.latitude, self.longitude, self.location_id = grid.latitude, grid.longitude, grid.location_id
        self.level = grid.level
        self.notes: list[str] = []  # what the GRIB stager reports of expver and duplicates; none here
        # Registered last: if a check above raises, open_download releases the parts itself.
        self._finalizer = weakref.finalize(self, _release, [p.ds for p in parts], tmpdir)

    @property
    def rows(self) -> int:
        return len(self.valid_time) * self.points

    def _blocks(self, i0: int, i1: int, hours: int, run: tuple[int, int] | None = None) -> Iterator[Block]:
        p = level_points(self.points, len(self.levels), run)
        grid = (self.location_id, self.latitude, self.longitude, self.level)
        for a in range(i0, i1, hours):
            times = self.valid_time[a:min(a + hours, i1)].copy()
            values = {v.column: self._read(v.column, times, run, p.stop - p.start) for v in self.variables}
            # A download split by days is read part after part: a part whose steps all lie behind
            # the reader gives its cached chunks back, so memory follows the part being read, not
            # the number of parts.
            for part in self._table_parts:
                if part.cached and part.nc is not None and part.times is not None and part.times[-1] <= times[-1]:
                    release_chunk_caches(part.nc, part.table_names)
                    part.cached = False
            yield grid_block(times, values, None if run is None else p, grid)

    def read_column(self, column: str, i0: int, i1: int) -> F32:
        return self._read(column, self.valid_time[i0:i1], None, self.points)

    def read_rows(self, column: str, i0: int, i1: int, r0: int, r1: int) -> F32:
        """As ``read_column``, at the points of the grid's latitude rows r0..r1-1 only (file order): what
        reading a band of rows costs is that band's chunks, not the grid's."""
        return self._read(column, self.valid_time[i0:i1], None, (r1 - r0) * self.grid_shape[1], (r0, r1))

    def release_column(self, column: str) -> None:
        for s in self._sources[column]:
            if s.part.nc is not None:
                release_chunk_caches(s.part.nc, [s.name])

    def _read(self, column: str, times: DT64, run: tuple[int, int] | None, points: int,
              rows: tuple[int, int] | None = None) -> F32:
        sources = self._sources[column]
        spans = [(s, int(np.searchsorted(s.times, times[0], "left")),
                  int(np.searchsorted(s.times, times[-1], "right"))) for s in sources]
        # Within [times[0], times[-1]] a part's steps are a subset of the block's (the block is a run of
        # the union), so a part with as many steps there as the block has every one of them.
        for s, j0, j1 in spans:
            if j1 - j0 == len(times):
                s.part.cached = True
                return s.read(j0, j1, self.dtype, run, rows)
        out = np.full((len(times), points), np.nan, dtype=self.dtype)
        for s, j0, j1 in spans:
            if j1 > j0:
                s.part.cached = True
                out[np.searchsorted(times, s.times[j0:j1])] = s.read(j0, j1, self.dtype, run, rows)
        return out

    def _release(self) -> None:
        self._finalizer()

    def __repr__(self) -> str:
        span = f"{self.valid_time[0]}..{self.valid_time[-1]}" if len(self.valid_time) else "no time steps"
        levels = f" ({len(self.levels)} levels x {self.points // len(self.levels)} points)" if self.levels else ""
        return (f"<NetcdfDownload {', '.join(p.name for p in self.paths)}: {len(self.valid_time)} steps "
                f"({span}) x {self.points} points{levels}, columns {[v.column for v in self.variables]}>")


def _release(datasets: list[xr.Dataset], tmpdir: Path | None) -> None:
    for ds in datasets:
        try:
            ds.close()
        except Exception as exc:  # a close failing must not keep the others open or the temp dir
            log.warning("closing a staged file failed: %s", exc)
    if tmpdir is not None:
        shutil.rmtree(tmpdir, ignore_errors=True)


def _grid(p: Part) -> str:
    assert p.lat is not None and p.lon is not None
    return (f"{p.label} ({p.lat.size}x{p.lon.size} points, latitude {p.lat[0]:g}..{p.lat[-1]:g}, "
            f"longitude {p.lon[0]:g}..{p.lon[-1]:g})")


SCRATCH_PREFIX = "era5-stage-"


def scratch_dir(staging: Path) -> Path:
    """Where a month's ZIP members are extracted while it is staged or loaded: ``<staging>/.scratch``
    (on the staging disk, not the system's temporary folder), made if missing, and swept of the
    scratch of processes that are gone: a stage or load killed outright (SIGKILL, the OOM killer)
    cannot remove its own, and the next run does."""
    folder = staging / ".scratch"
    folder.mkdir(parents=True, exist_ok=True)
    for left in folder.glob(f"{SCRATCH_PREFIX}*-*"):
        pid = left.name.removeprefix(SCRATCH_PREFIX).split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            log.info("removing %s: scratch of process %s, which is gone", left, pid)
            shutil.rmtree(left, ignore_errors=True)
    return folder


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def open_download(paths: Sequence[Path], *, variables: Sequence[Variable] | None = None,
                  tmp_dir: Path | None = None, chunk_cache_bytes: int = DEFAULT_CHUNK_CACHE_BYTES,
                  dataset: Dataset = SINGLE_LEVELS) -> StagedDownload:
    """Open the files of one download (NetCDF, GRIB, or ZIPs of either) for reading in blocks.

    ``tmp_dir``: where ZIPs are extracted (a fresh temporary directory inside it, removed on close).
    A grid off the global 0.25 degree lattice opens with ``location_id`` None (its rows get NULL ids).
    GRIB files are read by :mod:`era5etl.stage.grib`; one download is all GRIB or all NetCDF.
    ``variables``: what is loaded from it (any of the dataset's catalogue; the table's six by default,
    for pressure levels its default variables, for another dataset its whole catalogue); anything else
    in the files is named in ``ignored``.
    ``dataset``: whose download it is (single levels by default). Its grid numbers the points; a file
    on pressure levels staged as a dataset without levels, or one without levels staged as pressure
    levels, is refused with a StageError. For ERA5-Land (land only, running totals from 00 UTC) the
    download is read through :class:`era5etl.stage.land.LandDownload`: sea points are not rows,
    accumulations hourly amounts.
    """
    if variables is None:
        variables = (VARIABLES if dataset is SINGLE_LEVELS else dataset.base_variables if dataset.has_levels
                     else dataset.catalogue)
    wrapped = _wrapped(paths, variables, tmp_dir, chunk_cache_bytes, dataset)
    if wrapped is not None:
        return wrapped
    lattice = None if dataset is SINGLE_LEVELS else dataset.grid
    if not paths:
        raise StageError("no files given")
    tmpdir: Path | None = None
    files: list[tuple[Path, str, str]] = []  # (path, label, kind)
    parts: list[Part] = []
    try:
        for path in map(Path, paths):
            kind = sniff_kind(path, str(path))
            if kind != "zip":
                files.append((path, str(path), kind))
                continue
            if tmpdir is None:  # named by this process, so a later run can tell it was left behind
                tmpdir = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-", dir=tmp_dir))
            into = Path(tempfile.mkdtemp(dir=tmpdir))
            for member, label in extract_zip(path, str(path), into):
                member_kind = sniff_kind(member, label)
                if member_kind == "zip":
                    raise StageError(f"{label}: a ZIP inside the ZIP; expected NetCDF or GRIB files")
                files.append((member, label, member_kind))
        kinds = {kind == "grib" for _, _, kind in files}
        if kinds == {True}:
            grib = GribDownload([Path(p) for p in paths], [f for f, _, _ in files], [label for _, label, _ in files],
                                variables, lattice, dataset.levels)
            if tmpdir is not None:  # the files stay open by descriptor; their names can go now
                shutil.rmtree(tmpdir, ignore_errors=True)
            return grib
        if len(kinds) > 1:
            raise StageError("one download holds both GRIB and NetCDF files: "
                             + ", ".join(f"{label} ({kind})" for _, label, kind in files))
        by_name = {v.short_name: v for v in variables}
        for member, label, kind in files:
            parts.append(open_part(member, label, kind, chunk_cache_bytes, by_name, dataset.levels))
        return NetcdfDownload([Path(p) for p in paths], parts, tmpdir, variables, lattice)
    except BaseException:
        _release([p.ds for p in parts], tmpdir)
        raise


def _wrapped(paths: Sequence[Path], variables: Sequence[Variable], tmp_dir: Path | None, chunk_cache_bytes: int,
             dataset: Dataset) -> StagedDownload | None:
    """A monthly-means or land-style download: the hourly stager's download on the same grid, read
    through the class that makes each of its steps the row it means; None for any other dataset."""
    if dataset.monthly:
        # Read as the hourly collection on the same grid (single levels number ERA5's lattice and take
        # a grid off it), then each time step made the row it means.
        hourly = SINGLE_LEVELS if dataset.grid == SINGLE_LEVELS.grid and not dataset.land_only else \
            replace(dataset, period="hour")
        inner = open_download(paths, variables=variables, tmp_dir=tmp_dir, chunk_cache_bytes=chunk_cache_bytes,
                              dataset=hourly)
        try:
            return MonthlyDownload(inner, dataset)
        except BaseException:
            inner.close()
            raise
    if dataset.land_only or dataset.accumulation == "since_00utc":
        inner = open_download(paths, variables=raw_variables(variables), tmp_dir=tmp_dir,
                              chunk_cache_bytes=chunk_cache_bytes, dataset=_numbered_by(dataset))
        try:
            inner.dtype = np.float64  # type: ignore[attr-defined]
            return LandDownload(inner, variables, dataset)
        except BaseException:
            inner.close()
            raise
    return None


def _numbered_by(dataset: Dataset) -> Dataset:
    """The dataset as its inner stager sees it: its grid, none of the conventions LandDownload applies."""
    return replace(dataset, land_only=False, accumulation="hourly")
