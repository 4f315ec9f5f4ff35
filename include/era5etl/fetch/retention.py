"""Staging that stays bounded: a month's download is removed once its month is validated.

A download is needed from its fetch until its month's validation: stage and load read it, and the
Airflow retries of those tasks read it again. After the verdict nothing reads it (a rerun fetches
anew when it is gone), yet at ~5 GB a global month a backfill would otherwise keep every month it
ever loaded. So the validate step calls :func:`release`, and ``ERA5_KEEP_DOWNLOADS`` says what stays:

* ``none`` (default): the download is removed after its month's validation, passed or failed;
* ``failed``: a download whose month failed validation stays (to look at, or to reload without a
  new fetch) until the month validates; one that validated is removed;
* ``all``: nothing is removed.

Only the part files go. ``manifest.json`` (the request, each part's name, size, MD5 and CDS job)
and each ``part-NN.json`` stay, and the manifest notes the removal (:class:`~era5etl.fetch.manifest.Removal`),
so the ledger's request hash still leads to what was fetched, and a rerun says why it fetches again.
A download whose month failed before validation (a fetch, stage or load error) is left for the
task's retry and released by the month's next validation.

:func:`usage` is what staging holds (bytes, files, months), for ``status`` and the page.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Protocol

from era5etl import settings
from era5etl.core.files import write_json
from era5etl.fetch.manifest import MANIFEST, Removal, removal
from era5etl.fetch.request import MonthRequest
from era5etl.settings import KeepDownloads

log = logging.getLogger(__name__)

Outcome = Literal["validated", "failed"]


class StagedMonth(Protocol):
    """What :func:`release` needs of a month's job (``pipeline.MonthJob`` is one)."""

    @property
    def request(self) -> MonthRequest: ...

    @property
    def staging_dir(self) -> Path: ...


def _data_files(folder: Path) -> list[Path]:
    """The download's own files in a request folder: the parts and any hidden partial transfer,
    not the JSON records (manifest, part markers) that stay for the ledger."""
    try:
        return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix != ".json"
                      and not p.name.endswith(".tmp"))
    except FileNotFoundError:
        return []


def kept(keep: KeepDownloads, outcome: Outcome) -> bool:
    """Whether ``ERA5_KEEP_DOWNLOADS=keep`` keeps a download whose month's validation ended ``outcome``."""
    return keep == "all" or (keep == "failed" and outcome == "failed")


def remove(folder: Path, outcome: Outcome) -> Removal | None:
    """Remove the download's files from ``folder``, noting it in the manifest first; None if nothing was there.

    The note comes first: a crash between the two leaves a manifest saying "removed" beside files
    that are still whole, which a fetch simply reuses (it checks the files, not the note), whereas
    the other order could leave files gone and nothing saying why.
    """
    files = _data_files(folder)
    if not files:
        return None
    removed = Removal(datetime.now(UTC), outcome, len(files), sum(_size(p) for p in files))
    manifest = folder / MANIFEST
    try:
        meta = json.loads(manifest.read_text())
    except (OSError, ValueError):
        meta = {}  # no readable manifest: write one that says at least what was removed and when
    write_json(manifest, {**(meta if isinstance(meta, dict) else {}), "removed": removed.entry()})
    for path in files:
        path.unlink(missing_ok=True)
    return removed


def release(job: StagedMonth, outcome: Outcome, keep: KeepDownloads | None = None) -> Removal | None:
    """The month's validation ended ``outcome``: remove its download unless ``keep`` (default
    ``ERA5_KEEP_DOWNLOADS``) keeps it. Returns what was removed, None when nothing was.

    A removal that fails (a permission, a read-only mount) is logged as a warning and not raised:
    the month's verdict stands either way, and ``status`` keeps showing the bytes left behind.
    """
    if keep is None:
        keep = settings.load().keep_downloads
    folder = job.request.folder(job.staging_dir)
    if kept(keep, outcome):
        log.info("%s: download kept in %s (ERA5_KEEP_DOWNLOADS=%s, month %s)", job.request.month, folder, keep,
                 outcome)
        return None
    try:
        removed = remove(folder, outcome)
    except OSError as exc:
        log.warning("%s: could not remove the download in %s (%s); it stays in staging", job.request.month,
                    folder, exc)
        return None
    if removed is not None:
        log.info("%s: removed the download after validation (%s): %d file(s), %s bytes from %s; the manifest "
                 "stays (ERA5_KEEP_DOWNLOADS=%s)", job.request.month, outcome, removed.files,
                 f"{removed.bytes:,}", folder, keep)
    return removed


@dataclass(frozen=True)
class StagingUsage:
    """What staging holds now: the download files (parts, partial transfers), their bytes, the months
    they belong to, and how many request folders keep only the records of a removed download."""

    root: str
    bytes: int = 0
    files: int = 0
    months: tuple[str, ...] = ()
    released: int = 0

    def as_dict(self) -> dict[str, object]:
        return {"root": self.root, "bytes": self.bytes, "files": self.files, "months": list(self.months),
                "released": self.released}

    def text(self) -> str:
        held = f"{len(self.months)} month{'' if len(self.months) == 1 else 's'}"
        if self.months:
            held += f" ({', '.join(self.months[:6])}{', ...' if len(self.months) > 6 else ''})"
        return (f"staging {self.root}: {self.bytes / 1e6:,.1f} MB in {self.files} download file"
                f"{'' if self.files == 1 else 's'}, {held} held; {self.released} removed download"
                f"{' with its' if self.released == 1 else 's with their'} manifest kept")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:  # removed since the folder was listed: a concurrent validation's release
        return 0


def usage(root: Path) -> StagingUsage:
    """Walk ``root/<month>/<request hash>/`` (the fetch's layout) and add up what it holds."""
    total = files = released = 0
    months: set[str] = set()
    try:
        month_dirs = [d for d in os.scandir(root) if d.is_dir() and not d.name.startswith(".")]  # not .scratch
    except FileNotFoundError:
        return StagingUsage(str(root))
    for month_dir in month_dirs:
        for request_dir in os.scandir(month_dir.path):
            if not request_dir.is_dir():
                continue
            data = _data_files(Path(request_dir.path))
            if data:
                months.add(month_dir.name)
                files += len(data)
                total += sum(_size(p) for p in data)
            elif removal(Path(request_dir.path)) is not None:
                released += 1
    return StagingUsage(str(root), total, files, tuple(sorted(months)), released)


__all__ = ["Outcome", "StagedMonth", "StagingUsage", "kept", "release", "remove", "usage"]
