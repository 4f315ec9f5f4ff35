"""The download staged on disk: the verified part files, their checksums, and the manifest that marks a month usable.

Once the month is validated its part files may be removed (:mod:`~era5etl.fetch.retention`): the
manifest and the ``part-NN.json`` beside each part stay, the manifest noting the removal
(:class:`Removal`), so the ledger's request hash still leads to what was fetched and a rerun can say
why it fetches again.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from era5etl.core.files import file_kind

MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Removal:
    """The manifest's note that the download's files were removed: when, after which verdict, how much."""

    at: datetime
    after: str  # the validation's outcome: "validated" or "failed"
    files: int
    bytes: int

    def entry(self) -> dict[str, Any]:
        return {"at": self.at.isoformat(), "after": self.after, "files": self.files, "bytes": self.bytes}

    def message(self, month: object) -> str:
        """What a rerun says: the words the fetch step logs and ``run-month`` prints."""
        return f"download of {month} was removed after validation on {self.at:%Y-%m-%d}; fetching again"


@dataclass
class Download:
    paths: list[Path]
    bytes: int
    seconds: float
    request_hash: str
    reused: bool
    parts: int = 1
    submissions: int = 0
    queue_seconds: float = 0.0  # longest time a part's job waited in the CDS queue
    download_seconds: float = 0.0  # time spent transferring assets, summed over parts
    removed: Removal | None = None  # fetched again because validation had removed the earlier download

    @property
    def path(self) -> Path:
        """The first part; a split month has several, see ``paths``."""
        return self.paths[0]


def staged_download(folder: Path) -> Download | None:
    """The complete download in ``folder`` (every part the manifest lists, at its size), or None."""
    manifest = folder / MANIFEST
    if not manifest.exists():
        return None
    try:
        meta = json.loads(manifest.read_text())
        entries = meta.get("parts") or [{"file": meta["file"], "bytes": meta["bytes"]}]
        paths, total = [], 0
        for entry in entries:
            path = folder / entry["file"]
            if not path.exists() or path.stat().st_size != int(entry["bytes"]):
                return None
            paths.append(path)
            total += int(entry["bytes"])
    except (ValueError, KeyError, TypeError):
        return None  # a manifest we cannot read marks nothing usable
    return Download(paths, total, 0.0, str(meta.get("request_hash", "")), reused=True, parts=len(paths))


def removal(folder: Path) -> Removal | None:
    """The removal the manifest in ``folder`` notes, or None (none noted, no manifest, or one we cannot read)."""
    try:
        noted = json.loads((folder / MANIFEST).read_text()).get("removed")
        if not isinstance(noted, dict):
            return None
        return Removal(datetime.fromisoformat(noted["at"]), str(noted["after"]), int(noted["files"]),
                       int(noted["bytes"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def download_kind(path: Path) -> str | None:
    """"nc", "grib" or "zip" from the magic bytes (the CDS names nothing), None for anything else."""
    kind = file_kind(path)
    return "nc" if kind in ("nc3", "hdf5") else kind if kind in ("zip", "grib") else None


def file_md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class PartFile:
    path: Path
    bytes: int
    md5: str
    request_hash: str
    job_id: str | None

    def entry(self) -> dict[str, Any]:
        return {"file": self.path.name, "bytes": self.bytes, "md5": self.md5, "request_hash": self.request_hash,
                "job_id": self.job_id}


__all__ = ["MANIFEST", "Download", "Removal", "file_md5", "removal", "staged_download"]
