"""One hour's field of one variable: every grid point the table holds at that hour (or those inside
an area), and the field as CSV and JSON.

The API the CLI (``python -m era5etl map``) and the HTTP API call. The hour comes as one array per
column (``read.hour.hour_columns``), ordered by location_id: south to north, west to east.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from era5etl.core.grid import Area
from era5etl.core.months import as_utc
from era5etl.core.rollups import WIND_SPEED
from era5etl.db import table_ident
from era5etl.db.registry import table_dataset
from era5etl.db.rollups import data_columns
from era5etl.read.columns import UNITS, known
from era5etl.read.errors import ReadError
from era5etl.read.hour import hour_columns
from era5etl.read.levels import check_level
from era5etl.read.monthly_means import check_columns, row_time, units_of
from era5etl.read.points import require_table
from era5etl.read.text import csv_columns, decimals, iso_time, shortest

_WIND = ["zonal_wind_10m", "meridional_wind_10m"]


@dataclass
class HourMap:
    """``time`` (aware, UTC); ``latitude``, ``longitude`` and ``values`` one float32 per grid point
    (NaN where the table holds NULL)."""

    time: datetime
    variable: str
    latitude: np.ndarray
    longitude: np.ndarray
    values: np.ndarray
    level: int | None = None  # hPa, for a table on pressure levels
    unit: str | None = None  # the column's unit when not the hourly tables' (a table of monthly means)


def _hour(at: datetime) -> datetime:
    at = as_utc(at)
    if at.minute or at.second or at.microsecond:
        raise ReadError(f"{at.isoformat()} is not on the hour: ERA5 is hourly")
    return at


def hour_map(conn: psycopg.Connection[Any], table: str, at: datetime, variable: str, area: Area | None,
             level: int | None = None) -> HourMap:
    """``variable`` (a column of the table, or ``wind_speed_10m``) at hour ``at`` over ``area`` (None:
    every grid point loaded at that hour), at ``level`` hPa for a table on pressure levels (required
    there, refused elsewhere). ReadError for an unknown variable, an hour not loaded (saying which
    hours are), or an area holding none of the hour's points."""
    require_table(conn, table)
    level = check_level(conn, table, level)
    shown = known("hour", data_columns(conn, table))
    if variable not in shown:
        raise ReadError(f"unknown variable {variable!r}; a map shows one of {', '.join(shown)}")
    at = _hour(at)
    dataset = table_dataset(conn, table)
    unit = None
    if dataset.monthly:  # a table of monthly means: the month (by hour of day: that hour) ``at`` falls in

        check_columns(table, dataset, [variable])
        at, unit = row_time(at, dataset), units_of(dataset, [variable])[variable]
    wanted = _WIND if variable == WIND_SPEED else [variable]
    got = hour_columns(conn, table, at, ["location_id", "latitude", "longitude", *wanted], level)
    ids = got["location_id"]
    if ids.size == 0:
        raise _not_loaded(conn, table, at)
    if variable == WIND_SPEED:
        u, v = (got[c].astype(np.float64) for c in _WIND)
        values = np.sqrt(u * u + v * v).astype(np.float32)
    else:
        values = got[variable].astype(np.float32)
    lat, lon = got["latitude"].astype(np.float32), got["longitude"].astype(np.float32)
    keep = np.argsort(ids, kind="stable")
    if area is not None:
        inside = ((lat >= float(area.south)) & (lat <= float(area.north))
                  & (lon >= float(area.west)) & (lon <= float(area.east)))
        if not inside.any():
            raise ReadError(f"{table} holds no grid point inside {area} at {iso_time(at)}; that hour's points lie in "
                            f"{lat.max():g}/{lon.min():g}/{lat.min():g}/{lon.max():g} (N/W/S/E)")
        keep = keep[inside[keep]]
    return HourMap(at, variable, lat[keep], lon[keep], values[keep], level, unit)


def _not_loaded(conn: psycopg.Connection[Any], table: str, at: datetime) -> ReadError:
    span = conn.execute(sql.SQL("SELECT min(time), max(time) FROM {}").format(table_ident(table))).fetchone()
    if span is None or span[0] is None:
        return ReadError(f"{table} holds no rows yet")
    return ReadError(f"{iso_time(at)} is not loaded in {table}: it holds hours from {iso_time(span[0])} "
                     f"to {iso_time(span[1])}")


def map_csv(m: HourMap) -> str:
    """``latitude,longitude,<variable>``: one line per grid point, a NULL value empty."""
    return csv_columns(["latitude", "longitude", m.variable],
                       [shortest(m.latitude), shortest(m.longitude), shortest(m.values)])


def map_json(m: HourMap) -> dict[str, Any]:
    """``time`` (ISO, UTC), ``variable``, ``unit``, and ``latitude``, ``longitude``, ``values`` as
    lists (null where NULL)."""
    return {"time": iso_time(m.time), "variable": m.variable, "unit": m.unit or UNITS[m.variable],
            **({"level": m.level} if m.level is not None else {}),
            "latitude": decimals(m.latitude), "longitude": decimals(m.longitude), "values": decimals(m.values)}


__all__ = ["HourMap", "ReadError", "hour_map", "map_csv", "map_json"]
