"""``GET /era5/climate``: a place's climate signal over HTTP, the query as a pydantic model (in the
OpenAPI schema) and the answer ``climate --json``'s object (``read.climate_read.climate_request``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from era5etl.db.registry import table_dataset
from era5etl.db.session import session
from era5etl.read.climate_read import area_climate, climate_request
from era5etl.read.indices import INDICES
from era5etl.read.question import check_target
from era5etl.read.where import where
from era5etl.serve.extent import resolve_table
from era5etl.serve.params import parse_lat, parse_lon, parse_names, parse_table
from era5etl.serve.reads import JSON_TYPE, Reply, check_outline, encode_json, guarded, request_region, weigh


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return None if value is None or not value.strip() else value.strip()
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


class ClimateRequest(BaseModel):
    """A place (``place`` [``country``], or ``lat`` and ``lon``), a variable, a baseline and the years."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="ignore")

    place: Annotated[str | None, Field(description="a city by name, for example Jakarta (unknown: 404 with the "
                                                   "closest names; ambiguous: 400 with the candidates)")] = None
    country: Annotated[str | None, Field(description="with place: ISO 3166 alpha-2, for example CL")] = None
    lat: Annotated[float | None, Field(ge=-90, le=90, description="instead of place: latitude, degrees north")] = None
    lon: Annotated[float | None, Field(ge=-180, le=360, description="with lat: longitude, degrees east")] = None
    area: Annotated[str | None, Field(description="instead of a place, an area N/W/S/E: its grid points' "
                                                  "cos(latitude)-weighted daily mean over UTC days (no indices)")
                    ] = None
    region: Annotated[str | None, Field(description="instead of a place or an area, a country by name or ISO code "
                                                    "(Chile, CL, CHL; Natural Earth's 1:50m outlines): its grid "
                                                    "points weighted by the area of their cell inside the outline; "
                                                    "an unknown name is 400 with the closest names (no indices)")
                      ] = None
    variable: Annotated[str, Field(description="the variable: an instantaneous one's yearly mean, an "
                                               "accumulation's yearly total")] = "temperature_2m"
    baseline: Annotated[str, Field(description="the climatology's years, Y1-Y2", pattern=r"^\d{4}-\d{4}$")] = (
        "1991-2020")
    first: Annotated[int | None, Field(alias="from", ge=1900, le=2200, description="first year shown")] = None
    last: Annotated[int | None, Field(alias="to", ge=1900, le=2200, description="last year shown")] = None
    index: Annotated[list[str] | None, Field(description=f"comma-separated indices (default: the variable's): "
                                                         f"{', '.join(INDICES)}")] = None
    tz: Annotated[str | None, Field(description="the day boundary: a UTC offset (+7, -08:00) or 'local'; default "
                                                "the place's standard offset, UTC for lat and lon")] = None
    table: Annotated[str | None, Field(description="a pipeline table (in the ledger era5_months); default: the "
                                                   "one updated last")] = None

    @field_validator("place", "country", "tz", "area", "region", mode="before")
    @classmethod
    def _blank(cls, value: Any) -> str | None:
        return _text(value)

    @field_validator("lat", mode="before")
    @classmethod
    def _lat(cls, value: Any) -> float | None:
        text = _text(value)
        return None if text is None else parse_lat(text)

    @field_validator("lon", mode="before")
    @classmethod
    def _lon(cls, value: Any) -> float | None:
        text = _text(value)
        return None if text is None else parse_lon(text)

    @field_validator("index", mode="before")
    @classmethod
    def _index(cls, value: Any) -> list[str] | None:
        return parse_names(_text(value), "index")

    @field_validator("table", mode="before")
    @classmethod
    def _table(cls, value: Any) -> str | None:
        return parse_table(_text(value))

    @model_validator(mode="after")
    def _where(self) -> ClimateRequest:
        # The target's refusals in the words every front end gives (read.question), as for a series.
        check_target(lat=self.lat, lon=self.lon, place=self.place, country=self.country, area=self.area is not None,
                     region=self.region is not None)
        return self


def read_climate(url: str, req: ClimateRequest, outline: Any = None) -> Any:
    """The climate JSON of the request's place, area or region (``outline``: a GeoJSON object, the body of
    a POST, named by ``region``); a Reply of ``serve.reads``."""
    check_outline(req.region, outline)
    at = where(req.lat, req.lon, req.place, req.country)
    with session(url) as conn:
        guarded(conn)
        table, _, _ = resolve_table(conn, req.table)
        if at is None:
            box = req.area if req.region is None else request_region(req.region, outline)
            assert box is not None  # the request's own check
            if req.region is not None:  # weighed here, so a region too slow to weigh is refused with how
                box = weigh(conn, box, table_dataset(conn, table).grid, outline)
            data = area_climate(conn, table, box, req.variable, req.baseline, req.first, req.last, req.index,
                                req.tz)
        else:
            data = climate_request(conn, table, at, req.variable, req.baseline, req.first, req.last, req.index,
                                   req.tz)
    return Reply(encode_json(data), JSON_TYPE)


__all__ = ["ClimateRequest", "read_climate"]
