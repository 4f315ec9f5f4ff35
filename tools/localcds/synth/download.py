"""The download: what the CDS delivers for a request, one NetCDF file or a ZIP of one per step type."""

from __future__ import annotations

import os
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from localcds.synth.netcdf import DEFAULT_SLICE_VALUES, write_netcdf
from localcds.synth.publication import ERA5T_LATENCY, NoDataError, available_times
from localcds.synth.request import parse_request

INSTANT_FILE = "data_stream-oper_stepType-instant.nc"
ACCUM_FILE = "data_stream-oper_stepType-accum.nc"


def write_download(
    request: Mapping[str, Any],
    dest: Path,
    *,
    seed: int = 0,
    now: datetime | None = None,
    today: date | None = None,
    slice_values: int = DEFAULT_SLICE_VALUES,
) -> Path:
    """Write what the CDS would deliver for ``request`` to the file ``dest`` and return ``dest``.

    The content is a single NetCDF when the request holds one step type, or a ZIP of
    ``data_stream-oper_stepType-instant.nc`` and ``-accum.nc`` when it holds both (or asks for
    ``download_format: zip``) -- whatever ``dest`` is called, as with the real CDS. ``now`` sets the
    publication cut-off (ERA5T latency) and the ``history`` stamp; ``today`` the expver rule.

    Raises RequestError for a request the CDS would refuse, NoDataError when none of its hours is
    published yet.
    """
    req = parse_request(request)
    now = now or datetime.now(UTC)
    today = today or now.date()
    times = available_times(req, now)
    if not times:
        raise NoDataError(
            f"none of the requested dates {req.times[0]:%Y-%m-%d} .. {req.times[-1]:%Y-%m-%d} is available "
            f"yet (data are published about {ERA5T_LATENCY.days} days behind real time)"
        )
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    kw: dict[str, Any] = {
        "times": times, "today": today, "seed": seed, "now": now, "slice_values": slice_values,
    }
    if not req.archived:
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
        try:
            write_netcdf(req, req.step_types[0], tmp, **kw)
            os.replace(tmp, dest)
        finally:
            tmp.unlink(missing_ok=True)
        return dest

    with tempfile.TemporaryDirectory(prefix=".synth-", dir=dest.parent) as tmpdir:
        members = []
        for step in req.step_types:
            name = INSTANT_FILE if step == "instant" else ACCUM_FILE
            members.append((name, write_netcdf(req, step, Path(tmpdir) / name, **kw)))
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
