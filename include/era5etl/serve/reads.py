"""The two HTTP reads end to end: a checked request in, the body of the answer out (JSON, CSV or Parquet).

Each read takes its thread's kept connection (``db.session``: one login a thread, and what it learned
of a table kept until the server writes, ``db.facts``), resolves the table, checks the size of the answer against
``serve.limits`` before any weather row is read, then asks ``era5etl.read`` (the same functions the
CLI uses) and hands back its JSON, CSV or Parquet unchanged, so the HTTP answer is the CLI's answer. A read
also carries a statement timeout: a request whose size is allowed still cannot hold a backend for
longer than :data:`STATEMENT_TIMEOUT_MS`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import psycopg

from era5etl.core.errors import InputError
from era5etl.core.grid import Area
from era5etl.db.registry import table_dataset
from era5etl.db.session import session
from era5etl.read.maps import hour_map, map_csv, map_json
from era5etl.read.parquet import series_parquet
from era5etl.read.question import Answer, Question, answer, ask, target_of
from era5etl.read.region_weights import weighed
from era5etl.read.regions import Region, cell_weights, region_from_geojson, resolve_region
from era5etl.read.series import Series
from era5etl.serve.errors import NotFoundError, TooSlowError
from era5etl.serve.extent import resolve_table, time_span
from era5etl.serve.limits import (
    MAX_AREA_POINT_STEPS,
    check_area,
    check_area_series,
    check_cells,
    check_region_series,
    check_series,
    series_rows,
)
from era5etl.serve.queries import MapRequest, SeriesRequest

STATEMENT_TIMEOUT_MS = 30_000
JSON_TYPE = "application/json"
CSV_TYPE = "text/csv; charset=utf-8"
PARQUET_TYPE = "application/vnd.apache.parquet"
HOUR = timedelta(hours=1)


@dataclass(frozen=True)
class Reply:
    body: bytes
    media_type: str
    filename: str | None = None  # a CSV's or Parquet file's name, for Content-Disposition


def plain(value: Any) -> Any:
    """JSON types only: numpy values as Python ones, NaN and infinities as null (JSON has neither)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def encode_json(data: Any) -> bytes:
    try:
        text = json.dumps(data, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError):  # a NaN or a numpy value: the slower, complete conversion
        text = json.dumps(plain(data), allow_nan=False, separators=(",", ":"))
    return text.encode()


def _slug(*parts: object) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", "_".join(str(p) for p in parts))


def guarded(conn: psycopg.Connection[Any]) -> None:
    conn.execute("SELECT set_config('statement_timeout', %s, false)", (str(STATEMENT_TIMEOUT_MS),))


def exclusive_end(end: datetime | None) -> datetime | None:
    """The read's bound (``time < end``) for an inclusive ``to``: the hour after the last hour it holds."""
    if end is None:
        return None
    return end.replace(minute=0, second=0, microsecond=0) + HOUR


def _series_table(conn: psycopg.Connection[Any], req: SeriesRequest) -> tuple[str, tuple[datetime, datetime]]:
    """The series' table (guarded, resolved) and its time span, the range checked against the limits;
    NotFoundError for a table with no rows yet."""
    guarded(conn)
    table, schema, name = resolve_table(conn, req.table)
    span = time_span(conn, schema, name)
    if span is None:
        raise NotFoundError(f"table {table!r} holds no rows yet")
    # A bound not given is the table's span: an upper bound of what "everything loaded" answers.
    check_series(req.start or span[0], req.end or span[1], req.step)
    return table, span


def read_series(url: str, req: SeriesRequest, outline: Any = None) -> Reply:
    """One place's series: the grid point nearest (lat, lon) or the named place, its rows in the range at
    ``req.step`` (``tz``: days of that offset from the hourly rows); or, given ``area``, the area's series
    (:func:`read_area_series`); or a region's, a country's or, given ``outline`` (a GeoJSON object, the
    body of a POST), that outline's named ``region``. The question is ``read.question``'s, as the CLI's
    and the Python API's are."""
    check_outline(req.region, outline)
    region = req.region
    target = target_of(lat=req.lat, lon=req.lon, place=req.place, country=req.country, area=req.box,
                       region=(lambda: request_region(region, outline)) if region is not None else None)
    q = ask("", target, start=req.start, end=exclusive_end(req.end), variables=req.variables, step=req.step,
            tz=req.tz, level=req.level)
    if isinstance(target, Area):
        return read_area_series(url, req, q)
    if isinstance(target, Region):
        return read_region_series(url, req, q, outline)
    with session(url) as conn:
        table, _ = _series_table(conn, req)
        got = _answered(conn, replace(q, table=table), "the series", "narrow from= and to=, or ask step=day")
    s = got.series
    assert isinstance(s, Series)  # a place's
    stem = _slug("era5", table, f"{s.point.latitude:g}", f"{s.point.longitude:g}", req.step)
    if req.format == "csv":
        return Reply(got.as_csv().encode(), CSV_TYPE, stem + ".csv")
    if req.format == "parquet":
        return Reply(series_parquet(s), PARQUET_TYPE, stem + ".parquet")
    return Reply(encode_json(got.as_json()), JSON_TYPE)


def _answered(conn: psycopg.Connection[Any], q: Question, what: str, how: str) -> Answer:
    """The question answered within the request's time, else TooSlowError saying how to narrow it."""
    try:
        return answer(conn, q)
    except psycopg.errors.QueryCanceled:
        raise TooSlowError(f"{what} took longer than {STATEMENT_TIMEOUT_MS / 1000:g} s: {how}") from None


