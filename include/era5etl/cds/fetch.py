"""Turn a month into a CDS request, and download it through cdsapi into staging, atomically.

The staging folder is keyed by month and by a hash of the exact request, so a rerun of the same
request finds its download and a changed area or variable list never mixes with an older one.
A download is first written under a temporary name and renamed into place only once complete,
and a manifest written last marks it usable: a crash mid-download never leaves a file that a
later step would stage.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from era5etl.months import Area, Grid, Month
from era5etl.variables import Variable

log = logging.getLogger(__name__)

DATASET = "reanalysis-era5-single-levels"
MANIFEST = "manifest.json"


class FetchError(RuntimeError):
    """The CDS refused or failed the request; the message says why (never the key)."""


@dataclass(frozen=True)
class Credentials:
    url: str | None = None
    key: str | None = None

    def __repr__(self) -> str:  # the key must never reach a log line
        return f"Credentials(url={self.url!r}, key={'***' if self.key else None})"

    @classmethod
    def from_env(cls) -> Credentials:
        """CDSAPI_URL / CDSAPI_KEY; when unset cdsapi falls back to ~/.cdsapirc itself."""
        return cls(os.environ.get("CDSAPI_URL"), os.environ.get("CDSAPI_KEY"))


@dataclass(frozen=True)
class MonthRequest:
    month: Month
    area: Area
    grid: Grid
    variables: tuple[Variable, ...]

    def cds_request(self) -> dict[str, Any]:
        return {
            "product_type": ["reanalysis"],
            "variable": [v.cds_name for v in self.variables],
            "year": [f"{self.month.year:04d}"],
            "month": [f"{self.month.month:02d}"],
            "day": [f"{d:02d}" for d in range(1, self.month.days + 1)],
            "time": [f"{h:02d}:00" for h in range(24)],
            "area": self.area.cds,
            "grid": self.grid.cds,
            "data_format": "netcdf",
            "download_format": "unarchived",
        }

    @property
    def hash(self) -> str:
        canonical = json.dumps({"dataset": DATASET, **self.cds_request()}, sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def folder(self, staging_root: Path) -> Path:
        return staging_root / str(self.month) / self.hash


@dataclass
class Download:
    path: Path
    bytes: int
    seconds: float
    request_hash: str
    reused: bool


def staged_download(folder: Path) -> Download | None:
    """The complete download in ``folder``, or None (missing, partial, or size mismatch)."""
    manifest = folder / MANIFEST
    if not manifest.exists():
        return None
    meta = json.loads(manifest.read_text())
    path = folder / meta["file"]
    if not path.exists() or path.stat().st_size != meta["bytes"]:
        return None
    return Download(path, meta["bytes"], 0.0, meta["request_hash"], reused=True)


def fetch(request: MonthRequest, staging_root: Path, credentials: Credentials) -> Download:
    """Download the request into staging, or reuse the complete download already there."""
    import cdsapi  # imported here: its import pulls in requests and ecmwf clients, not needed by callers

    folder = request.folder(staging_root)
    existing = staged_download(folder)
    if existing is not None:
        log.info("reusing the complete download %s", existing.path)
        return existing
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".download-{os.getpid()}.part"
    began = time.perf_counter()
    try:
        client = cdsapi.Client(
            url=credentials.url, key=credentials.key, quiet=True, progress=False,
            retry_max=3, sleep_max=5, timeout=120,
        )
        client.retrieve(DATASET, request.cds_request(), str(partial))
    except Exception as exc:
        partial.unlink(missing_ok=True)
        message = str(exc)
        if credentials.key:
            message = message.replace(credentials.key, "***")
        raise FetchError(f"CDS request for {request.month} ({request.hash}) failed: {message}") from None
    seconds = time.perf_counter() - began
    # The CDS names nothing: a ZIP of per-step-type files or a single NetCDF, told by magic bytes.
    with open(partial, "rb") as fh:
        magic = fh.read(4)
    name = "download.zip" if magic.startswith(b"PK") else "download.nc"
    final = folder / name
    os.replace(partial, final)
    size = final.stat().st_size
    manifest_tmp = folder / (MANIFEST + ".tmp")
    manifest_tmp.write_text(
        json.dumps({"file": name, "bytes": size, "request_hash": request.hash, "request": request.cds_request()})
    )
    os.replace(manifest_tmp, folder / MANIFEST)
    return Download(final, size, seconds, request.hash, reused=False)
