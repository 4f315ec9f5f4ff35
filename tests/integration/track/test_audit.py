"""`table check` (track.audit) against the real server: two months run through the local CDS and a copy
of their year agree with the ledger; then rows deleted behind the ledger's back, and a ledger month
deleted, are each found and said, with exit status 1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from era5etl.db import connect

from ..helpers import cli

AREA = "46/7/45/8"  # 25 points: a month in seconds


def test_a_table_audited_against_its_ledger(db_url: str, cds: Any, table: str, tmp_path: Path) -> None:
    env = {"CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(tmp_path)}
    for month in ("2024-01", "2024-02"):
        code, out, err, _ = cli("run-month", month, "--area", AREA, "--table", table, env=env)
        assert code == 0, out + err
    code, _, err, _ = cli("table", "years", table, "--year", "2024")
    assert code == 0, err
    code, out, err, found = cli("table", "check", table, "--json")
    assert code == 0 and found is not None, out + err
    assert (found["months"], found["copies"], found["differences"], found["open"]) == (2, 1, [], [])
    code, out, _, _ = cli("table", "check", table)
    assert code == 0 and "2 ledger month(s), 1 copied year(s) checked: the ledger and the table agree" in out, out

    # Behind the ledger's back: one hour of February's rows gone, January's ledger row gone.
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f"DELETE FROM {table} WHERE time = '2024-02-10 12:00+00'")
        conn.execute("DELETE FROM era5_months WHERE table_name = %s AND month = '2024-01-01'", (table,))
    code, out, err, found = cli("table", "check", table, "--json")
    assert code == 1 and found is not None, out + err
    said = "\n".join(found["differences"])
    assert "2024-02 46/7/45/8: the ledger says validated with 17,400 rows; the table holds 17,375" in said, said
    assert "2024-02: the daily rollup has 725 rows for 17,400 hours; the hourly rows make 725 days of points " \
           "for 17,375 hours" in said, said
    assert "2024-01: the table holds rows of this month; the ledger has no month of it" in said, said
    assert f"{table}_years holds 36,000 and the table 35,975 of the year" in said, said
    code, _, _, found = cli("table", "check", table, "--from", "2024-02", "--to", "2024-02", "--json")
    assert code == 1 and found is not None and found["months"] == 1
    assert not any(line.startswith("2024-01") for line in found["differences"]), found
