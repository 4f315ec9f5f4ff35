"""Which dataset a download's files are, when they say so unambiguously: a file whose variables have a
pressure level dimension (NetCDF ``pressure_level``/``level``) or whose messages are on isobaric
levels (GRIB ``typeOfLevel`` isobaricInhPa) is ERA5 on pressure levels. Only headers are read.

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

from era5etl.core.datasets import PRESSURE_LEVELS, Dataset
from era5etl.stage.archive import _extract_zip, _sniff
from era5etl.stage.netcdf import _LEVEL_NAMES

_LAT_LON = ({"latitude", "lat"}, {"longitude", "lon"})


# A file these cannot read says nothing here: the stager opens it next and refuses it with its own
# words (cut short, corrupt), before anything is written.


def _netcdf_has_levels(path: Path) -> bool:
    try:
        with netCDF4.Dataset(path, "r") as nc:
            for var in nc.variables.values():
                dims = set(var.dimensions)
                if dims & _LAT_LON[0] and dims & _LAT_LON[1] and dims & set(_LEVEL_NAMES):
                    return True
    except OSError:
        return False
    return False


def _grib_has_levels(path: Path) -> bool:
    with path.open("rb") as f:
        while True:
            try:
                h = eccodes.codes_grib_new_from_file(f, headers_only=True)
            except eccodes.GribInternalError:
                return False
            if h is None:
                return False
            try:
                if eccodes.codes_get_string(h, "typeOfLevel") == "isobaricInhPa":
                    return True
            finally:
                eccodes.codes_release(h)


def detect_dataset(paths: Sequence[Path], tmp_dir: Path | None = None) -> Dataset | None:
    """The dataset the files are when they show it (pressure levels), else None."""
    tmpdir: Path | None = None
    try:
        files: list[tuple[Path, str, str]] = []
        for path in map(Path, paths):
            kind = _sniff(path, str(path))
            if kind == "zip":
                tmpdir = tmpdir or Path(tempfile.mkdtemp(prefix="era5-detect-", dir=tmp_dir))
                into = Path(tempfile.mkdtemp(dir=tmpdir))
                files.extend((m, label, _sniff(m, label)) for m, label in _extract_zip(path, str(path), into))
            else:
                files.append((path, str(path), kind))
        for path, _, kind in files:
            if kind == "grib" and _grib_has_levels(path):
                return PRESSURE_LEVELS
            if kind in ("nc3", "hdf5") and _netcdf_has_levels(path):
                return PRESSURE_LEVELS
        return None
    finally:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)
