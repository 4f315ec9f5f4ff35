"""The blog's path: the trillion-rows post's psycopg3 loader (a pandas frame per hour, ``write_row`` in a
text COPY), reproduced on the product's table columns and units."""

from __future__ import annotations

import tempfile
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from psycopg import sql

from era5bench.tables import column_list
from era5etl.core.grid import location_ids
from era5etl.core.variables import VARIABLES
from era5etl.db import connect, table_ident


@dataclass
class BlogTiming:
    rows: int = 0
    open_seconds: float = 0.0
    # The post's two timers: its loader's (each hour's frame built, copied and committed) and its
    # copy_timer (the write_row loop alone). The ratio target is against the first, as the post's own
    # figures (up to its 462k rows/s) are; the second is printed beside it.
    seconds: float = 0.0
    copy_seconds: float = 0.0


def blog_frame(ds: Any, tdim: str, hour: int, present: Sequence[Any], columns: Sequence[str]) -> Any:
    """One hour as the post's ``weather_dataframe`` builds it: ``isel(time=n).to_dataframe()`` and
    ``reset_index()``, units converted column by column, longitude remapped with a per-row
    ``Series.apply(lambda ...)``, ids computed from the coordinates, the table's columns picked.

    Only what keeps the rows identical to the product's is changed: units are computed in float64
    and rounded to float4 once (the post subtracts in float32), the lambda also maps -180 to 180
    (the table's (-180, 180]), and times are the naive UTC the post sends, in a UTC session.
    """
    df = ds.isel({tdim: hour}).to_dataframe().reset_index()
    df = df.rename(columns={tdim: "time", **{v.short_name: v.column for v in present}})
    for v in present:
        df[v.column] = (df[v.column].to_numpy(np.float64) * v.scale + v.offset).astype(np.float32)
    df["longitude"] = df["longitude"].apply(lambda x: x - 360.0 if x > 180.0 else x + 360.0 if x <= -180.0 else x)
    df["location_id"] = location_ids(df["latitude"].to_numpy(), df["longitude"].to_numpy())
    df["latitude"] = df["latitude"].astype(np.float32)
    df["longitude"] = df["longitude"].astype(np.float32)
    return df[list(columns)]


def blog_path(url: str, table: str, paths: Sequence[Path], hours: int | None = None,
              timing: BlogTiming | None = None) -> int:
    """The trillion-rows post's psycopg3 loader (``copy_data_using_psycopg3`` over ``weather_dataframe``):
    per hour, the frame (``blog_frame``), then ``copy.write_row(row)`` for each of
    ``df.itertuples(index=False, name=None)`` in a text COPY, and a commit.

    Done to the same table columns and units as the product so both load the same rows. A new-CDS
    ZIP is unpacked and its members merged first, as anyone opening such a download with xarray has
    to. Opening is not timed (the post reopens its files every hour: leaving that out can only
    flatter the blog's path); each hour's frame, COPY and commit are.
    """
    import xarray as xr

    timing = timing if timing is not None else BlogTiming()
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="era5-bench-blog-") as tmp:
        files: list[Path] = []
        for path in paths:
            if zipfile.is_zipfile(path):
                with zipfile.ZipFile(path) as zf:
                    for i, member in enumerate(zf.namelist()):
                        target = Path(tmp) / f"{i:03d}.nc"
                        target.write_bytes(zf.read(member))
                        files.append(target)
            else:
                files.append(Path(path))
        datasets = [xr.open_dataset(f) for f in files]
        try:
            ds = datasets[0] if len(datasets) == 1 else xr.merge(datasets, compat="override", join="exact")
            tdim = "valid_time" if "valid_time" in ds.dims else "time"
            present = [v for v in VARIABLES if v.short_name in ds.data_vars]
            columns = ["time", "location_id", "latitude", "longitude", *(v.column for v in present)]
            stmt = sql.SQL("COPY {} ({}) FROM STDIN").format(table_ident(table), column_list(columns))
            steps = ds.sizes[tdim] if hours is None else min(hours, ds.sizes[tdim])
            timing.open_seconds = time.perf_counter() - began
            with connect(url) as conn, conn.cursor() as cur:
                cur.execute("SET TIME ZONE 'UTC'")  # the post's naive times are UTC
                conn.commit()
                for i in range(steps):
                    t0 = time.perf_counter()
                    df = blog_frame(ds, tdim, i, present, columns)
                    t1 = time.perf_counter()
                    with cur.copy(stmt) as cp:
                        for row in df.itertuples(index=False, name=None):
                            cp.write_row(row)
                    t2 = time.perf_counter()
                    conn.commit()
                    timing.seconds += time.perf_counter() - t0
                    timing.copy_seconds += t2 - t1
                    timing.rows += len(df)
        finally:
            for d in datasets:
                d.close()
    return timing.rows
