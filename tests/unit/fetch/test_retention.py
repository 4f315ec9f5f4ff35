"""Retention on real files: what a removal deletes and keeps, what it notes, and what staging holds.

The folder is laid out as the fetch leaves it (``<month>/<request hash>/part-NN.<kind>``, a
``part-NN.json`` beside each part, ``manifest.json`` last), from real CDS samples.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import parse_list
from era5etl.fetch import MANIFEST, retention, staged_download
from era5etl.fetch.manifest import PartFile, file_md5, removal
from era5etl.pipeline.job import MonthJob

INSTANT = "newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc"
ACCUM = "newcds_accum_tp_2025-05_hourly_expver0005.nc"


MAY = Month(2025, 5)


def _job(staging: Path, month: Month = MAY) -> MonthJob:
    return MonthJob(month, Area.parse("46/7/45/8"), Grid(), tuple(parse_list(["2m_temperature"])), "weather",
                    "test-run", staging)


def _stage(samples: Path, job: MonthJob, names: tuple[str, ...] = (INSTANT, ACCUM)) -> Path:
    """The month staged in two parts, as the fetcher writes them."""
    folder = job.request.folder(job.staging_dir)
    folder.mkdir(parents=True)
    parts = []
    for i, name in enumerate(names):
        path = folder / f"part-{i:02d}.nc"
        shutil.copyfile(samples / name, path)
        part = PartFile(path, path.stat().st_size, file_md5(path), f"hash{i}", f"job-{i}")
        (folder / f"part-{i:02d}.json").write_text(json.dumps(part.entry()))
        parts.append(part.entry())
    (folder / MANIFEST).write_text(json.dumps({"request_hash": job.request.hash,
                                               "request": job.request.cds_request(), "parts": parts}))
    return folder


def test_removal_deletes_the_parts_and_keeps_the_manifest_checksums_and_request(samples: Path,
                                                                                 tmp_path: Path) -> None:
    job = _job(tmp_path)
    folder = _stage(samples, job)
    (folder / ".part-02.job-2.partial").write_bytes(b"half a transfer")  # a leftover of a cut download
    before = json.loads((folder / MANIFEST).read_text())
    size = sum(p.stat().st_size for p in folder.iterdir() if p.suffix != ".json")
    assert staged_download(folder) is not None

    removed = retention.release(job, "validated", keep="none")

    assert removed is not None and (removed.after, removed.files, removed.bytes) == ("validated", 3, size)
    assert sorted(p.name for p in folder.iterdir()) == [MANIFEST, "part-00.json", "part-01.json"]
    after = json.loads((folder / MANIFEST).read_text())
    assert {k: v for k, v in after.items() if k != "removed"} == before  # request, parts, sizes, MD5s
    assert after["removed"] == removed.entry()
    assert json.loads((folder / "part-00.json").read_text())["md5"] == file_md5(samples / INSTANT)
    assert staged_download(folder) is None and removal(folder) == removed
    assert removed.message(job.month) == (
        f"download of 2025-05 was removed after validation on {removed.at:%Y-%m-%d}; fetching again")
    assert retention.release(job, "validated", keep="none") is None  # nothing left to remove


@pytest.mark.parametrize(("keep", "outcome", "removed"), [
    ("none", "validated", True), ("none", "failed", True),
    ("failed", "validated", True), ("failed", "failed", False),
    ("all", "validated", False), ("all", "failed", False),
])
def test_the_setting_decides_what_stays(samples: Path, tmp_path: Path, keep: str, outcome: str,
                                        removed: bool) -> None:
    job = _job(tmp_path)
    folder = _stage(samples, job)
    result = retention.release(job, outcome, keep=keep)  # type: ignore[arg-type]
    assert (result is not None) is removed
    assert (staged_download(folder) is None) is removed
    assert retention.kept(keep, outcome) is not removed  # type: ignore[arg-type]


def test_release_reads_era5_keep_downloads(samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = _job(tmp_path)
    folder = _stage(samples, job)
    monkeypatch.setenv("ERA5_KEEP_DOWNLOADS", "Failed")  # case and spaces as a user may write them
    assert retention.release(job, "failed") is None and staged_download(folder) is not None
    assert retention.release(job, "validated") is not None and staged_download(folder) is None


def test_a_note_written_before_a_crash_does_not_hide_a_whole_download(samples: Path, tmp_path: Path) -> None:
    """The note is written before the files go: if the process dies in between, the files are still
    whole and a fetch reuses them (it checks the files, not the note)."""
    job = _job(tmp_path)
    folder = _stage(samples, job)
    meta = json.loads((folder / MANIFEST).read_text())
    meta["removed"] = {"at": "2026-11-24T21:00:00+00:00", "after": "validated", "files": 2, "bytes": 1}
    (folder / MANIFEST).write_text(json.dumps(meta))
    found = staged_download(folder)
    assert found is not None and len(found.paths) == 2


def test_usage_counts_the_download_files_by_month(samples: Path, tmp_path: Path) -> None:
    assert retention.usage(tmp_path / "never-made") == retention.StagingUsage(str(tmp_path / "never-made"))
    may, june, july = (_job(tmp_path, Month(2025, m)) for m in (5, 6, 7))
    _stage(samples, may)
    _stage(samples, june, (INSTANT,))
    _stage(samples, july, (ACCUM,))
    whole = (samples / INSTANT).stat().st_size + (samples / ACCUM).stat().st_size
    held = retention.usage(tmp_path)
    assert (held.bytes, held.files, held.months, held.released) == (2 * whole, 4, ("2025-05", "2025-06", "2025-07"),
                                                                   0)
    retention.release(june, "validated", keep="none")
    retention.release(july, "validated", keep="none")
    held = retention.usage(tmp_path)
    assert (held.bytes, held.files, held.months, held.released) == (whole, 2, ("2025-05",), 2)
    assert held.as_dict()["months"] == ["2025-05"]
    assert held.text().startswith(f"staging {tmp_path}: {whole / 1e6:,.1f} MB in 2 download files, 1 month "
                                  "(2025-05) held; 2 removed downloads")
