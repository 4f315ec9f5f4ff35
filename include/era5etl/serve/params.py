"""The parameters of ``/series`` and ``/map`` parsed from text, every refusal an InputError.

Each parameter arrives as text (or not at all) and is checked here (the query models of
``serve.queries`` call these parsers from their validators), so a bad value is answered with
a sentence naming the parameter, the value and what it must be, the same for JSON and CSV. Times are
UTC; a time without a zone is taken as UTC. ``from`` and ``to`` are both inclusive, at the precision
given: ``to=2024-01-31`` is the whole of that day, ``to=2024-01`` the whole month.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from typing import Literal

from era5etl.core.errors import InputError
from era5etl.core.grid import Area, normalize_longitude
from era5etl.core.months import Month
from era5etl.core.names import check_table

Step = Literal["hour", "day", "month"]
STEPS: tuple[Step, ...] = ("hour", "day", "month")
FORMATS = ("json", "csv")
SERIES_FORMATS = ("json", "csv", "parquet")  # a series can be exported as a Parquet file too
DEFAULT_STEP: Step = "day"
DEFAULT_MAP_VARIABLE = "temperature_2m"
MAX_VARIABLES = 16
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,62}$")
_TIME = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2})(?::(\d{2})(?::(\d{2}))?)?)?)?)?"
                   r"\s*(Z|[+-]\d{2}:?\d{2})?$")
HOUR = timedelta(hours=1)
# The years a time may name: every ERA5 hour and more, with room for the reads' own arithmetic
# (a step's bucket, pandas' nanoseconds: 1677..2262) on either side.
FIRST_YEAR, LAST_YEAR = 1800, 2200


def _blank(text: str | None) -> bool:
    return text is None or not text.strip()


def parse_number(text: str | None, name: str, low: float, high: float) -> float:
    if _blank(text):
        raise InputError(f"{name} is required (degrees, {low:g} to {high:g})")
    assert text is not None
    try:
        value = float(text.strip())
    except ValueError:
        raise InputError(f"{name} {text!r} is not a number of degrees") from None
    if not math.isfinite(value) or not low <= value <= high:
        raise InputError(f"{name} {text!r} is outside {low:g}..{high:g}")
    return value


def parse_lat(text: str | None) -> float:
    return parse_number(text, "lat", -90.0, 90.0)


def parse_lon(text: str | None) -> float:
    """A longitude in -180..360, returned in the table's convention (-180, 180]."""
    return float(normalize_longitude(parse_number(text, "lon", -180.0, 360.0)))


def _period_end(moment: datetime, precision: int) -> datetime:
    """The last hour of the year, month, day or hour ``moment`` starts (precision 1-4 fields given)."""
    if precision == 1:
        return moment.replace(year=moment.year + 1) - HOUR
    if precision == 2:
        return Month.of(moment).end - HOUR
    if precision == 3:
        return moment + timedelta(days=1) - HOUR
    return moment


def parse_time(text: str, name: str, *, end: bool = False) -> datetime:
    """``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD`` or ``YYYY-MM-DDTHH[:MM[:SS]]`` with an optional zone (UTC if
    none), as an aware UTC datetime. With ``end``, a coarse value is the last hour of its period."""
    m = _TIME.match(text.strip())
    if not m:
        raise InputError(f"{name} {text!r} is not a time: use YYYY-MM-DD or YYYY-MM-DDTHH:MM (UTC), "
                         "for example 2024-01-31 or 2024-01-31T12:00")
    fields = [int(g) if g else None for g in m.groups()[:6]]
    precision = sum(1 for f in fields if f is not None)
    year, month, day, hour, minute, second = (f if f is not None else d for f, d in
                                              zip(fields, (0, 1, 1, 0, 0, 0), strict=True))
    zone = m.group(7)
    try:
        moment = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError as exc:
        raise InputError(f"{name} {text!r} is not a valid time: {exc}") from None
    offset = timedelta(0)
    if zone and zone != "Z":
        digits = zone[1:].replace(":", "")
        if int(digits[:2]) > 14 or int(digits[2:]) > 59:
            raise InputError(f"{name} {text!r}: the offset {zone} is not a time zone's (at most +-14:00)")
        offset = (1 if zone[0] == "+" else -1) * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    try:
        moment -= offset
        moment = _period_end(moment, min(precision, 4)) if end else moment
    except (OverflowError, ValueError):  # past year 9999 or before year 1 once in UTC
        raise InputError(f"{name} {text!r} is outside the calendar's years 1..9999 in UTC") from None
    if not FIRST_YEAR <= moment.year <= LAST_YEAR:
        raise InputError(f"{name} {text!r}: give a time in the years {FIRST_YEAR}..{LAST_YEAR} (ERA5 starts in 1940)")
    return moment


def parse_hour(text: str | None, name: str = "time") -> datetime:
    """Exactly one hour (ERA5 is hourly): a date alone or minutes past the hour are refused."""
    if _blank(text):
        raise InputError(f"{name} is required: one hour, for example 2024-01-15T12:00Z")
    assert text is not None
    m = _TIME.match(text.strip())
    if m is None or m.group(4) is None:
        raise InputError(f"{name} {text!r} is not an hour: give YYYY-MM-DDTHH:00 (UTC), for example "
                         "2024-01-15T12:00Z")
    moment = parse_time(text, name)
    if moment.minute or moment.second:
        raise InputError(f"{name} {text!r} is not on the hour: ERA5 is hourly, for example "
                         f"{moment.replace(minute=0, second=0):%Y-%m-%dT%H:00Z}")
    return moment


def parse_range(start: str | None, end: str | None) -> tuple[datetime | None, datetime | None]:
    first = None if _blank(start) else parse_time(start or "", "from")
    last = None if _blank(end) else parse_time(end or "", "to", end=True)
    if first is not None and last is not None and last < first:
        raise InputError(f"to {end!r} is before from {start!r}")
    return first, last


def parse_names(text: str | None, name: str = "variables") -> list[str] | None:
    """A comma-separated list of column names (None when absent: every variable)."""
    if _blank(text):
        return None
    assert text is not None
    names = [n.strip() for n in text.split(",") if n.strip()]
    bad = [n for n in names if not _NAME.match(n)]
    if bad:
        raise InputError(f"{name}: {', '.join(map(repr, bad))} is not a variable name "
                         "(for example temperature_2m,total_precipitation)")
    if len(names) > MAX_VARIABLES:
        raise InputError(f"{name}: at most {MAX_VARIABLES} names")
    return list(dict.fromkeys(names)) or None


def parse_choice(text: str | None, name: str, choices: tuple[str, ...], default: str) -> str:
    if _blank(text):
        return default
    assert text is not None
    value = text.strip().lower()
    if value not in choices:
        raise InputError(f"{name} {text!r} is not one of {', '.join(choices)}")
    return value


def parse_step(text: str | None) -> Step:
    value = parse_choice(text, "step", STEPS, DEFAULT_STEP)
    return next(s for s in STEPS if s == value)


def parse_table(text: str | None) -> str | None:
    """A table name as :func:`era5etl.core.names.check_table` allows (None: the default table)."""
    if _blank(text):
        return None
    assert text is not None
    return check_table(text.strip())


def parse_area(text: str | None) -> Area | None:
    return None if _blank(text) else Area.parse(text or "")
