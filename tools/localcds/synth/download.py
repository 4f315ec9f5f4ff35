"""The download: what the CDS delivers for a request: one GRIB file, one NetCDF file, or a ZIP of one
NetCDF per step type."""

from __future__ import annotations

import os
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from localcds.synth.grib import write_grib
from localcds.synth.land import LAND_DATASET, write_land_grib, write_land_netcdf
from localcds.synth.monthly import (
    MONTHLY_DATASETS,
    available_months,
    file_names,
    write_monthly_grib,
    write_monthly_netcdf,
)
from localcds.synth.netcdf import DEFAULT_SLICE_VALUES, write_netcdf
from localcds.synth.publication import ERA5T_LATENCY, NoDataError, available_times
from localcds.synth.request import parse_request
from localcds.synth.variables import DATASET

INSTANT_FILE = "data_stream-oper_stepType-instant.nc"
ACCUM_FILE = "data_stream-oper_stepType-accum.nc"
GRIB_FILE = "data.grib"  # the member of a GRIB download asked for as a ZIP
LAND_FILE = "data_0.nc"  # ERA5-Land's NetCDF, instant and accumulated variables together


def write_download(
    request: Mapping[str, Any],
    dest: Path,
    *,
    seed: int = 0,
    now: datetime | None = None,
    today: date | None = None,
    slice_values: int = DEFAULT_SLICE_VALUES,
    dataset: str = DATASET,
) -> Path:
    """Write what the CDS would deliver for ``request`` to the file ``dest`` and return ``dest``.

    ``data_format: grib`` gives one GRIB1 file holding every variable (:mod:`.grib`), in a ZIP only
    when ``download_format: zip`` asks for one. For NetCDF the content is a single NetCDF when the
    request holds one step type, or a ZIP of ``data_stream-oper_stepType-instant.nc`` and
    ``-accum.nc`` when it holds both (or asks for ``download_format: zip``) -- whatever ``dest`` is
    called, as with the real CDS. ``now`` sets the
    publication cut-off (ERA5T latency) and the ``history`` stamp; ``today`` the expver rule.

    Raises RequestError for a request the CDS would refuse, NoDataError when none of its hours is
    published yet.
    """
    req = parse_request(request, dataset)
    now = now or datetime.now(UTC)
    today = today or now.date()
    if req.dataset in MONTHLY_DATASETS:
        return _write_monthly(req, dest, now, today, seed)
    times = available_times(req, now)
    if not times:
        raise NoDataError(
            f"none of the requested dates {req.times[0]:%Y-%m-%d} .. {req.times[-1]:%Y-%m-%d} is available "
            f"yet (data are published about {ERA5T_LATENCY.days} days behind real time)"
        )
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)

    def write(step_type: str, path: Path) -> Path:
        if req.dataset == LAND_DATASET:
            return _write_land(req, path, times, today, seed)
        if req.grib:
            return write_grib(req, path, times=times, today=today, seed=seed, slice_values=slice_values)
        return write_netcdf(req, step_type, path, times=times, today=today, seed=seed, now=now,
                            slice_values=slice_values)

    # (file name in a ZIP, step type): GRIB holds every step type in one file.
    files = [(GRIB_FILE, "all")] if req.grib else [
        (INSTANT_FILE if step == "instant" else ACCUM_FILE, step) for step in req.step_types]
    if req.dataset == LAND_DATASET:  # one file whatever the step types (ERA5-Land's NetCDF is not split)
        files = [(GRIB_FILE if req.grib else LAND_FILE, "all")]
    return _deliver(dest, files, write, zipped=req.archived, now=now)


def _deliver(dest: Path, files: Sequence[tuple[str, str]], write: Callable[[str, Path], Path], *, zipped: bool,
             now: datetime) -> Path:
    """``dest`` as the CDS delivers it: the one file ``write`` makes of ``files[0]``, or a ZIP of every
    (member name, kind) in ``files``; written beside ``dest`` and moved into place whole."""
    if not zipped:
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
        try:
            write(files[0][1], tmp)
            os.replace(tmp, dest)
        finally:
            tmp.unlink(missing_ok=True)
        return dest
    with tempfile.TemporaryDirectory(prefix=".synth-", dir=dest.parent) as tmpdir:
        members = [(name, write(kind, Path(tmpdir) / name)) for name, kind in files]
        tmp_zip = Path(tmpdir) / "download.zip"
        _write_zip(tmp_zip, members, now)
        os.replace(tmp_zip, dest)
    return dest


def _write_zip(dest: Path, members: Sequence[tuple[str, Path]], now: datetime) -> None:
    stamp = now.timestamp()
    # Deflate like the real ZIP, but at level 1: the members are compressed already, so a higher
    # level only costs time (the real ZIP gains nothing from it either).
    with zipfile.ZipFile(dest, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for name, path in members:
            # ZipFile.write takes the entry's time and mode from the file: a regular rw-r--r-- file
            # stamped with the job's time, as in the real ZIP.
            path.chmod(0o644)
            os.utime(path, (stamp, stamp))
            zf.write(path, arcname=name)


def _write_land(req: Any, path: Path, times: Sequence[datetime], today: date, seed: int) -> Path:
    """An ERA5-Land download (:mod:`.land`): one NetCDF or one GRIB file of every variable."""
    import numpy as np

    from era5etl.core.months import Month
    from localcds.synth.publication import expver_for

    lats = np.array(req.latitudes, dtype=np.float64)
    lons = np.array(req.longitudes, dtype=np.float64)
    expver = expver_for(Month(times[0].year, times[0].month), today)
    if req.grib:
        return write_land_grib(req.variables, lats, lons, float(req.grid[0]), times, path, seed=seed, expver=expver)
    return write_land_netcdf(req.variables, lats, lons, times, path, seed=seed, expver=expver)


def _write_monthly(req: Any, dest: Path, now: datetime, today: date, seed: int) -> Path:
    """A monthly-means download (:mod:`.monthly`): one GRIB file, or one NetCDF per step type (a ZIP of
    them when there are two, or when asked for one)."""
    times = available_months(req, now)
    if not times:
        raise NoDataError(f"none of the requested months {req.months[0]} .. {req.months[-1]} is published yet "
                          f"(monthly means appear about {ERA5T_LATENCY.days} days after the month)")
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)

    def write(kind: str, path: Path) -> Path:
        if req.grib:
            return write_monthly_grib(req, path, times=times, today=today, seed=seed)
        return write_monthly_netcdf(req, kind, path, times=times, today=today, seed=seed, now=now)

    files = [(GRIB_FILE, "all")] if req.grib else file_names(req)
    return _deliver(dest, files, write, zipped=req.zip_always or len(files) > 1, now=now)
