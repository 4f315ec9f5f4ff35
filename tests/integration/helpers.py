"""Shared by the integration tests: run the CLI as a user does, forget a test's table, and read what
xarray says a file holds."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
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


def require_mount_namespaces() -> None:
    """Skip unless this process may make a mount namespace and bind-mount in it (root with
    CAP_SYS_ADMIN): the local server's backups bind their repository into its root that way."""
    with tempfile.TemporaryDirectory() as folder:
        probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "--", "mount", "--bind", folder,
                                folder], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"no mount namespace here for pgBackRest's repository: {probe.stderr.strip()[:200]}")


def same_numbers(got: Any, want: Any, path: str = "reply") -> None:
    """Assert two JSON replies equal, floats to 1e-12 relative: a region's weighted mean is a sum over its
    points, and PostgreSQL adds them in scan order (parallel workers' partial sums join in the order they
    finish), so the same question asked twice may differ in its last bit (CI, 2026-12-01)."""
    if isinstance(got, float) and isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12, nan_ok=True), path
    elif isinstance(got, dict) and isinstance(want, dict):
        assert got.keys() == want.keys(), path
        for key in got:
            same_numbers(got[key], want[key], f"{path}.{key}")
    elif isinstance(got, list) and isinstance(want, list):
        assert len(got) == len(want), path
        for index, (mine, theirs) in enumerate(zip(got, want, strict=True)):
            same_numbers(mine, theirs, f"{path}[{index}]")
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"


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


def assert_level_rollups_match(url: str, table: str) -> int:
    """The daily and monthly rollups of a table on pressure levels equal plain SQL over its hourly
    rows: one row per (bucket, level, point), its hour count, latitude, min and max exactly, the mean
    (avg over the hours in float8, stored as float4) within a few units of float4's last place of the
    hours' values (the single-level rollups' tolerance, tests/integration/read/common.RTOL). Returns
    the daily rows."""
    with connect(url) as conn:
        data = [str(r[0]) for r in conn.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped"
            " AND atttypid = 'real'::regtype AND attname NOT IN ('latitude', 'longitude') ORDER BY attnum",
            (table,)).fetchall()]
        aggs = ", ".join(f"min({c}) AS {c}_min, max({c}) AS {c}_max, avg({c}::float8) AS {c}_mean" for c in data)
        values = [f"{c}_{a}" for c in data for a in ("min", "max", "mean")]
        keys = ["bucket", "level", "location_id", "latitude", "hours", *values]
        daily_rows = 0
        for step, relation in (("day", f"{table}_daily"), ("month", f"{table}_monthly")):
            want = pd.DataFrame(conn.execute(
                f"SELECT time_bucket('1 {step}', time) AS bucket, level, location_id, min(latitude) AS latitude,"
                f" count(*) AS hours, {aggs} FROM {table} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3").fetchall(),
                columns=keys)
            have = pd.DataFrame(conn.execute(
                f"SELECT bucket, level, location_id, latitude, hours, {', '.join(values)} FROM {relation}"
                " ORDER BY 1, 2, 3").fetchall(), columns=keys)
            assert len(want) > 0
            assert want[["bucket", "level", "location_id", "hours"]].equals(
                have[["bucket", "level", "location_id", "hours"]]), step
            for column in ["latitude", *values]:
                a = have[column].to_numpy(dtype=np.float64)
                b = want[column].to_numpy(dtype=np.float64)
                if column.endswith("_mean"):
                    # A month's mean adds its days' float4 means: its error follows the hours' size,
                    # not the mean's (a mean of temperatures either side of 0 degC).
                    base = column.removesuffix("_mean")
                    size = np.fmax(np.abs(want[f"{base}_min"].to_numpy(dtype=np.float64)),
                                   np.abs(want[f"{base}_max"].to_numpy(dtype=np.float64)))
                    close = (np.abs(a - b) <= 1e-6 * size + 1e-9) | (np.isnan(a) & np.isnan(b))
                    assert close.all(), (step, column, a[~close][:3], b[~close][:3])
                else:
                    # both float4 on the server (read as their shortest decimals): equal as float4
                    assert np.array_equal(a.astype(np.float32), b.astype(np.float32), equal_nan=True), (step, column)
            if step == "day":
                daily_rows = len(have)
    return daily_rows
