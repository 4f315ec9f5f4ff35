"""Rollups rebuilt from the hourly rows (load.rebuild) on the test server: after a real sample is loaded
(the loader aggregating in the client), dropping the rollups and rebuilding them in SQL gives the same
daily and monthly rows; the counts and the per-month callback say what was written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from psycopg import sql

from era5etl.db import connect, rollup_tables
from era5etl.load import load
from era5etl.load.rebuild import rebuild
from era5etl.stage import open_download

SAMPLE = "newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc"


def rows(url: str, rollup: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    with connect(url) as conn:
        cur = conn.execute(sql.SQL("SELECT * FROM {} ORDER BY bucket, location_id").format(sql.Identifier(rollup)))
        return [d.name for d in cur.description or []], cur.fetchall()


def assert_same(before: tuple[list[str], list[tuple[Any, ...]]], after: tuple[list[str], list[tuple[Any, ...]]]
                ) -> None:
    names, old = before
    assert after[0] == names and len(after[1]) == len(old) > 0
    for i, name in enumerate(names):
        was, now = [r[i] for r in old], [r[i] for r in after[1]]
        if was and isinstance(was[0], float | int) and not isinstance(was[0], bool):
            np.testing.assert_allclose(np.array(now, dtype=np.float64), np.array(was, dtype=np.float64),
                                       rtol=1e-5, atol=1e-6, err_msg=name)
        else:
            assert now == was, name


def test_rebuilt_rollups_equal_the_loaders(db_url: str, table: str, samples: Path) -> None:
    with open_download([samples / SAMPLE]) as staged:
        load(db_url, table, staged)
    names = rollup_tables(table)
    daily, monthly = rows(db_url, names["day"]), rows(db_url, names["month"])

    months: list[tuple[str, int]] = []
    out = rebuild(db_url, table, on_month=lambda month, n: months.append((month, n)))

    assert out == {"months": 1, "daily_rows": len(daily[1]), "monthly_rows": len(monthly[1])}
    assert months == [("2025-05", len(daily[1]))]
    assert_same(daily, rows(db_url, names["day"]))
    assert_same(monthly, rows(db_url, names["month"]))


def test_an_empty_table_rebuilds_nothing(db_url: str, table: str) -> None:
    assert rebuild(db_url, table) == {"months": 0, "daily_rows": 0, "monthly_rows": 0}
