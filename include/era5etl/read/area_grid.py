"""An area's rows as a gridded xarray.Dataset (time, latitude, longitude) for the Python API: the grid
points of a box on the table's lattice, read with ``WHERE location_id = ANY(...) AND time ...`` (plain
predicates, whatever the columnstore's layout), each column sent packed (``read.packed``) and placed
on the grid by the point's id."""

# Imports inside functions: xarray loads only when an area's Dataset is made.

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from era5etl.core.datasets import Dataset
from era5etl.core.grid import Area, Grid
from era5etl.db import table_ident
from era5etl.db.registry import table_dataset
from era5etl.db.rollups import data_columns
from era5etl.db.tables import rollup_of
from era5etl.read.columns import UNITS, check_step, resolve
from era5etl.read.errors import ReadError
from era5etl.read.packed import packed, unpack
from era5etl.read.points import require_table
from era5etl.read.rollup_check import area_ids
from era5etl.read.series import column_expression

STEP_HOURS = {"hour": 1, "day": 24, "month": 24 * 31}


def _statement(relation: str, time_column: str, columns: list[str]) -> sql.Composed:
    t = sql.Identifier(time_column)
    outer = [packed(t, "timestamptz"), packed(sql.Identifier("location_id"), "int8")]
    outer += [packed(column_expression(c), "int8" if c == "hours" else "float4") for c in columns]
    return sql.SQL("SELECT {} FROM {} WHERE location_id = ANY(%(ids)s) AND {t} >= %(start)s AND {t} < %(end)s").format(
        sql.SQL(", ").join(outer), table_ident(relation), t=t)


def _grid(dataset: Dataset, area: Area) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ids, latitudes north to south, longitudes west to east) of the area's points on the lattice."""
    grid = Grid(Decimal(str(dataset.grid.step)))
    ids = area_ids(area, grid, dataset)
    lats, lons = dataset.grid.coordinates(ids)
    return ids, np.unique(lats)[::-1], np.unique(lons)


def area_grid(conn: psycopg.Connection[Any], table: str, area: Area, start: datetime, end: datetime,
              variables: list[str] | None,
              step: str, max_values: int) -> Any:
    """The Dataset of ``area``'s rows in [start, end) at ``step`` (see ``era5etl.api.area``)."""
    import xarray as xr

    step = check_step(step)
    require_table(conn, table)
    if end <= start:
        raise ReadError(f"the end {end:%Y-%m-%d %H:%M} is not after the start {start:%Y-%m-%d %H:%M}")
    dataset = table_dataset(conn, table)
    ids, lats, lons = _grid(dataset, area)
    steps = int((end - start).total_seconds() // 3600) // STEP_HOURS[step] + 1
    if ids.size * steps > max_values:
        raise ReadError(f"area {area} has {ids.size:,} grid points x {steps:,} {step}s = {ids.size * steps:,} values; "
                        f"at most {max_values:,}: narrow the area or the range, or ask a coarser step")
    columns = resolve(step, variables, data_columns(conn, table))
    relation, time_column = (table, "time") if step == "hour" else (rollup_of(conn, table, step), "bucket")
    if relation is None:
        raise ReadError(f"{table} has no {step} rollup")
    row = conn.cursor(binary=True).execute(_statement(relation, time_column, columns),
                                           {"ids": ids.tolist(), "start": start, "end": end}).fetchone()
    times = unpack(row[0] if row else None, "timestamptz")
    if row is None or times.size == 0:
        raise ReadError(f"no rows of {relation} in area {area} from {start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M}")
    point_ids = unpack(row[1], "int8").astype(np.int64)
    axis = np.unique(times)
    t = np.searchsorted(axis, times)
    plat, plon = dataset.grid.coordinates(point_ids)
    i = np.searchsorted(-lats, -plat)
    j = np.searchsorted(lons, plon)
    data = {}
    for c, blob in zip(columns, row[2:], strict=True):
        cube = np.full((axis.size, lats.size, lons.size), np.nan, dtype=np.float64 if c == "hours" else np.float32)
        cube[t, i, j] = unpack(blob, "int8" if c == "hours" else "float4")
        data[c] = xr.DataArray(cube, dims=("time", "latitude", "longitude"), attrs={"units": UNITS[c]})
    return xr.Dataset(data, coords={"time": axis, "latitude": lats, "longitude": lons},
                      attrs={"table": table, "area": str(area), "step": step})


__all__ = ["area_grid"]
