"""A full disk while downloading: exit 1 with one line, the partial download removed, and the table
the failed first run made dropped (issue 31: a 60 MB ``.partial`` stayed; the run's new table too).

Staging is a 256 KiB tmpfs mounted for the test: the request's notes fit, the month's download does not.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from era5etl.db import connect
from tests.tmpfs import small_tmpfs

from ..helpers import cli, forget


@pytest.fixture
def small_staging(tmp_path: Path) -> Iterator[Path]:
    with small_tmpfs(tmp_path / "staging", "256k") as where:
        yield where


def test_a_full_disk_while_downloading_removes_the_partial_file_and_the_new_table(
        db_url: str, small_staging: Path) -> None:
    table = f"t_{uuid.uuid4().hex[:10]}"
    try:
        code, out, err, _ = cli("run-month", "2024-01", "--table", table, "--local-cds",
                                env={"ERA5_STAGING_DIR": str(small_staging)})
        assert code == 1, out + err
        last = err.strip().splitlines()[-1]
        assert last.startswith("error: ") and "is full" in last and "partial download was removed" in last, err
        assert not [p for p in small_staging.rglob("*") if p.name.endswith((".partial", ".tmp"))]
        with connect(db_url) as conn:
            assert conn.execute("SELECT to_regclass(%s)", (table,)).fetchone() == (None,)
            assert conn.execute("SELECT to_regclass(%s)", (table + "_daily",)).fetchone() == (None,)
            state = conn.execute("SELECT state FROM era5_months WHERE table_name = %s", (table,)).fetchone()
        assert state == ("failed",)
    finally:
        forget(db_url, table)
