"""Shared by the read and load tests: a month through the real pipeline (``run-month`` against a local
CDS), and the rollups recomputed here, in pandas, from the hourly rows the table holds."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from era5etl.core.datasets import ERA5_GRID
from era5etl.core.rollups import KEY_COLUMNS, rolled_up, value_columns
from era5etl.db import connect, rollup_tables
from era5etl.db.rollups import data_columns

from ..helpers import cli

AREA = "46/7/45/8"  # 25 grid points on the 0.25 degree grid
RTOL = 1e-6  # a rollup's mean or sum is a float4 of a float8: a few units in float4's last place at most


def run_month(cds: Any, table: str, month: str, staging: Path, *, area: str = AREA, url: str | None = None,
              extra: tuple[str, ...] = ()) -> dict[str, Any]:
    env = {"CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(staging)}
    if url is not None:
        env["ERA5_DATABASE_URL"] = url
    code, out, err, summary = cli("run-month", month, "--area", area, "--table", table, "--json", *extra, env=env)
    assert code == 0, out + err
    assert summary is not None and summary["success"]
    return summary


def new_values(cds: Any, seed: int) -> None:
    """Every synthetic value changes (a new seed), and the jobs already run lose their results, so a
    rerun's fetch (which re-attaches to its job) submits again and downloads the new values."""
    cds.seed = seed
    for job_id in list(cds.jobs):
        cds.expire(job_id)


def _data_columns(url: str, table: str) -> list[str]:
    with connect(url) as conn:
        return data_columns(conn, table)


def hourly_frame(url: str, table: str, start: datetime, end: datetime) -> pd.DataFrame:
    columns = ("latitude", "longitude", *_data_columns(url, table))
    floats = ", ".join(f"{c}::float8 AS {c}" for c in columns)
    with connect(url) as conn:
        cur = conn.execute(f"SELECT time, location_id, {floats} FROM {table} WHERE time >= %s AND time < %s"
                           " AND location_id IS NOT NULL", (start, end))
        frame = pd.DataFrame(cur.fetchall(), columns=[d.name for d in cur.description or []])
    frame["time"] = pd.to_datetime(frame["time"], utc=True)
    return frame.astype({c: "float64" for c in columns})


def recompute(hourly: pd.DataFrame, step: str) -> pd.DataFrame:
    """The rollup of ``hourly`` to UTC days or months, by pandas from the hourly rows: a second
    derivation of what the loader computes (era5etl.core.rollups names the aggregates, nothing more)."""
    frame = hourly.copy()
    naive = frame["time"].dt.tz_convert("UTC").dt.tz_localize(None)
    frame["bucket"] = (naive.dt.floor("D") if step == "day" else naive.dt.to_period("M").dt.start_time)
    data = [c for c in hourly.columns if c not in ("time", "location_id", "latitude", "longitude")]
    if "zonal_wind_10m" in frame and "meridional_wind_10m" in frame:
        frame["wind_speed_10m"] = np.sqrt(frame["zonal_wind_10m"] ** 2 + frame["meridional_wind_10m"] ** 2)
    g = frame.groupby(["bucket", "location_id"])
    # A rollup keeps no longitude: the point's id fixes it (checked in assert_rollups_match).
    out = {"latitude": g["latitude"].min(), "hours": g.size()}
    for variable, aggs in rolled_up(data).items():
        for agg in aggs:
            out[f"{variable}_{agg}"] = (g[variable].sum(min_count=1) if agg == "sum"
                                        else getattr(g[variable], agg)())
    return pd.DataFrame(out).sort_index()


def rollup_frame(url: str, table: str, step: str, start: datetime, end: datetime) -> pd.DataFrame:
    relation = rollup_tables(table)[step]
    values = value_columns(_data_columns(url, table))
    names = ", ".join(f"{c}::float8 AS {c}" if c in (*values, "latitude") else c
                      for c in (*KEY_COLUMNS, *values))
    with connect(url) as conn:
        cur = conn.execute(f"SELECT {names} FROM {relation} WHERE bucket >= %s AND bucket < %s", (start, end))
        frame = pd.DataFrame(cur.fetchall(), columns=[d.name for d in cur.description or []])
    frame["bucket"] = pd.to_datetime(frame["bucket"], utc=True).dt.tz_localize(None)
    return frame.set_index(["bucket", "location_id"]).sort_index().astype("float64")


def assert_rollups_match(url: str, table: str, start: datetime, end: datetime) -> dict[str, pd.DataFrame]:
    """Both rollups of [start, end) equal their recomputation from the table's hourly rows: the same
    (bucket, point) rows, the same hour counts, min and max exactly, means and sums within RTOL, for
    every column the rollups hold (every data column the table has, added ones too)."""
    hourly = hourly_frame(url, table, start, end)
    assert len(hourly) > 0
    # What lets the rollups leave the longitude out: every hourly row's longitude is its id's column.
    _, lon = ERA5_GRID.coordinates(hourly["location_id"].to_numpy())
    assert np.array_equal(hourly["longitude"].to_numpy(), lon)
    got = {}
    for step in ("day", "month"):
        want, have = recompute(hourly, step), rollup_frame(url, table, step, start, end)
        assert list(have.index) == list(want.index), step
        assert (have["hours"].to_numpy() == want["hours"].to_numpy()).all(), step
        assert set(have.columns) == set(want.columns), step
        for column in want.columns:
            if column == "hours":
                continue
            a, b = have[column].to_numpy(), want[column].to_numpy()
            exact = column.endswith(("_min", "_max")) or column == "latitude"
            expected = b.astype(np.float32).astype(np.float64)  # the rollup stores float4
            if exact:
                assert np.array_equal(a, expected, equal_nan=True), (step, column)
            else:
                assert np.allclose(a, b, rtol=RTOL, atol=1e-9, equal_nan=True), (step, column)
        got[step] = have
    return got
