"""A region's series: per time step the mean of its grid points weighted by each cell's overlap with
the outline (``read.regions``), the least and greatest of its points' values, an accumulation's
weighted mean total; hourly from the hypertable, daily and monthly from the rollups, or days of a
fixed UTC offset from the hourly rows. The columns, ``points`` and ``hours`` are those of an area's
series (``read.area``): a region is an area whose points weigh what their cells hold of it. As an
area's, its cells are the table's lattice's (ERA5-Land's 0.1 degrees; its sea points hold no row,
so the mean is over the land in the outline), and a table on pressure levels is read one level at
a time.

The points' weights are PostGIS's, kept in ``era5_region_weights`` (``read.region_weights``): the
rows are joined to them by ``location_id``, so the read costs the region's own points, not its
bounding box's."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from era5etl.core.datasets import Dataset, LatLonGrid
from era5etl.core.months import as_utc
from era5etl.core.rollups import split_value_column
from era5etl.db import table_ident
from era5etl.db.registry import table_dataset
from era5etl.db.rollups import box_filter, box_params, data_columns
from era5etl.read.area import AreaSeries, area_columns, area_json, area_source, months_counted, step_value
from era5etl.read.area_localday import area_local_json
from era5etl.read.columns import Step, check_step
from era5etl.read.errors import ReadError
from era5etl.read.levels import check_level
from era5etl.read.localday import LOCAL_DAY, day_aggregate
from era5etl.read.monthly_means import refuse_days
from era5etl.read.packed import packed, unpack
from era5etl.read.points import Bounds, loaded_bounds, require_table
from era5etl.read.region_weights import weighed, weighed_all
from era5etl.read.regions import Region

WEIGHTING = "cell overlap area x cos(latitude)"
# The rows of the region's box, which the join then cuts to the region's own points: its id range
# (which the columnstore's batch metadata filters on; ids run row by row, so the range holds exactly
# the latitude rows from the region's northernmost point to its southernmost) and, when the table
# holds many points of other longitudes too, its longitude columns (a test of every decoded row,
# after decoding: it saves the join's work only; 582 -> 447 ms without it for Chile's 85 years of
# months on a table of its box, docs/climate.md). An ``= ANY`` of the ids would be expanded into one
# metadata test per id on every batch (thousands for a country).
_IDS = sql.SQL("r.location_id BETWEEN %(first_id)s AND %(last_id)s")
# Left out while the table holds at most this many times the region's longitude columns: the join
# then drops the other columns' rows for less than the filter costs on every row (measured at 1 and 2
# times; a global table holds 37 times Chile's, and keeps the filter).
_COLUMNS_WORTH_FILTERING = 2
_JOIN = sql.SQL("JOIN (SELECT location_id AS id, weight FROM era5_region_weights WHERE region_id = %(region_id)s)"
                " w ON r.location_id = w.id")


def _weighted(value: sql.Composable, agg: str, weight: sql.Composable) -> sql.Composable:
    """min or max of the points' values; a mean or a total: the weighted mean over the points with a
    value (NULL when none has one)."""
    if agg in ("min", "max"):
        return sql.SQL("{}({})").format(sql.SQL(agg), value)
    return sql.SQL("sum({w} * {v}) / nullif(sum({w}) FILTER (WHERE {v} IS NOT NULL), 0)").format(w=weight, v=value)


def _box(grid: LatLonGrid | None, level: bool = False) -> sql.Composable:
    """The rows of the region's box (``grid``: the table's lattice, when the table holds points of
    other longitudes to filter out; None: it does not); ``level``: of %(level)s only."""
    box = _IDS if grid is None else sql.SQL("{} AND {}").format(_IDS, box_filter(grid))
    return sql.SQL("{} AND level = %(level)s").format(box) if level else box


def region_statement(relation: str, time_column: str, step: Step, columns: list[str],
                     bounded: tuple[bool, bool], other_longitudes: LatLonGrid | None = None,
                     level: bool = False) -> sql.Composed:
    """One row: the steps' times, points, hours and each column, packed, of the region's points' rows
    in [%(start)s, %(end)s) (a bound not asked for is open); ``other_longitudes``: the table's lattice
    when it holds points outside the region's longitudes (:func:`longitudes_worth_filtering`), which are then
    filtered out before the join; ``level``: a table on pressure levels, read at %(level)s."""
    t = sql.Identifier(time_column)
    hours = sql.SQL("count(*)") if step == "hour" else sql.SQL("sum(hours)")
    inner: list[sql.Composable] = [sql.SQL("{} AS t").format(t), sql.SQL("count(*)::int8 AS points"),
                                   sql.SQL("{}::int8 AS hours").format(hours)]
    for i, c in enumerate(columns):
        _, agg = split_value_column(c)
        inner.append(sql.SQL("{} AS {}").format(_weighted(step_value(step, c), agg, sql.SQL("w.weight")),
                                                sql.Identifier(f"c{i}")))
    outer = [packed(sql.Identifier("t"), "timestamptz"), packed(sql.Identifier("points"), "int8"),
             packed(sql.Identifier("hours"), "int8")]
    outer += [packed(sql.Identifier(f"c{i}"), "float8") for i in range(len(columns))]
    where: list[sql.Composable] = [_box(other_longitudes, level)]
    if bounded[0]:
        where.append(sql.SQL("{} >= %(start)s").format(t))
    if bounded[1]:
        where.append(sql.SQL("{} < %(end)s").format(t))
    return sql.SQL("SELECT {} FROM (SELECT {} FROM {} r {} WHERE {} GROUP BY 1 ORDER BY 1) q").format(
        sql.SQL(", ").join(outer), sql.SQL(", ").join(inner), table_ident(relation), _JOIN,
        sql.SQL(" AND ").join(where))


def region_local_statement(table: str, columns: list[str], data: list[str],
                           other_longitudes: LatLonGrid | None = None, level: bool = False) -> sql.Composed:
    """One row: the days of the offset %(shift)s (their starts as UTC instants), points, hours and each
    column, packed: each point's day from its hours (``read.localday.LOCAL_DAY``), then the points'
    weighted day (``other_longitudes`` and ``level`` as for :func:`region_statement`)."""
    inner: list[sql.Composable] = [
        sql.SQL("{} AS d").format(LOCAL_DAY), sql.SQL("r.location_id"),
        sql.SQL("min(w.weight) AS w"), sql.SQL("count(*) AS n")]
    inner += [sql.SQL("{} AS {}").format(day_aggregate(c, data), sql.Identifier(f"c{i}"))
              for i, c in enumerate(columns)]
    middle: list[sql.Composable] = [
        sql.SQL("d AS day"), sql.SQL("count(*)::int8 AS points"),
        sql.SQL("sum(n)::int8 AS hours")]
    for i, c in enumerate(columns):
        _, agg = split_value_column(c)
        middle.append(sql.SQL("{} AS {}").format(_weighted(sql.Identifier(f"c{i}"), agg, sql.Identifier("w")),
                                                 sql.Identifier(f"v{i}")))
    outer: list[sql.Composable] = [packed(sql.Identifier("day"), "timestamptz"),
                                   packed(sql.Identifier("points"), "int8"), packed(sql.Identifier("hours"), "int8")]
    outer += [packed(sql.Identifier(f"v{i}"), "float8") for i in range(len(columns))]
    return sql.SQL("SELECT {} FROM (SELECT {} FROM (SELECT {} FROM {} r {} WHERE {} AND time >= %(start)s"
                   " AND time < %(end)s GROUP BY 1, 2) p GROUP BY d ORDER BY d) q").format(
        sql.SQL(", ").join(outer), sql.SQL(", ").join(middle), sql.SQL(", ").join(inner), table_ident(table), _JOIN,
        _box(other_longitudes, level))


# A region is answered from the part of it the table holds (a country's far islands outside the box
# loaded for its mainland), reported as its loaded share, when that part is at least this share of its
# weight; less is another region, refused (France from a table of its north: 191 of 1,321 points).
MIN_LOADED_SHARE = 0.5


def check_region(conn: psycopg.Connection[Any], table: str, region: Region) -> Region:
    """The region, weighed by the database on ``table``'s lattice (``read.region_weights``), with its
    points inside ``table``'s loaded box (a country's far islands outside the box loaded for its
    mainland are left out, and counted in ``left_out``); ReadError unless the loaded box holds a point
    of the region."""
    return _checked(conn, table, region, table_dataset(conn, table))[0]


def _checked(conn: psycopg.Connection[Any], table: str, region: Region, dataset: Dataset) -> tuple[Region, Bounds,
             LatLonGrid]:
    """:func:`check_region`'s region, ``table``'s loaded box and its lattice (``dataset``'s)."""
    region = weighed(conn, region, dataset.grid)
    b = loaded_bounds(conn, table, dataset)
    return _in_box(region, table, b, dataset.grid), b, dataset.grid


def _in_box(region: Region, table: str, b: Bounds, grid: LatLonGrid) -> Region:
    """A weighed region's points in ``b``, ``table``'s loaded box; ReadError unless the box holds a point of
    it and :data:`MIN_LOADED_SHARE` of its weight."""
    # Within a thousandth of a cell: ERA5-Land's latitudes are float4 in the table (44.3 is 44.2999992).
    tiny = grid.step / 1000
    outside = ((region.latitudes > b.north + tiny) | (region.latitudes < b.south - tiny)
               | (region.longitudes < b.west - tiny) | (region.longitudes > b.east + tiny))
    n, w, s, e = region.describe()["box"]
    if outside.all():
        raise ReadError(f"none of the {region.points:,} grid points of {region} (within {n:g}/{w:g}/{s:g}/{e:g}, "
                        f"N/W/S/E) lies in what {table} holds: {b} (N/W/S/E); load the region's box first")
    read = region.inside(~outside) if outside.any() else region
    if read.loaded_share < MIN_LOADED_SHARE:
        raise ReadError(f"only {read.points:,} of the {region.points:,} grid points of {region} "
                        f"({read.loaded_share:.0%} of its area) lie in what {table} holds: {b} (N/W/S/E); a region "
                        f"is read when {MIN_LOADED_SHARE:.0%} of it is loaded at least: load {n:g}/{w:g}/{s:g}/{e:g} "
                        "(N/W/S/E) first")
    return read


def check_regions(conn: psycopg.Connection[Any], table: str, regions: list[Region]) -> list[Region | ReadError]:
    """:func:`check_region` of many regions, weighed together (``read.region_weights.weighed_all``) and the
    table's loaded box read once: each region, or the ReadError that refuses it."""
    dataset = table_dataset(conn, table)
    b = loaded_bounds(conn, table, dataset)
    out: list[Region | ReadError] = []
    for region, found in zip(regions, weighed_all(conn, regions, dataset.grid), strict=True):
        if found is None:
            out.append(ReadError(f"the region {region} covers no cell of the {dataset.grid.step:g} degree grid"))
            continue
        try:
            out.append(_in_box(found, table, b, dataset.grid))
        except ReadError as exc:
            out.append(exc)
    return out


def longitudes_worth_filtering(held: Bounds, params: dict[str, Any], grid: LatLonGrid) -> LatLonGrid | None:
    """``grid`` when ``held``, a table's loaded box on it, holds enough longitude columns beside the
    region's (%(col0)s..%(col1)s of :func:`_params`) for filtering them out before the join to pay."""
    first, last = grid.column_range(held.west, held.east)
    worth = (last - first + 1) > _COLUMNS_WORTH_FILTERING * (params["col1"] - params["col0"] + 1)
    return grid if worth else None


def _series(region: Region, table: str, step: str, columns: list[str], row: Any) -> AreaSeries:
    parts = list(row) if row else [None] * (len(columns) + 3)
    times = unpack(parts[0], "timestamptz")
    if times.size == 0:
        raise ReadError(f"no rows of {table} for the region {region} in the range asked")
    values = {c: unpack(b, "float8").astype(np.float64) for c, b in zip(columns, parts[3:], strict=True)}
    return AreaSeries(table, region, step, columns, times, unpack(parts[1], "int8").astype(np.int64),
                      unpack(parts[2], "int8").astype(np.int64), values, WEIGHTING)


def _hash_join(conn: psycopg.Connection[Any]) -> None:
    """The planner merges the region's rows with its points by sorting every row by location_id; a hash
    of the points (a few thousand) is cheaper: 2.3 s against 3.5 s for Chile's year of days on a loaded
    machine (docs/climate.md). For this transaction only."""
    conn.execute("SET LOCAL enable_mergejoin = off")


def _params(region: Region, start: datetime | None, end: datetime | None, grid: LatLonGrid,
            level: int | None) -> dict[str, Any]:
    slack = grid.step / 1000  # float4 latitudes, as the check in _checked
    box = box_params(grid, float(region.latitudes.min()) - slack, float(region.latitudes.max()) + slack,
                     float(region.longitudes.min()), float(region.longitudes.max()))
    return {**box, "region_id": region.region_id, "start": start, "end": end, "level": level,
            "first_id": int(region.ids.min()), "last_id": int(region.ids.max())}


def region_series(conn: psycopg.Connection[Any], table: str, region: Region, start: datetime | None,
                  end: datetime | None,
                  variables: list[str] | None, step: Step, level: int | None = None) -> AreaSeries:
    """The region's series in [start, end) (None: open) at ``step``, as ``read.area.area_series``
    (``level``: the hPa of a table on pressure levels, required there)."""
    step = check_step(step)
    require_table(conn, table)
    level = check_level(conn, table, level)
    dataset = table_dataset(conn, table)
    region, held, grid = _checked(conn, table, region, dataset)
    columns, relation, time_column, read_step = area_source(conn, table, dataset, variables, step)
    start, end = as_utc(start), as_utc(end)
    params = _params(region, start, end, grid, level)
    statement = region_statement(relation, time_column, read_step, columns, (start is not None, end is not None),
                                 longitudes_worth_filtering(held, params, grid), level is not None)
    _hash_join(conn)
    row = conn.cursor(binary=True).execute(statement, params).fetchone()
    return months_counted(_series(region, table, step, columns, row), dataset)


def region_local_daily(conn: psycopg.Connection[Any], table: str, region: Region, start: datetime | None,
                       end: datetime | None,
                       variables: list[str] | None, offset_minutes: int, level: int | None = None) -> AreaSeries:
    """The region's days of UTC+``offset_minutes`` whose hours fall in [start, end) (None: the region's
    loaded span), as ``read.area_localday.area_local_daily`` (``level`` as for :func:`region_series`)."""
    require_table(conn, table)
    dataset = table_dataset(conn, table)
    if dataset.monthly:
        raise refuse_days(table, dataset, "a region's local days")
    level = check_level(conn, table, level)
    region, held, grid = _checked(conn, table, region, dataset)
    data = data_columns(conn, table)
    columns = area_columns(variables, data)
    unbounded = _params(region, None, None, grid, level)
    other_longitudes = longitudes_worth_filtering(held, unbounded, grid)
    if start is None or end is None:
        found = conn.execute(sql.SQL("SELECT min(time), max(time) FROM {} r WHERE {}").format(
            table_ident(table), _box(other_longitudes, level is not None)), unbounded).fetchone()
        if found is None or found[0] is None:
            raise ReadError(f"no hourly rows of {table} for the region {region}")
        start, end = start or found[0], end or found[1] + timedelta(hours=1)
    params = {**_params(region, start, end, grid, level), "shift": timedelta(minutes=offset_minutes)}
    _hash_join(conn)
    row = conn.cursor(binary=True).execute(
        region_local_statement(table, columns, data, other_longitudes, level is not None), params).fetchone()
    return _series(region, table, "day", columns, row)


def region_json(s: AreaSeries, offset_minutes: int | None = None) -> dict[str, Any]:
    """``read.area.area_json`` of a region's series (of days of ``offset_minutes`` when given), with
    ``region`` first: its name, ISO code, source, points, box and weighting."""
    data = area_json(s) if offset_minutes is None else area_local_json(s, offset_minutes)
    return {"region": s.area.describe(), **data}


__all__ = ["WEIGHTING", "check_region", "check_regions", "longitudes_worth_filtering", "region_json",
           "region_local_daily", "region_local_statement", "region_series", "region_statement"]
