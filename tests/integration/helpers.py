"""Shared by the integration tests: run the CLI as a user does, forget a test's table, and read what
xarray says a file holds."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from era5etl.core.errors import InputError
from era5etl.core.grid import location_ids, normalize_longitude
from era5etl.core.variables import CATALOGUE_BY_SHORT_NAME
from era5etl.db import connect, drop_table


def cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str, dict[str, Any] | None]:
    """Run `python -m era5etl ...`; returns exit code, stdout, stderr and the last-line JSON if any."""
    proc = subprocess.run([sys.executable, "-m", "era5etl", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=600)
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    try:
        obj = json.loads(last) if last.startswith("{") else None
    except json.JSONDecodeError:
        obj = None
    return proc.returncode, proc.stdout, proc.stderr, obj


def forget(url: str, table: str) -> None:
    """A test's table gone with its rollups and its rows in the ledger, metrics and validation days
    (whatever the test got to write before it ended)."""
    with connect(url, autocommit=True) as conn:
        drop_table(conn, table)
        for book in ("era5_months", "era5_metrics", "era5_validation_days", "era5_tables"):
            if conn.execute("SELECT to_regclass(%s) IS NOT NULL", (book,)).fetchone() == (True,):
                conn.execute(f"DELETE FROM {book} WHERE table_name = %s", (table,))


def expected_frame(path: Path) -> pd.DataFrame:
    """The table rows a NetCDF should become, computed from xarray's own decoding: one row per
    (time, grid point), value = decoded * scale + offset in float64, then float32."""
    with xr.open_dataset(path, engine="netcdf4") as ds:
        tdim = "valid_time" if "valid_time" in ds.dims else "time"
        lat = ds["latitude"].values
        lon = ds["longitude"].values
        glat, glon = np.meshgrid(lat, lon, indexing="ij")
        try:
            ids: np.ndarray = location_ids(glat.ravel(), glon.ravel())
        except InputError:  # a grid off the 0.25 degree lattice: no ids, NULL in the table
            ids = np.full(glat.size, np.nan)
        times = ds[tdim].values.astype("datetime64[us]")
        frame = pd.DataFrame({
            "time": np.repeat(times, ids.size),
            "location_id": np.tile(ids, times.size),
            "latitude": np.tile(glat.ravel().astype(np.float32), times.size),
            "longitude": np.tile(normalize_longitude(glon.ravel()).astype(np.float32), times.size),
        })
        for name, var in CATALOGUE_BY_SHORT_NAME.items():
            if name in ds.data_vars:
                values = ds[name].values.astype(np.float64) * var.scale + var.offset
                frame[var.column] = values.reshape(times.size, -1).astype(np.float32).ravel()
    return frame


@contextlib.contextmanager
def http_reads(url: str, table: str, area: str, run_id: str) -> Iterator[Any]:
    """The dashboard plugin's FastAPI app called in-process (a TestClient) with its login dependency
    lifted and its connection lookup answering ``url``; ``table`` is put in the ledger (a loaded
    2024-01 of ``area``), as the HTTP reads answer for the pipeline's tables only."""
    from fastapi.testclient import TestClient

    from era5etl.airflow.plugins import era5_dashboard as plugin
    from era5etl.core.months import Month
    from era5etl.track import ledger

    ledger.set_state(url, table=table, month=Month.parse("2024-01"), area=area, grid="0.25/0.25", state="loaded",
                     run_id=run_id)
    plugin.app.dependency_overrides[plugin.require_reader] = lambda: None
    saved = plugin.url_cache
    plugin.url_cache = (float("inf"), url)  # the connection lookup answers this database
    try:
        yield TestClient(plugin.app)
    finally:
        plugin.url_cache = saved
        plugin.app.dependency_overrides.clear()
