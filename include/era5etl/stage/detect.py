"""Which dataset a download's files are, when they say so unambiguously: a file whose variables have a
pressure level dimension (NetCDF ``pressure_level``/``level``) or whose messages are on isobaric
levels (GRIB ``typeOfLevel`` isobaricInhPa) is ERA5 on pressure levels; a GRIB file whose messages are
of MARS class ``l5``, or a NetCDF file on a grid of 0.1 degree steps (ERA5-Land's native grid, which
ERA5's 0.25 degree lattice cannot hold), is ERA5-Land. Only headers and coordinates are read (an
ERA5-Land file asked for at 0.25 degree in NetCDF says nothing: name it with ``--dataset land``).

``load-file`` uses it when no ``--dataset`` is given, and to refuse a file that contradicts the
dataset asked for before any row is written. A file that says nothing either way is None: the caller
keeps its default (single levels)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import eccodes
import netCDF4
import numpy as np

from era5etl.core.datasets import (
    LAND,
    LAND_MONTHLY_MEANS,
    MONTHLY_MEANS,
    MONTHLY_MEANS_BY_HOUR,
    PRESSURE_LEVELS,
    SINGLE_LEVELS,
    Dataset,
)
from era5etl.stage.archive import extract_zip, sniff_kind
from era5etl.stage.netcdf import LEVEL_NAMES

_LAT_LON = ({"latitude", "lat"}, {"longitude", "lon"})


# A file these cannot read says nothing here: the stager opens it next and refuses it with its own
# words (cut short, corrupt), before anything is written.


def _off_era5_lattice(nc: netCDF4.Dataset) -> bool:
    """Coordinates in steps of 0.1 degree that ERA5's 0.25 degree lattice cannot hold: ERA5-Land's grid."""
    for names in _LAT_LON:
        name = next((n for n in names if n in nc.variables), None)
        if name is None:
            return False
        axis = np.asarray(nc.variables[name][:], dtype=np.float64)
        if axis.size < 2:
            continue
        steps = np.abs(np.diff(axis))
        on_tenths = np.allclose(steps / LAND.grid.step, np.rint(steps / LAND.grid.step), atol=1e-3)
        on_quarters = np.allclose(steps / SINGLE_LEVELS.grid.step, np.rint(steps / SINGLE_LEVELS.grid.step),
                                  atol=1e-3)
        if on_tenths and not on_quarters:
            return True
    return False


# The monthly means' GRIB streams: a field a month, or a field a month for each hour of the day.
_MONTHLY_STREAMS = {"moda": "month", "mnth": "month_by_hour"}


def _monthly(stream: str, land: bool) -> Dataset | None:
    period = _MONTHLY_STREAMS.get(stream)
    if period is None:
        return None
    if land:
        return LAND_MONTHLY_MEANS if period == "month" else None  # ERA5-Land by hour of day: not a dataset here
    return MONTHLY_MEANS if period == "month" else MONTHLY_MEANS_BY_HOUR


def _netcdf_dataset(path: Path) -> Dataset | None:
    try:
        with netCDF4.Dataset(path, "r") as nc:
            for var in nc.variables.values():
                dims = set(var.dimensions)
                if dims & _LAT_LON[0] and dims & _LAT_LON[1] and dims & set(LEVEL_NAMES):
                    return PRESSURE_LEVELS
            land = _off_era5_lattice(nc)
            # cfgrib's conversion (the new CDS) names the GRIB stream it filtered in its history.
            history = str(getattr(nc, "history", ""))
            for stream in _MONTHLY_STREAMS:
                if f'"stream": ["{stream}"]' in history:
                    return _monthly(stream, land)
            if land:
                return LAND
    except OSError:
        return None
    return None


def _grib_dataset(path: Path) -> Dataset | None:
    land = False
    stream = ""
    with path.open("rb") as f:
        while True:
            try:
                h = eccodes.codes_grib_new_from_file(f, headers_only=True)
            except eccodes.GribInternalError:
                return None
            if h is None:
                return _monthly(stream, land) or (LAND if land else None)
            try:
                if eccodes.codes_get_string(h, "typeOfLevel") == "isobaricInhPa":
                    return PRESSURE_LEVELS
                if eccodes.codes_is_defined(h, "marsClass") and eccodes.codes_get_string(h, "marsClass") == "l5":
                    land = True
                if eccodes.codes_is_defined(h, "marsStream") and eccodes.codes_get_string(h, "marsStream") in \
                        _MONTHLY_STREAMS:
                    stream = eccodes.codes_get_string(h, "marsStream")
            except eccodes.GribInternalError:  # a damaged section (KeyValueNotFoundError): the stager says what
                return None
            finally:
                eccodes.codes_release(h)


def detect_dataset(paths: Sequence[Path], tmp_dir: Path | None = None) -> Dataset | None:
    """The dataset the files are when they show it (pressure levels, ERA5-Land), else None."""
    tmpdir: Path | None = None
    try:
        files: list[tuple[Path, str, str]] = []
        for path in map(Path, paths):
            kind = sniff_kind(path, str(path))
            if kind == "zip":
                tmpdir = tmpdir or Path(tempfile.mkdtemp(prefix="era5-detect-", dir=tmp_dir))
                into = Path(tempfile.mkdtemp(dir=tmpdir))
                files.extend((m, label, sniff_kind(m, label)) for m, label in extract_zip(path, str(path), into))
            else:
                files.append((path, str(path), kind))
        for path, _, kind in files:
            shown = (_grib_dataset(path) if kind == "grib" else _netcdf_dataset(path) if kind in ("nc3", "hdf5")
                     else None)
            if shown is not None:
                return shown
        return None
    finally:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)
