"""The files a download arrives as: what each one is, from its first bytes, and a ZIP's members
extracted."""

from __future__ import annotations

import shutil
import zipfile
import zlib
from pathlib import Path

from era5etl.core.files import kind_of
from era5etl.stage.errors import StageError


def sniff_kind(path: Path, label: str) -> str:
    """'zip', 'nc3', 'hdf5' or 'grib' from the first bytes; the file name is not trusted (CDS ZIPs end in .nc)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise StageError(f"{label}: no such file") from None
    if not path.is_file():
        raise StageError(f"{label}: not a regular file")
    if size == 0:
        raise StageError(f"{label}: the file is empty (0 bytes); the download did not complete")
    with path.open("rb") as f:
        head = f.read(2056)
    kind = kind_of(head)
    if kind in ("zip", "nc3", "hdf5", "grib"):
        return kind
    raise StageError(f"{label}: not a NetCDF or GRIB file nor a ZIP of them "
                     f"({size} bytes starting {head[:32]!r})")


def extract_zip(path: Path, label: str, into: Path) -> list[tuple[Path, str]]:
    out: list[tuple[Path, str]] = []
    try:
        with zipfile.ZipFile(path) as zf:
            members = [m for m in zf.infolist() if not m.is_dir()]
            if not members:
                raise StageError(f"{label}: the ZIP holds no files")
            for i, m in enumerate(members):
                # Flattened and numbered: member names are not trusted to stay inside the temp dir.
                target = into / f"{i:03d}_{Path(m.filename).name}"
                with zf.open(m) as src, target.open("wb") as dst:
                    shutil.copyfileobj(src, dst, 4 * 2**20)
                out.append((target, f"{label} (ZIP member {m.filename})"))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error) as exc:
        raise StageError(f"{label}: corrupt or truncated ZIP ({exc})") from None
    return out
