"""A part's download (fetch.download) from the local CDS through the real cdsapi client: staged with its
size and checksum (recomputed here with hashlib), reused as it is by the next fetch, and a staged file
cut short fetched again from the recorded job, without submitting the request twice."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import VARIABLES
from era5etl.db import ensure_schema
from era5etl.fetch import Credentials, FetchOptions, MonthRequest, fetch
from era5etl.fetch.jobs import PgJobStore
from localcds.server import LocalCDS

pytestmark = pytest.mark.integration

FAST = FetchOptions(retries=2, backoff_base=0.05, backoff_cap=0.2, poll_base=0.05, poll_cap=0.2,
                    wait_timeout=60, http_timeout=10)


def submitted(cds: LocalCDS, month: Month) -> int:
    return sum(1 for r in cds.requests if r.get("year") == [f"{month.year:04d}"]
               and r.get("month") == [f"{month.month:02d}"])


def test_staged_reused_and_a_cut_file_fetched_again(cds: LocalCDS, db_url: str, tmp_path: Path) -> None:
    ensure_schema(db_url)
    store = PgJobStore(db_url)
    month = Month(2019, 7)
    request = MonthRequest(month, Area.parse("46/7/45.5/7.5"), Grid(), VARIABLES)
    creds = Credentials(cds.url, cds.key)

    first = fetch(request, tmp_path, creds, store=store, options=FAST)
    (path,) = first.paths
    data = path.read_bytes()
    assert not first.reused and first.bytes == len(data) > 0
    (marker,) = [m for m in request.folder(tmp_path).glob("*.json") if json.loads(m.read_text()).get("file")]
    meta = json.loads(marker.read_text())
    assert (meta["file"], meta["bytes"], meta["request_hash"]) == (path.name, len(data), request.hash)
    assert meta["md5"] == hashlib.md5(data, usedforsecurity=False).hexdigest()
    record = store.get(cds.url, request.hash)
    assert record is not None and (record.state, record.bytes, record.file) == ("downloaded", len(data), str(path))

    again = fetch(request, tmp_path, creds, store=store, options=FAST)
    assert again.reused and again.paths == [path] and submitted(cds, month) == 1

    path.write_bytes(data[: len(data) // 2])  # a staged file cut short (a disk trouble, a copy interrupted)
    healed = fetch(request, tmp_path, creds, store=store, options=FAST)
    assert not healed.reused and healed.paths == [path] and path.read_bytes() == data
    assert submitted(cds, month) == 1  # fetched again from the recorded job, not submitted again