def _area_reply(got: Answer, req: SeriesRequest, name: str) -> Reply:
    if req.format == "csv":
        return Reply(got.as_csv().encode(), CSV_TYPE, _slug("era5", got.question.table, name, req.step) + ".csv")
    return Reply(encode_json(got.as_json()), JSON_TYPE)


def read_area_series(url: str, req: SeriesRequest, q: Question) -> Reply:
    """An area's series (``read.area``): its size (grid points x steps) checked against the limit,
    from the range asked for or the table's span, before a row is read. JSON or CSV."""
    box = q.target
    assert isinstance(box, Area)
    if req.format == "parquet":
        raise InputError("format=parquet writes one place's series; an area's comes as json or csv")
    with session(url) as conn:
        table, span = _series_table(conn, req)
        check_area_series(box, req.start or span[0], req.end or span[1], req.step)
        got = _answered(conn, replace(q, table=table), "the area's series",
                        "narrow area=, from= and to=, or ask step=month")
    return _area_reply(got, req, f"area_{box}")


def check_outline(region: str | None, outline: Any) -> None:
    """A GeoJSON body is a region: it comes with ``region=``, the name it is given, and nothing else
    saying where."""
    if outline is not None and region is None:
        raise InputError("a GeoJSON body is a region: give region= as its name (and no lat, lon, place or area)")


def request_region(name: str, outline: Any) -> Any:
    """The region a request names: ``outline`` (a GeoJSON object) called ``name``, else the country
    ``name``."""
    return resolve_region(name) if outline is None else region_from_geojson(outline, name)


def _check_unweighed(region: Any, grid: Any, start: datetime, end: datetime, step: str) -> None:
    """A LimitError for an outline too large to answer, decided before the database weighs and keeps it
    (a refused request stores nothing): its box's cells bound its points; only when that bound is
    over the limit are its points counted, with shapely (``read.regions.cell_weights``, the same
    weights PostGIS computes)."""
    west, south, east, north = region.outline.bounds
    bound = (math.ceil((north - south) / grid.step) + 2) * (math.ceil((east - west) / grid.step) + 2)
    steps = max(series_rows(start, end, step), 1)
    if bound * steps > MAX_AREA_POINT_STEPS:
        check_region_series(len(cell_weights(region.outline, grid)[0]), start, end, step)


def weigh(conn: psycopg.Connection[Any], region: Any, grid: Any, outline: Any = None) -> Any:
    """``region`` weighed by the database (``read.region_weights.weighed``) within the request's time: a
    region whose weights take longer (Antarctica: minutes) is refused with how to compute them once from
    the command line, which keeps them for every later request."""
    try:
        return weighed(conn, region, grid)
    except psycopg.errors.QueryCanceled:
        how = ("`python -m era5etl series --region-file FILE --monthly --from 2024-01-01 --to 2024-01-31` with "
               "the outline in FILE" if outline is not None else
               f"`python -m era5etl series --region '{region.name}' --monthly --from 2024-01-01 --to 2024-01-31`")
        raise TooSlowError(f"the weights of the region {region.name[:80]!r} on the {grid.step:g} degree grid take "
                           f"longer than a request may ({STATEMENT_TIMEOUT_MS / 1000:g} s) to compute: compute "
                           f"them once from the command line ({how}, on the same database; they are kept), "
                           "then ask again") from None


def read_region_series(url: str, req: SeriesRequest, q: Question, outline: Any = None) -> Reply:
    """A region's series (``read.region_series``): its size (the region's points x steps) checked against
    the limit before a row is read. JSON or CSV."""
    region = q.target
    assert isinstance(region, Region)
    if req.format == "parquet":
        raise InputError("format=parquet writes one place's series; a region's comes as json or csv")
    with session(url) as conn:
        table, span = _series_table(conn, req)
        grid = table_dataset(conn, table).grid
        start, end = req.start or span[0], req.end or span[1]
        if outline is not None:  # a caller's own outline: refused by its size before the database keeps it
            _check_unweighed(region, grid, start, end, req.step)
        # its points on the table's lattice, PostGIS's, kept in the database
        region = weigh(conn, region, grid, outline)
        check_region_series(region.points, start, end, req.step)
        got = _answered(conn, replace(q, table=table, target=region), "the region's series",
                        "narrow from= and to=, or ask step=month")
    return _area_reply(got, req, f"region_{region.name}")


def read_map(url: str, req: MapRequest) -> Reply:
    """One hour's field of one variable over the area (default: every grid point loaded at that hour)."""
    box = req.box
    if box is not None:
        check_area(box)
    with session(url) as conn:
        guarded(conn)
        table, _, _ = resolve_table(conn, req.table)
        try:
            m = hour_map(conn, table, req.at, req.variable, box, req.level)
        except psycopg.errors.QueryCanceled:
            raise TooSlowError(f"the map took longer than {STATEMENT_TIMEOUT_MS / 1000:g} s: narrow area=") from None
    check_cells(len(m.values), f"the loaded area at {req.at:%Y-%m-%dT%H:00Z}")
    if req.format == "csv":
        return Reply(map_csv(m).encode(), CSV_TYPE, _slug("era5", table, req.variable, f"{req.at:%Y%m%dT%H}") + ".csv")
    return Reply(encode_json(map_json(m)), JSON_TYPE)
