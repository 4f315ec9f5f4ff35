"""Files as the CDS delivers them and as the pipeline keeps them: what a file is (the CDS names
nothing: its ZIPs end in ``.nc``), and JSON written whole or not at all."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from era5etl.core.errors import InputError

HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"


def kind_of(head: bytes) -> str | None:
    """``zip``, ``nc3``, ``hdf5`` (NetCDF4) or ``grib`` from a file's first bytes (2,056 of them find an
    HDF5 signature behind a user block); None for anything else."""
    if head[:2] == b"PK":  # any ZIP record (an empty or broken archive too: the reader says what is wrong)
        return "zip"
    if head[:3] == b"CDF" and head[3:4] in (b"\x01", b"\x02", b"\x05"):
        return "nc3"
    # HDF5 allows a user block before the signature, at 512 * 2**k.
    if any(head[off:off + 8] == HDF5_MAGIC for off in (0, 512, 1024, 2048)):
        return "hdf5"
    if head[:4] == b"GRIB":
        return "grib"
    return None


def file_kind(path: Path) -> str | None:
    """:func:`kind_of` of a file on disk."""
    with path.open("rb") as fh:
        return kind_of(fh.read(2056))


def write_json(path: Path, obj: Any, *, indent: int = 1, private: bool = False) -> None:
    """Write ``obj`` as JSON so that a reader sees the old file or the new one, never half of one
    (a temporary file per process and thread, then a rename); ``private``: mode 0600 from birth."""
    write_text_atomic(path, json.dumps(obj, sort_keys=True, indent=indent, default=str) + "\n", private=private)


def write_text_atomic(path: Path, text: str, *, private: bool = False) -> None:
    """``text`` into ``path`` whole or not at all; ``private``: readable by its owner only from the
    moment it exists (created 0600, never widened then narrowed). A failure (a full disk) removes the
    temporary file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open_private(tmp) if private else tmp.open("w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def open_private(path: Path, mode: str = "w") -> Any:
    """``path`` opened for writing (``w``) or appending (``a``, ``ab``), created 0600; an existing file
    is put to 0600 as well (one written by an older version)."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if mode.startswith("a") else os.O_TRUNC)
    fd = os.open(path, flags, 0o600)
    os.fchmod(fd, 0o600)
    return os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8")


class FolderNotWritable(InputError):
    """A folder a setting names cannot be made or written by this process."""


def require_writable(folder: Path, setting: str) -> None:
    """``folder`` made if missing, and writable by this process (root included: a read-only file system
    refuses root too); FolderNotWritable naming ``setting`` otherwise, before any work needs it."""
    if folder.exists() and not folder.is_dir():
        raise FolderNotWritable(f"{setting}={folder} is not a folder; give a folder this user may write")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FolderNotWritable(f"{setting}={folder} cannot be made: {exc.strerror or exc}; give a folder this "
                                "user may write") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FolderNotWritable(f"{setting}={folder} is not writable by this user (or is on a read-only file "
                                "system); give a folder this user may write")

