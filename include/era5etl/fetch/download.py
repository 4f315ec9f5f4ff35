"""A part's download: a finished job's results transferred into staging, resumed, verified and renamed."""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from era5etl.core.files import file_kind, write_json
from era5etl.fetch.api import CdsApi
from era5etl.fetch.errors import BadAssetError, Busy, FetchError, JobLost, ResultsExpired, Transient
from era5etl.fetch.jobs import JobRecord
from era5etl.fetch.manifest import PartFile, download_kind, file_md5
from era5etl.fetch.request import FILE_KINDS, RequestPart
from era5etl.fetch.session import CdsSession

log = logging.getLogger(__name__)


class Downloads(CdsSession):
    """The :class:`~era5etl.fetch.fetcher.Fetcher`'s downloads: the parts staged so far, and staging the rest."""

    # -- the staged parts -------------------------------------------------------------------------

    def _staged_part(self, part: RequestPart) -> PartFile | None:
        marker = self.folder / f"{part.stem}.json"
        try:
            meta = json.loads(marker.read_text())
        except (OSError, ValueError):
            return None
        if meta.get("request_hash") != part.hash:
            return None  # a part of another split: same name, different request
        path = self.folder / str(meta.get("file", ""))
        if not path.is_file() or path.stat().st_size != meta.get("bytes"):
            return None
        return PartFile(path, int(meta["bytes"]), str(meta.get("md5", "")), part.hash, meta.get("job_id"))

    # -- downloads --------------------------------------------------------------------------------

    def _download_all(self, ready: list[tuple[RequestPart, JobRecord]]
                      ) -> list[tuple[RequestPart, PartFile | Exception]]:
        if not ready:
            return []
        self.folder.mkdir(parents=True, exist_ok=True)
        if len(ready) == 1 or self.options.max_parallel == 1:
            outcomes = [(part, self._download_guarded(part, record, self.api)) for part, record in ready]
        else:
            outcomes = self._download_threads(ready)
        # Every part got its chance (and its verified file kept) before a failure is raised.
        for _, outcome in outcomes:
            if isinstance(outcome, FetchError):
                raise outcome
        return outcomes

    def _download_threads(self, ready: list[tuple[RequestPart, JobRecord]]
                          ) -> list[tuple[RequestPart, PartFile | Exception]]:

        def one(item: tuple[RequestPart, JobRecord]) -> tuple[RequestPart, PartFile | Exception]:
            api = self._new_api()  # requests sessions are not shared between threads
            try:
                return item[0], self._download_guarded(item[0], item[1], api)
            finally:
                api.close()

        with ThreadPoolExecutor(max_workers=min(self.options.max_parallel, len(ready)),
                                thread_name_prefix="cds-download") as pool:
            outcomes = list(pool.map(one, ready))
        return outcomes

    def _download_guarded(self, part: RequestPart, record: JobRecord, api: CdsApi) -> PartFile | Exception:
        try:
            return self._download(part, record, api)
        except (ResultsExpired, JobLost) as gone:
            log.warning("%s: the results of job %s expired (%s); it will be submitted again",
                        part.label, record.job_id, gone)
            record.state, record.error = "expired", str(gone)
            self.store.put(record)
            return gone
        except Busy as busy:
            return busy
        except FetchError as exc:
            return exc

    def _download(self, part: RequestPart, record: JobRecord, api: CdsApi) -> PartFile:
        job_id = str(record.job_id)
        what = f"downloading CDS job {job_id} ({part.label})"
        remote = self._retry(what, "job", lambda: api.remote(job_id), part=part, job_id=job_id)
        results = self._retry(what, "results", lambda: remote.get_results(), part=part, job_id=job_id)
        url, size = str(results.location), int(results.content_length)
        checksum = results.asset.get("file:checksum")
        partial = self.folder / f".{part.stem}.{job_id}.partial"
        began = time.perf_counter()
        self._retry(what, "asset", lambda: self._transfer_or_clean(api, url, size, checksum, partial), part=part,
                    job_id=job_id)
        seconds = time.perf_counter() - began
        kind = download_kind(partial) if size > 0 else None
        wanted = part.month.data_format
        if kind is None or file_kind(partial) not in FILE_KINDS[wanted]:
            head = partial.read_bytes()[:16]
            partial.unlink(missing_ok=True)
            why = ("an empty file" if size == 0 else
                   f"{size:,} bytes of {'GRIB' if kind == 'grib' else 'NetCDF'}, not the {wanted} asked for"
                   if kind is not None else f"{size:,} bytes that are neither NetCDF nor ZIP nor GRIB ({head!r}...)")
            record.state, record.error = "failed", f"bad product: {why}"
            self.store.put(record)
            raise BadAssetError(self._redact(
                f"{what}: the CDS delivered {why}; nothing was staged. The job is marked failed so the next "
                "run submits the request again; if the CDS keeps serving the same product from its cache, "
                "report it to the CDS support with the job id"))
        final = self.folder / f"{part.stem}.{kind}"
        md5 = checksum if isinstance(checksum, str) and checksum else file_md5(partial)
        os.replace(partial, final)
        staged = PartFile(final, size, md5, part.hash, job_id)
        write_json(self.folder / f"{part.stem}.json", staged.entry())
        record.state, record.downloaded_at, record.download_seconds = "downloaded", datetime.now(UTC), seconds
        record.bytes, record.checksum, record.file = size, md5, str(final)
        self.store.put(record)
        log.info("%s: %s bytes in %.2f s from job %s", part.label, f"{size:,}", seconds, job_id)
        return staged

    def _transfer_or_clean(self, api: CdsApi, url: str, size: int, checksum: Any, partial: Path) -> None:
        """:meth:`_transfer`; on a full disk the partial file is removed (it would only hold the space,
        and a rerun starts over) and the fetch fails with a FetchError saying so, never retried."""
        try:
            self._transfer(api, url, size, checksum, partial)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            partial.unlink(missing_ok=True)
            raise FetchError(f"the disk of {self.folder} is full ({exc.strerror}): the partial download was "
                             "removed; free space (or set ERA5_STAGING_DIR elsewhere) and run the month again"
                             ) from None

    def _transfer(self, api: CdsApi, url: str, size: int, checksum: Any, partial: Path) -> None:
        """Fill ``partial`` up to ``size`` bytes (resuming with Range), then check it against ``checksum``."""
        with open(partial, "a+b") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise Busy(f"{partial.name} is being downloaded by another process") from None
            have = fh.seek(0, os.SEEK_END)
            if have > size:
                fh.truncate(0)
                have = 0
            if have < size:
                headers = {"Range": f"bytes={have}-"} if have else {}
                with api.session.get(url, stream=True, headers=headers, timeout=self.options.http_timeout) as r:
                    if r.status_code == 416:
                        fh.truncate(0)
                        raise Transient("the asset is shorter than announced (416); starting over")
                    r.raise_for_status()
                    if r.status_code != 206:
                        fh.truncate(0)
                    fh.seek(0, os.SEEK_END)
                    # 64 KiB: what a cut connection loses is the unfinished chunk, so keep chunks modest.
                    for chunk in r.iter_content(chunk_size=1 << 16):
                        fh.write(chunk)
                fh.flush()
                have = fh.seek(0, os.SEEK_END)
            if have != size:
                raise Transient(f"download incomplete: {have:,} of {size:,} bytes")
            os.fsync(fh.fileno())
        if isinstance(checksum, str) and len(checksum) == 32 and file_md5(partial) != checksum.lower():
            partial.unlink(missing_ok=True)
            raise Transient("the download does not match the asset's checksum; downloading it again")
