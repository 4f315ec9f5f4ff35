"""The fetch tests' local CDS: a fresh server for each module (what a test counts of the server's
requests is its module's own), started on a work folder of its own; the rows its jobs left in
``era5_cds_jobs`` go with it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from era5etl.db import connect
from localcds.server import LocalCDS


@pytest.fixture(scope="module")
def cds(tmp_path_factory: pytest.TempPathFactory, db_url: str) -> Iterator[LocalCDS]:
    with LocalCDS(workdir=tmp_path_factory.mktemp("localcds")) as server:
        yield server
        with connect(db_url, autocommit=True) as conn:
            conn.execute("DELETE FROM era5_cds_jobs WHERE api_url = %s", (server.url,))
