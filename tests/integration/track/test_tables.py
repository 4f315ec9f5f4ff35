"""`era5etl table list|drop` against the real server: a month run through the local CDS, then its table
listed, refused without --yes, and dropped with its rollups and records; tables outside the ledger refused."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from era5etl.core.grid import Area, Grid, expected_rows
from era5etl.core.months import Month
from era5etl.db import connect, rollup_tables

from ..helpers import cli

AREA = "46/7/45/8"  # 25 points: a month in seconds


def _exists(url: str, name: str) -> bool:
    with connect(url) as conn:
        return conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone() == (True,)


def _records(url: str, table: str) -> dict[str, int]:
    with connect(url) as conn:
        return {r: int(conn.execute(f"SELECT count(*) FROM {r} WHERE table_name = %s", (table,)).fetchone()[0])  # type: ignore[index]
                for r in ("era5_months", "era5_metrics", "era5_validation_days", "era5_tables", "era5_extents",
                          "era5_year_copies")}


def test_table_list_and_drop(db_url: str, cds: Any, table: str, tmp_path: Path) -> None:
    env = {"CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(tmp_path)}
    code, out, err, _ = cli("run-month", "2024-02", "--area", AREA, "--table", table, "--json", env=env)
    assert code == 0, out + err
    want = expected_rows(Month(2024, 2), Area.parse(AREA), Grid())
    rollups = list(rollup_tables(table).values())
    assert all(_exists(db_url, r) for r in rollups), rollups
    before = _records(db_url, table)
    assert before["era5_months"] == 1 and before["era5_metrics"] >= 4 and before["era5_validation_days"] == 29
    assert before["era5_tables"] == 1  # registered by the run that made it
    assert before["era5_extents"] == 1  # its box, widened by the load

    code, out, err, listed = cli("table", "list", "--json")
    assert code == 0, out + err
    assert listed is not None
    mine = [t for t in listed["tables"] if t["name"] == table]
    assert len(mine) == 1, listed
    assert {k: mine[0][k] for k in ("months", "areas", "rows", "validated", "first_month", "last_month", "exists")} \
        == {"months": 1, "areas": 1, "rows": want, "validated": 1, "first_month": "2024-02",
            "last_month": "2024-02", "exists": True}
    assert mine[0]["bytes"] > 0
    code, out, err, _ = cli("table", "list")
    assert code == 0 and table in out and "2024-02..2024-02" in out, out + err

    # Without --yes: refused, exit 2, nothing touched.
    code, out, err, _ = cli("table", "drop", table)
    assert code == 2, out + err
    assert "without --yes" in err and table in err, err
    assert _exists(db_url, table) and _records(db_url, table) == before

    # A table the ledger does not name is never dropped, --yes or not.
    stranger = f"not_ours_{uuid.uuid4().hex[:8]}"
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {stranger} (x int)")
    try:
        code, out, err, _ = cli("table", "drop", stranger, "--yes")
        assert code == 2, out + err
        assert "not one of the pipeline's tables" in err and table in err, err
        assert _exists(db_url, stranger)
        code, out, err, _ = cli("table", "drop", "era5_months", "--yes")
        assert code == 2 and "not one of the pipeline's tables" in err, out + err
        assert _exists(db_url, "era5_months")
    finally:
        with connect(db_url, autocommit=True) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {stranger}")

    code, out, err, done = cli("table", "drop", table, "--yes", "--json")
    assert code == 0, out + err
    assert done is not None
    assert done["dropped"] == [table, *rollups], done
    assert done["deleted"] == before, done
    assert not _exists(db_url, table) and not any(_exists(db_url, r) for r in rollups)
    assert _records(db_url, table) == {"era5_months": 0, "era5_metrics": 0, "era5_validation_days": 0,
                                       "era5_tables": 0, "era5_extents": 0, "era5_year_copies": 0}
    code, out, err, listed = cli("table", "list", "--json")
    assert code == 0 and listed is not None and table not in [t["name"] for t in listed["tables"]], listed
    # Once dropped it is no longer the pipeline's: a second drop is refused like any other table.
    code, out, err, _ = cli("table", "drop", table, "--yes")
    assert code == 2 and "not one of the pipeline's tables" in err, out + err
