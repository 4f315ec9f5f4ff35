"""Where a read is made: a place by name (the gazetteer's, ``read.places``) or bare coordinates, the
grid point read for it and the sentence naming both, and the day boundary asked for; shared by the
CLI, the HTTP reads and the Python API."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg

from era5etl.core.datasets import Dataset
from era5etl.db.registry import table_dataset
from era5etl.read.errors import ReadError
from era5etl.read.localday import LOCAL, parse_offset
from era5etl.read.places import Place, find_place
from era5etl.read.points import Point, describe, nearest_point


@dataclass(frozen=True)
class Where:
    """The coordinates asked for, and the place they came from (None for bare coordinates)."""

    latitude: float
    longitude: float
    place: Place | None = None

    def label(self) -> str:
        return f"{self.place}, " if self.place else ""


def check_where(lat: float | None, lon: float | None, place: str | None, country: str | None) -> None:
    """The refusals of :func:`where` that need no gazetteer: a place by name and by coordinates, half a
    pair of coordinates, a country alone."""
    if place is not None:
        if lat is not None or lon is not None:
            raise ReadError("give a place by name (--place, place=) or by its coordinates (LAT LON), not both")
        return
    if country is not None:
        raise ReadError("a country (--country, country=) goes with a place by name")
    if (lat is None) != (lon is None):
        raise ReadError("a place by coordinates needs both its latitude and its longitude")


def where(lat: float | None, lon: float | None, place: str | None, country: str | None) -> Where | None:
    """A place by name or by coordinates (None when neither is given); ReadError for both, or half."""
    check_where(lat, lon, place, country)
    if place is not None:
        found = find_place(place, country)
        return Where(found.latitude, found.longitude, found)
    if lat is None or lon is None:
        return None
    return Where(lat, lon)


def offset_minutes(text: str | None, at: Where | None, default_local: bool = False) -> int | None:
    """The day boundary ``--tz`` (``tz=``) asks for, in minutes east of UTC (None: UTC days, the
    rollups'); with ``default_local`` a named place's standard offset when none is given."""
    standard = at.place.standard_offset_minutes() if at is not None and at.place is not None else None
    if text is None:
        if not (default_local and standard is not None):
            return None
        text = LOCAL
    return parse_offset(text, standard)


def describe_point(conn: psycopg.Connection[Any], table: str, at: Where,
                   dataset: Dataset | None = None) -> tuple[Point, str]:
    """(the nearest grid point, how a read names it: the place, its grid point and the distance);
    ``dataset``: the table's, if the caller has it already (else asked, ``db.registry.table_dataset``)."""
    dataset = dataset or table_dataset(conn, table)
    point = nearest_point(conn, table, at.latitude, at.longitude, dataset)
    return point, at.label() + describe(point, at.latitude, at.longitude, dataset)


__all__ = ["Where", "check_where", "describe_point", "offset_minutes", "where"]
