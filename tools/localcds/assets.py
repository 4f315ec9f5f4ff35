"""Asset serving: the product file as the CDS's object store serves it (no key, byte ranges, 206),
with the asset faults (drop, truncated transfer, corrupted bytes)."""

from __future__ import annotations

import re
from typing import Any, BinaryIO

from localcds.handler import BaseHandler, route
from localcds.protocol import ASSET_PREFIX
from localcds.records import DownloadRecord


class AssetHandler(BaseHandler):
    """The endpoint under :data:`~localcds.protocol.ASSET_PREFIX`."""

    @route("GET", f"{ASSET_PREFIX}[0-9a-f-]+/[0-9a-f]+\\.(?:nc|zip|grib)")
    def asset(self, match: re.Match[str]) -> None:
        path_only, _ = self.split
        found = self.cds.asset_file(path_only)
        if found is None or not found[0].exists():
            self._json(404, {"detail": "Not Found"})
            return
        path, checksum = found
        job = self.cds.asset_job(path_only)
        fault = self._fault("asset", job.inputs if job else None)
        size = path.stat().st_size
        range_header = self.headers.get("Range")
        span = _parse_range(range_header, size)
        headers = {
            "Accept-Ranges": "bytes",
            "ETag": f'"{checksum}"',
            "Last-Modified": self.date_time_string(int(path.stat().st_mtime)),
        }
        content_type = {".zip": "application/zip", ".grib": "application/x-grib"}.get(path.suffix,
                                                                                     "application/netcdf")
        if span == "unsatisfiable":
            self._send(416, b"", content_type, {**headers, "Content-Range": f"bytes */{size}"})
            self.cds.record_download(DownloadRecord(self.command, path_only, range_header, 416, 0))
            return
        start, end = span if isinstance(span, tuple) else (0, size - 1)
        status = 206 if isinstance(span, tuple) else 200
        length = end - start + 1
        truncate = self.command == "GET" and (
            (fault is not None and fault.kind == "truncate") or self.cds.take_truncation())
        corrupt = self.command == "GET" and fault is not None and fault.kind == "corrupt"
        self.cds.record_call(self.command, path_only, status)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(length))
        for name, value in headers.items():
            self.send_header(name, value)
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        if truncate:
            self.send_header("Connection", "close")
        self.end_headers()
        sent = 0
        if self.command == "GET":
            limit = length // 2 if truncate else length
            with path.open("rb") as fh:
                fh.seek(start)
                sent = _copy(fh, self.wfile, limit, flip=corrupt)
            if truncate:
                # Headers promised `length` bytes; closing now is a transfer cut mid-way.
                self.wfile.flush()
                self.close_connection = True
        self.cds.record_download(
            DownloadRecord(self.command, path_only, range_header, status, sent, truncated=truncate)
        )


def _copy(src: BinaryIO, dst: Any, limit: int, flip: bool = False) -> int:
    sent = 0
    while sent < limit:
        block = src.read(min(1 << 20, limit - sent))
        if not block:
            break
        if flip:
            # Bit rot in transit: every 4096th byte inverted, length unchanged (only a checksum tells).
            data = bytearray(block)
            for i in range(0, len(data), 4096):
                data[i] ^= 0xFF
            block = bytes(data)
        dst.write(block)
        sent += len(block)
    return sent


_RANGE_RE = re.compile(r"^bytes=(\d*)-(\d*)$")


def _parse_range(header: str | None, size: int) -> tuple[int, int] | str | None:
    """(first, last) byte of a single satisfiable range, "unsatisfiable", or None for the whole file.

    A malformed header or several ranges are ignored (the whole file, 200), which RFC 9110 allows.
    """
    if not header:
        return None
    m = _RANGE_RE.match(header.strip())
    if m is None:
        return None
    first, last = m.group(1), m.group(2)
    if not first and not last:
        return None
    if not first:  # suffix: the last N bytes
        suffix = int(last)
        if suffix == 0 or size == 0:
            return "unsatisfiable"
        return max(0, size - suffix), size - 1
    start = int(first)
    if last and int(last) < start:
        return None
    if start >= size:
        return "unsatisfiable"
    end = int(last) if last else size - 1
    return start, min(end, size - 1)
