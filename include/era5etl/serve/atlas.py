"""``GET /era5/atlas``: the atlas over HTTP (with ``place``: what kind of change one city has seen), the
query as a pydantic model (in the OpenAPI schema) and the answer ``atlas --json``'s object
(``read.atlas.atlas_request``, ``read.atlas_place.place_changes``)."""

# Imports inside functions: matplotlib loads with the first map drawn, not with the API server.

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from era5etl.db.session import session
from era5etl.read.atlas import atlas_request, trend_map
from era5etl.read.atlas_place import place_changes
from era5etl.read.errors import ReadError
from era5etl.read.where import where
from era5etl.read.yearly import yearly_field
from era5etl.serve.extent import resolve_table
from era5etl.serve.params import parse_table
from era5etl.serve.reads import JSON_TYPE, Reply, encode_json, guarded


class AtlasRequest(BaseModel):
    """A variable, the years, the baseline, what is ranked and how many."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="ignore")

    variable: Annotated[str, Field(description="the variable: an instantaneous one's yearly mean, an "
                                               "accumulation's yearly total")] = "temperature_2m"
    first: Annotated[int | None, Field(alias="from", ge=1900, le=2200, description="first year")] = None
    last: Annotated[int | None, Field(alias="to", ge=1900, le=2200, description="last year")] = None
    baseline: Annotated[str, Field(description="the years the last ten years' anomaly is against, Y1-Y2",
                                   pattern=r"^\d{4}-\d{4}$")] = "1991-2020"
    by: Annotated[Literal["point", "city", "country"], Field(
        description="rank grid points, the gazetteer's cities at their nearest grid point, or Natural Earth's "
                    "countries weighed as a region is")] = "point"
    top: Annotated[int | None, Field(ge=1, le=10_000, description="the N of greatest trend (default 20)")] = None
    bottom: Annotated[int | None, Field(ge=1, le=10_000, description="instead of top: the N of least trend")] = None
    min_population: Annotated[int, Field(ge=0, description="with by=city: at least this many people")] = 0
    place: Annotated[str | None, Field(description="instead of a ranking: what kind of change this city (by name, "
                                                   "from the gazetteer) has seen, every variable's trend and its "
                                                   "rank among the cities")] = None
    country: Annotated[str | None, Field(description="with place: the country (ISO 3166 alpha-2) of a name several "
                                                     "share")] = None
    table: Annotated[str | None, Field(description="a pipeline table (in the ledger era5_months); default: the "
                                                   "one updated last")] = None

    @field_validator("table", mode="before")
    @classmethod
    def _table(cls, value: Any) -> str | None:
        return parse_table(None if value is None or not str(value).strip() else str(value).strip())

    @model_validator(mode="after")
    def _order(self) -> AtlasRequest:
        if self.top is not None and self.bottom is not None:
            raise ValueError("top and bottom are one or the other")
        if self.place is not None and (self.by != "point" or self.top is not None or self.bottom is not None):
            raise ValueError("place answers one place; by, top and bottom rank many")
        if self.country is not None and self.place is None:
            raise ValueError("country names the country of a place: give place too")
        return self


def read_atlas(url: str, req: AtlasRequest) -> Any:
    """The atlas JSON of the request; a Reply of ``serve.reads``."""
    with session(url) as conn:
        guarded(conn)
        table, _, _ = resolve_table(conn, req.table)
        if req.place is not None:
            at = where(None, None, req.place, req.country)
            assert at is not None  # a place was given
            data = place_changes(conn, table, at, first=req.first, last=req.last, baseline=req.baseline,
                                 min_population=req.min_population)
            return Reply(encode_json(data), JSON_TYPE)
        data = atlas_request(conn, table, req.variable, first=req.first, last=req.last, baseline=req.baseline,
                             by=req.by, top=req.top, bottom=req.bottom, min_population=req.min_population)
    return Reply(encode_json(data), JSON_TYPE)


def read_atlas_map(url: str, req: AtlasRequest) -> Any:
    """The trend of every grid point of the request's table as a PNG, with coastlines (the CLI's
    ``--png``); a Reply of ``serve.reads``."""
    from era5etl.read.atlas_plot import field_title, trend_map_png

    if req.place is not None:
        raise ReadError("the map is every grid point's: give no place")
    with session(url) as conn:
        guarded(conn)
        table, _, _ = resolve_table(conn, req.table)
        field = yearly_field(conn, table, req.variable, req.first, req.last)
    return Reply(trend_map_png(trend_map(field), field_title(field), field.statistic), "image/png")


__all__ = ["AtlasRequest", "read_atlas", "read_atlas_map"]
