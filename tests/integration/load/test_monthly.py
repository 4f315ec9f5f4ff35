"""The monthly rollup rows a load writes (load.monthly) on the test server: each grid point's month
adds up its daily rows (hours summed, least of the minima, greatest of the maxima, hour-weighted mean
of the means, sum of the sums), recomputed here in numpy from the daily rows the same load wrote,
after a load of two real files and again after one of them is reloaded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from psycopg import sql

from era5etl.db import connect, rollup_tables
from era5etl.load import load
from era5etl.stage import open_download

INSTANT = "newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc"
ACCUM = "newcds_accum_tp_2025-05_hourly_expver0005.nc"


def frame(url: str, rollup: str) -> pd.DataFrame:
    with connect(url) as conn:
        cur = conn.execute(sql.SQL("SELECT * FROM {} ORDER BY bucket, location_id").format(sql.Identifier(rollup)))
        names = [d.name for d in cur.description or []]
        return pd.DataFrame(cur.fetchall(), columns=names)


def months_from_days(daily: pd.DataFrame) -> pd.DataFrame:
    daily = daily.copy()
    values = [c for c in daily.columns if c not in ("bucket", "location_id", "latitude", "hours")]
    for c in values:
        daily[c] = daily[c].astype(np.float64)
    out = {}
    for location_id, days in daily.groupby("location_id"):
        row: dict[str, float] = {"hours": float(days["hours"].sum())}
        for c in values:
            present = days[c].notna()
            if c.endswith("_min"):
                row[c] = days[c].min()
            elif c.endswith("_max"):
                row[c] = days[c].max()
            elif c.endswith("_sum"):
                row[c] = days[c].sum(min_count=1)
            else:  # a mean: weighted by the hours each day's mean is of
                w = days["hours"][present].astype(np.float64)
                row[c] = float((days[c][present] * w).sum() / w.sum()) if w.sum() else np.nan
        out[location_id] = row
    return pd.DataFrame.from_dict(out, orient="index").sort_index()


def assert_monthly_adds_up_the_days(url: str, table: str) -> None:
    names = rollup_tables(table)
    daily, monthly = frame(url, names["day"]), frame(url, names["month"])
    assert len(monthly) == daily["location_id"].nunique() > 0
    assert {str(b)[:7] for b in monthly["bucket"]} == {"2025-05"}
    want = months_from_days(daily)
    got = monthly.set_index("location_id").sort_index()
    for c in want.columns:
        np.testing.assert_allclose(got[c].astype(np.float64).to_numpy(), want[c].to_numpy(), rtol=1e-5, atol=1e-5,
                                   err_msg=c)


def test_a_months_rows_add_up_its_days_after_a_load_and_a_reload(db_url: str, table: str, samples: Path) -> None:
    with open_download([samples / INSTANT, samples / ACCUM]) as staged:
        load(db_url, table, staged)
    assert_monthly_adds_up_the_days(db_url, table)
    with open_download([samples / ACCUM]) as staged:  # a reload of some columns' file
        load(db_url, table, staged)
    assert_monthly_adds_up_the_days(db_url, table)
