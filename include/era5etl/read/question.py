"""A series question, stated once for every front end: what is read (a place, an area, a region), over
which span, which columns, at which step, on which calendar (UTC days or a fixed offset's) and at
which level; checked here, with one message for each refusal, and answered here.

The CLI (``series``), the HTTP reads (``/era5/series``, which the Data view calls) and the Python API
(``api.series``) each turn their own parameters into the same :class:`Question` and call
:func:`answer`, so they refuse alike (:func:`check_target`, :func:`ask`) and read alike: the span's
shift from a local calendar to UTC instants is made once (:meth:`Question.utc_span`), and an area's
or a region's local days are read as a place's are. What stays in a front end is its own: the
names of its parameters, its limits (HTTP's sizes and timeout) and its formats.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import psycopg

from era5etl.core.grid import Area
from era5etl.read.area import AreaSeries, area_csv, area_json, area_series
from era5etl.read.area_localday import area_local_daily, area_local_json
from era5etl.read.columns import Step
from era5etl.read.errors import ReadError
from era5etl.read.localday import local_daily
from era5etl.read.region_series import region_json, region_local_daily, region_series
from era5etl.read.regions import Region
from era5etl.read.series import Series, series, series_csv, series_json
from era5etl.read.text import csv_columns
from era5etl.read.where import Where, check_where, describe_point, offset_minutes, where

Target = Where | Area | Region

# One message for each refusal, in words every front end's parameters fit.
NO_TARGET = ("give a place (by name, or its latitude and longitude), an area (N/W/S/E, for example 50/5/45/10) "
             "or a region (a country's name or ISO code, or a GeoJSON outline with the name it is given)")
MORE_THAN_ONE = ("give one of a place (by name, or its latitude and longitude), an area (N/W/S/E) and a region "
                 "(a country, or an outline), not more")
DAYS_ONLY = ("a day boundary (tz) is for daily series: hourly rows are UTC hours and months UTC months")


def check_target(*, lat: float | None, lon: float | None, place: str | None, country: str | None, area: bool,
                 region: bool) -> None:
    """Exactly one target given (a place: its name or any of its coordinates; an area; a region), and a
    place given whole (``read.where.check_where``), else the refusal that says so; nothing looked up."""
    given = [any(v is not None for v in (lat, lon, place, country)), area, region].count(True)
    if given == 0:
        raise ReadError(NO_TARGET)
    if given > 1:
        raise ReadError(MORE_THAN_ONE)
    check_where(lat, lon, place, country)


def check_calendar(tz: str | None, step: str) -> None:
    if tz is not None and step != "day":
        raise ReadError(DAYS_ONLY)


def check_question(*, lat: float | None, lon: float | None, place: str | None, country: str | None, area: bool,
                   region: bool, tz: str | None, step: str) -> None:
    """Every refusal a question's parameters can earn before anything is looked up, in one order for all
    front ends: the target (one of a place, an area, a region), the place's own parts, the calendar."""
    check_target(lat=lat, lon=lon, place=place, country=country, area=area, region=region)
    check_calendar(tz, step)


def target_of(*, lat: float | None, lon: float | None, place: str | None, country: str | None,
              area: str | Area | None, region: Callable[[], Region] | None) -> Target:
    """The one target the parameters name (``region``: how the front end makes the region it names);
    the place's name looked up in the gazetteer (UnknownPlace when it has none)."""
    check_target(lat=lat, lon=lon, place=place, country=country, area=area is not None, region=region is not None)
    if area is not None:
        return area if isinstance(area, Area) else Area.parse(area)
    if region is not None:
        return region()
    at = where(lat, lon, place, country)
    assert at is not None  # check_target: something of a place was given, and where() refuses half of one
    return at


@dataclass(frozen=True)
class Question:
    """One series question. ``start`` (included) and ``end`` (excluded) are instants on the question's
    calendar: with ``offset_minutes`` local midnights of that offset, else UTC (None: open)."""

    table: str
    target: Target
    start: datetime | None = None
    end: datetime | None = None
    variables: list[str] | None = None
    step: Step = "day"
    offset_minutes: int | None = None
    level: int | None = None

    def utc_span(self) -> tuple[datetime | None, datetime | None]:
        """[start, end) as UTC instants: a local calendar's bounds moved back by its offset."""
        lag = timedelta(minutes=self.offset_minutes or 0)
        return (self.start - lag if self.start else None, self.end - lag if self.end else None)


def ask(table: str, target: Target, *, start: datetime | None = None, end: datetime | None = None,
        variables: list[str] | None = None, step: Step = "day", tz: str | None = None,
        level: int | None = None, default_local: bool = False) -> Question:
    """The question, checked: ``tz`` (an offset, or ``local`` for a named place's standard time) only
    with daily steps."""
    check_calendar(tz, step)
    shift = offset_minutes(tz, target if isinstance(target, Where) else None, default_local)
    return Question(table, target, start, end, variables, step, shift, level)


@dataclass(frozen=True)
class Answer:
    """What a question read: a place's :class:`Series` (with the sentence naming its grid point) or an
    area's or a region's :class:`AreaSeries`."""

    question: Question
    series: Series | AreaSeries
    named: str = ""

    def as_json(self) -> dict[str, Any]:
        """The JSON every front end gives for it."""
        q, s = self.question, self.series
        if isinstance(s, Series):
            data = series_json(s)
            at = q.target
            if isinstance(at, Where) and at.place is not None:
                data = {"place": at.place.__dict__, "described": self.named, **data}
            return data
        if isinstance(q.target, Region):
            return region_json(s, q.offset_minutes)
        return area_json(s) if q.offset_minutes is None else area_local_json(s, q.offset_minutes)

    def as_csv(self) -> str:
        """The CSV every front end gives for it: ``time`` (ISO: UTC, or the local days' offset), an
        area's ``points`` and ``hours``, a column per value."""
        s = self.series
        if isinstance(s, Series):
            return series_csv(s)
        if self.question.offset_minutes is None:
            return area_csv(s)
        data = self.as_json()
        cells = [data["time"], data["points"], data["hours"], *(data["values"][c] for c in s.columns)]
        return csv_columns(["time", "points", "hours", *s.columns], cells)


def answer(conn: psycopg.Connection[Any], q: Question) -> Answer:
    """The question read: the place's nearest grid point's rows, or the area's or region's weighted
    means, at the question's step, on its calendar."""
    first, last = q.utc_span()
    target, shift = q.target, q.offset_minutes
    if isinstance(target, Where):
        point, named = describe_point(conn, q.table, target)
        s: Series | AreaSeries = (
            series(conn, q.table, point, first, last, q.variables, q.step, q.level) if shift is None
            else local_daily(conn, q.table, point, first, last, q.variables, shift, q.level))
        return Answer(q, s, named)
    if isinstance(target, Region):
        s = (region_series(conn, q.table, target, first, last, q.variables, q.step, q.level) if shift is None
             else region_local_daily(conn, q.table, target, first, last, q.variables, shift, q.level))
        return Answer(q, s)
    s = (area_series(conn, q.table, target, first, last, q.variables, q.step, q.level) if shift is None
         else area_local_daily(conn, q.table, target, first, last, q.variables, shift, q.level))
    return Answer(q, s)


__all__ = ["DAYS_ONLY", "MORE_THAN_ONE", "NO_TARGET", "Answer", "Question", "Target", "answer", "ask",
           "check_calendar", "check_question", "check_target", "target_of"]
