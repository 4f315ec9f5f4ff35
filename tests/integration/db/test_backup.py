"""Backups and point-in-time restore with pgBackRest (db.backup), on a server of the test's own.

Three months are loaded through the CLI from the local CDS; a full backup is taken while the second
month loads (its hours are written into the backup's span, and come back from the WAL), an
incremental one after the third. The data directory is then destroyed and the server restored to a
moment between the second and the third months' loads: the first two months come back row for row
(checksums), the third is gone from the table and the ledger alike, ``table check`` finds nothing
amiss, and loading the third month again gives exactly its rows.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from era5etl.core.months import Month
from era5etl.db.local import DATA_DIR_IN_ROOT, LocalTimescale
from localcds.server import LocalCDS

from ..helpers import require_mount_namespaces

AREA = "46/7/45/8"
TABLE = "backed_up"
MONTHS = (Month(2023, 1), Month(2023, 2), Month(2023, 3))


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, cds: LocalCDS) -> Iterator[dict[str, Any]]:
    require_mount_namespaces()
    base = tmp_path_factory.mktemp("backup")
    env = {k: v for k, v in os.environ.items() if k != "ERA5_DATABASE_URL"}
    env.update({"ERA5_HOME": str(base / "home"), "ERA5_BACKUP_REPOSITORY": str(base / "repo"),
                "ERA5_STAGING_DIR": str(base / "staging"), "CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key})
    server = LocalTimescale(home=base / "home", backup_repository=base / "repo")
    try:
        yield {"env": env, "server": server, "url": server.up(), "base": base}
    finally:
        server.down()
        shutil.rmtree(base / "home", ignore_errors=True)


def _cli(stack: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "era5etl", *args], capture_output=True, text=True,
                          env=stack["env"], timeout=600)


def _run(stack: dict[str, Any], *args: str) -> dict[str, Any]:
    proc = _cli(stack, *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    last = proc.stdout.strip().splitlines()[-1] if "--json" in args else "{}"
    return dict(json.loads(last))


def _load(month: Month) -> list[str]:
    return ["run-month", str(month), "--area", AREA, "--table", TABLE]


def _checksums(url: str) -> dict[str, tuple[int, str | None]]:
    """Per month: its rows, and the md5 of all of them in key order."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            f"SELECT to_char(time, 'YYYY-MM'), count(*), md5(string_agg(t::text, ';' ORDER BY time, location_id))"
            f" FROM {TABLE} t GROUP BY 1").fetchall()
    return {m: (n, digest) for m, n, digest in rows}


def _ledger(url: str) -> dict[str, str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT to_char(month, 'YYYY-MM'), state FROM era5_months WHERE table_name = %s",
                            (TABLE,)).fetchall()
    return dict(rows)


def _now(url: str) -> datetime:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT now()").fetchone()
    assert row is not None
    return row[0]


def test_a_restore_to_a_moment_between_two_months_loads(stack: dict[str, Any]) -> None:
    url, env = stack["url"], stack["env"]
    _run(stack, *_load(MONTHS[0]))
    # The full backup while February loads: February's hours land in the backup's span.
    loading = subprocess.Popen([sys.executable, "-m", "era5etl", *_load(MONTHS[1])], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    full = _run(stack, "db", "backup", "--type", "full", "--json")
    out, _ = loading.communicate(timeout=600)
    assert loading.returncode == 0, out
    # The moment a second after the backup's end at least: pgBackRest's stop times are whole seconds.
    while _now(url).timestamp() < datetime.fromisoformat(full["stopped"]).timestamp() + 2:
        time.sleep(0.5)
    point = _now(url)
    time.sleep(1.0)
    _run(stack, *_load(MONTHS[2]))
    incr = _run(stack, "db", "backup", "--type", "incr", "--json")
    assert (full["type"], incr["type"]) == ("full", "incr")
    assert incr["label"].startswith(full["label"]) and 0 < incr["stored_bytes"] < full["stored_bytes"]
    listed = _run(stack, "db", "backups", "--json")["backups"]
    assert [b["label"] for b in listed] == [full["label"], incr["label"]]
    before = _checksums(url)
    assert sorted(before) == [str(m) for m in MONTHS] and _ledger(url) == {str(m): "validated" for m in MONTHS}

    # Before the oldest backup ended, nothing can be restored: refused before the server is touched.
    early = _cli(stack, "db", "restore", "--to", full["started"], "--yes")
    assert early.returncode == 2 and "not after the end of the oldest backup" in early.stderr, early.stderr
    assert _checksums(url) == before

    # The disk is lost: the data directory destroyed under a stopped server.
    _run(stack, "db", "down")
    shutil.rmtree(Path(str(stack["server"].root) + DATA_DIR_IN_ROOT))
    done = _run(stack, "db", "restore", "--to", point.isoformat(), "--yes", "--json")
    assert done["replaced_data_directory"] is None

    after = _checksums(url)
    assert after == {str(m): before[str(m)] for m in MONTHS[:2]}
    assert _ledger(url) == {str(m): "validated" for m in MONTHS[:2]}
    checked = _run(stack, "table", "check", TABLE, "--json")
    assert checked["differences"] == [], checked

    # The catch-up's view: March is not in the ledger, so it loads again, exactly as before.
    _run(stack, *_load(MONTHS[2]))
    assert _checksums(url) == before and _ledger(url) == {str(m): "validated" for m in MONTHS}
    # Backups go on after the restore (a new timeline), incremental on the same full.
    again = _run(stack, "db", "backup", "--json")
    assert again["type"] == "incr" and again["label"].startswith(full["label"])
