"""Airflow plugin: the ERA5 months dashboard, served by the API server behind Airflow's own login.

A FastAPI app mounted at ``/era5`` (``fastapi_apps``) serves the page, its JSON and each month's
Data Docs, the Data view (``/era5/data``, its script and styles and uPlot under ``/era5/static/``), the table read
back (``/era5/series``, ``/era5/map``, ``/era5/climate``, whose query models and answers the OpenAPI schema at
``/era5/openapi.json`` describes);
an external view puts the page in the UI's Browse menu (shown in an iframe at
``/plugin/era5-months``). Every route requires an Airflow user allowed to read the runs of the
``era5_monthly`` DAG: the JWT comes from the ``Authorization: Bearer`` header or from the
``_token`` cookie the UI's login sets, exactly as for Airflow's own API.

Data and HTML come from ``era5etl.report`` (its SQL from ``era5etl.track``), the reads, their
parameters and limits from ``era5etl.serve``; this file only authenticates, routes and serves.
"""

# Imports inside functions: the DAG files import this package at every parse, and the core (numpy,
# psycopg, the pipeline) loads only in a task or a trigger's thread (Airflow's best practice on top-
# level code).

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Annotated, Any

from airflow.plugins_manager import AirflowPlugin
from fastapi import Body, Depends, FastAPI, HTTPException, Query, Request, status
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from era5etl import report, serve, settings
from era5etl.core.errors import InputError
from era5etl.db import DatabaseError
from era5etl.serve.atlas import AtlasRequest, read_atlas, read_atlas_map
from era5etl.serve.body import BodyGuard, Refused, Scope
from era5etl.serve.climate import ClimateRequest, read_climate
from era5etl.serve.reads import read_map, read_series

DAG_ID = "era5_monthly"
URL_PREFIX = "/era5"
URL_ROUTE = "era5-months"
# The database URL is looked up through the Airflow connection at most this often: a lookup can
# reach the secrets backend, and a page view should not cost one each time.
URL_TTL_S = 60.0

_bearer = HTTPBearer(auto_error=False)


async def require_reader(
    request: Request, bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> None:
    """401 without a valid Airflow token, 403 for a user who may not read the DAG's runs."""
    # Imported here, not at the top: every task process imports plugin files (for macros), and
    # these modules pull in the API server.
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity, DagDetails
    from airflow.api_fastapi.core_api.security import get_user

    user = await get_user(request, _oauth_token=None, bearer_credentials=bearer)
    allowed = get_auth_manager().is_authorized_dag(
        method="GET", access_entity=DagAccessEntity.RUN, details=DagDetails(id=DAG_ID), user=user)
    if not allowed:
        raise HTTPException(status.HTTP_403_FORBIDDEN, f"Forbidden: needs read access to the runs of {DAG_ID}")


async def _authorize_body(scope: Scope) -> None:
    """The login check of :func:`require_reader` for ``serve.body.BodyGuard``: run before a request's body
    is read (FastAPI reads a body before it resolves the route's dependencies)."""
    request = Request(scope)
    try:
        override = app.dependency_overrides.get(require_reader)
        if override is not None:  # FastAPI's way to replace the login (the in-process tests' lifted one)
            override()
        else:
            await require_reader(request, await _bearer(request))
    except HTTPException as exc:
        raise Refused(exc.status_code, str(exc.detail), dict(exc.headers or {})) from None


_url_lock = threading.Lock()
url_cache: tuple[float, str] | None = None


def database_url() -> str:
    """The pipeline's database as its tasks see it: connection ``era5_timescale``, else the environment."""
    global url_cache
    with _url_lock:
        if url_cache is None or time.monotonic() - url_cache[0] > URL_TTL_S:
            from era5etl.airflow.hooks import database_url as task_database_url

            url_cache = (time.monotonic(), task_database_url())
        return url_cache[1]


_reader_cache: tuple[float, str] | None = None


def reader_url() -> str:
    """The read-only role's URL (connection ``era5_timescale_reader``, else ``db.urls.reader_url``): what
    ``/series``, ``/map`` and ``/climate`` (and so the Data view's charts and Climate panel) connect as; it
    cannot write."""
    global _reader_cache
    with _url_lock:
        if _reader_cache is None or time.monotonic() - _reader_cache[0] > URL_TTL_S:
            from era5etl.airflow.hooks import reader_url as task_reader_url

            _reader_cache = (time.monotonic(), task_reader_url())
        return _reader_cache[1]


def _base(request: Request) -> str:
    # The mount's root path, so links stay right whatever prefix (or proxy path) the app sits under.
    return str(request.scope.get("root_path", "")).rstrip("/") + "/"


def _table(table: str | None) -> str | None:
    """The page's ``table`` checked as every entry point checks one (core.names): 400 otherwise."""
    from era5etl.serve.params import parse_table

    try:
        return parse_table(table)
    except InputError as exc:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, str(exc)) from None


def _dashboard(table: str | None, area: str | None, month: str | None) -> report.Dashboard:
    table = _table(table)
    try:
        selected = report.parse_month(month) if month else None
        return report.load_dashboard(database_url(), table or None, area or None, selected)
    except report.ReportError as exc:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, str(exc)) from None
    except DatabaseError as exc:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, str(exc)) from None


Table = Annotated[str | None, Query(description="table name; default: the one updated last")]
Area = Annotated[str | None, Query(description="area N/W/S/E as in the ledger; default: the table's latest")]
Month = Annotated[str | None, Query(description="YYYY-MM; default: the latest month with a load")]
NO_STORE = {"Cache-Control": "no-store"}

app = FastAPI(
    title="ERA5 months dashboard",
    summary="The pipeline's months, and its tables read back: one place's series, one hour's map.",
    dependencies=[Depends(require_reader)],
    # FastAPI's own schema and docs routes would bypass the app's dependencies (the login): the
    # schema is served by the route /openapi.json below instead, behind it like every other route.
    docs_url=None, redoc_url=None, openapi_url=None,
)
# A body (a region's outline) is read only for a caller who may read, and only up to the settings' limit.
app.add_middleware(BodyGuard, authorize=_authorize_body, limit=lambda: settings.load().http_max_body_bytes)


@app.exception_handler(RequestValidationError)
async def _refused(request: Request, exc: RequestValidationError) -> JSONResponse:
    """A query model's refusal as a 400 (not FastAPI's 422) whose detail is the parser's sentence, as the
    HTTP reads answer a bad query."""
    return JSONResponse({"detail": serve.refusal(exc.errors())}, status_code=status.HTTP_400_BAD_REQUEST)


@app.get("/openapi.json", include_in_schema=False)
def openapi(request: Request) -> JSONResponse:
    """The OpenAPI schema of these routes (their query models, limits and answers), for the login's users."""
    if app.openapi_schema is None:
        app.openapi_schema = get_openapi(title=app.title, version="1", summary=app.summary, routes=app.routes)
    root = str(request.scope.get("root_path", "")).rstrip("/")
    return JSONResponse({**app.openapi_schema, "servers": [{"url": root or "/"}]}, headers=NO_STORE)


@app.get("/static/{name}", include_in_schema=False)
def static(name: str) -> FileResponse:
    """The Data view's script and styles, and uPlot from node_modules: served here, never from a CDN."""
    found = report.static_file(name)
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, report.static_missing(name))
    return FileResponse(found, headers={"Cache-Control": "no-cache"})


@app.get("/", response_class=HTMLResponse)
def page(request: Request, table: Table = None, area: Area = None, month: Month = None) -> HTMLResponse:
    dashboard = _dashboard(table, area, month)
    base = _base(request)
    query = request.url.query
    json_href = f"{base}api/dashboard" + (f"?{query}" if query else "")
    return HTMLResponse(report.render_page(dashboard, base=base, json_href=json_href), headers=NO_STORE)


@app.get("/api/dashboard")
def dashboard_json(request: Request, table: Table = None, area: Area = None, month: Month = None) -> JSONResponse:
    data: dict[str, Any] = report.to_json(_dashboard(table, area, month), base=_base(request))
    return JSONResponse(data, headers=NO_STORE)


@app.get("/docs/{table}/{month}/{slug}/{path:path}")
def data_docs(table: str, month: str, slug: str, path: str) -> FileResponse:
    """A file of the month's validation folder (its Data Docs), as the ledger's validation path names it."""
    try:
        folder = report.validation_path(database_url(), table, report.parse_month(month), slug)
    except report.ReportError as exc:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, str(exc)) from None
    except DatabaseError as exc:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, str(exc)) from None
    found = report.docs_file(folder, path) if folder else None
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no validation file {path!r} for {table} {month} {slug}")
    return FileResponse(found)


@app.get("/data", response_class=HTMLResponse)
def data_page(request: Request, table: Table = None, area: Area = None) -> HTMLResponse:
    """The Data view: one place's series and the area at one hour, drawn from ``/series`` and ``/map``."""
    table = _table(table)
    try:
        view = report.load_data_view(database_url(), table or None, area or None)
    except DatabaseError as exc:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, str(exc)) from None
    return HTMLResponse(report.render_data_page(view, base=_base(request)), headers=NO_STORE)


def _read(read: Callable[[], Any]) -> Response:
    try:
        reply = read()
    except Exception as exc:  # the product's errors answered as core.answers says; anything else is a bug (500)
        code = serve.http_status(exc)
        if code == 500:
            raise
        raise HTTPException(code, str(exc)) from None
    headers = dict(NO_STORE)
    if reply.filename:
        headers["Content-Disposition"] = f'inline; filename="{reply.filename}"'
    return Response(reply.body, media_type=reply.media_type, headers=headers)


REFUSALS: dict[int | str, dict[str, Any]] = {
    400: {"description": "a parameter that cannot be used as given; `detail` says which and why"},
    404: {"description": "the table does not exist or is not one of the pipeline's (the ledger's)"},
    422: {"description": "the answer would be larger than a response may hold; `detail` says the limit"},
    503: {"description": "the database is unreachable, or the read took too long"},
}


@app.get("/series", responses={**REFUSALS, 200: {
    "description": "the rows of the grid point nearest (lat, lon): JSON (`time`, `values` per column, `units`), "
                   "CSV, or a Parquet file; given `area`, the area's series: JSON (`time`, `points`, `hours`, "
                   "`values` per column, `units`, `gaps`) or CSV",
    "content": {"text/csv": {}, "application/vnd.apache.parquet": {}}}})
def series(query: Annotated[serve.SeriesRequest, Query()]) -> Response:
    """One place's series (the grid point nearest lat, lon) or an area's (area=N/W/S/E: its points' mean
    weighted by cos(latitude), min and max), hourly, daily or monthly, as JSON, CSV or Parquet (a place)."""
    return _read(lambda: read_series(reader_url(), query))


# A user's own outline over HTTP: the GeoJSON is the body of a POST (a URL is no place for a polygon),
# region= its name, every other parameter the GET's.
OUTLINE = Body(description="the region's outline, GeoJSON: a FeatureCollection, Feature, Polygon or "
                           "MultiPolygon in longitude, latitude (its polygons' union); region= names it",
               examples=[{"type": "Polygon", "coordinates": [[[5.8, 49.6], [6.4, 49.7], [6.0, 50.1], [5.8, 49.6]]]}])


@app.post("/series", responses={**REFUSALS, 200: {
    "description": "the region's series, as GET /series answers for a country's: JSON or CSV",
    "content": {"text/csv": {}}}})
def region_series(query: Annotated[serve.SeriesRequest, Query()],
                  outline: Annotated[dict[str, Any], OUTLINE]) -> Response:
    """The series of a region given by its outline (the GeoJSON body; region= its name): per step its grid
    points' mean weighted by the area of their cell inside the outline, their min and max."""
    return _read(lambda: read_series(reader_url(), query, outline))


@app.get("/map", responses={**REFUSALS, 200: {
    "description": "every grid point of the hour in the area: JSON (`latitude`, `longitude`, `values`) or CSV",
    "content": {"text/csv": {}}}})
def hour_map(query: Annotated[serve.MapRequest, Query()]) -> Response:
    """One hour's field of one variable over an area, as JSON or CSV."""
    return _read(lambda: read_map(reader_url(), query))


@app.get("/climate", responses={**REFUSALS, 200: {
    "description": "the climate signal of a place (docs/climate.md): `place` or `point` (with the grid point "
                   "read), `variable`, `unit`, `utc_offset_hours`, `baseline`, `years` ({year, value, anomaly, "
                   "days, partial}), `months` (the baseline's climatology), `monthly`, `highest`, `lowest`, "
                   "`trend_per_decade` ({ols, ci95, theil_sen}), `indices`, `notes`"}})
def climate(query: Annotated[ClimateRequest, Query()]) -> Response:
    """A place's yearly values, their anomalies against a baseline, the trend per decade and the
    ETCCDI indices; the same object as `python -m era5etl climate --json`."""
    return _read(lambda: read_climate(reader_url(), query))


@app.get("/atlas", responses={**REFUSALS, 200: {
    "description": "every grid point, city or country ranked by its trend per decade (docs/atlas.md): `zonal` "
                   "(the area-weighted mean trend of the globe, the Arctic, and their ratio), `ranking` ({rank, "
                   "grid_point or country, city, trend_per_decade, anomaly_last_10, highest_year, complete_years}), "
                   "`complete_years`, `notes`; with `place`, what kind of change that city has seen (`changes`)"}})
def atlas(query: Annotated[AtlasRequest, Query()]) -> Response:
    """Which places have changed most: the table's grid points (or cities, or countries) ranked by the trend
    per decade of a variable's yearly values; the same object as `python -m era5etl atlas --json`."""
    return _read(lambda: read_atlas(reader_url(), query))


@app.get("/atlas.png", responses={**REFUSALS, 200: {
    "description": "the trend per decade of every grid point of the table as a PNG, with Natural Earth's "
                   "coastlines and a colour bar (what `python -m era5etl atlas --png FILE` writes)",
    "content": {"image/png": {}}}})
def atlas_map(query: Annotated[AtlasRequest, Query()]) -> Response:
    """The atlas's map: the variable's trend per decade at every grid point; the Data view's Atlas panel
    shows it beside the ranking."""
    return _read(lambda: read_atlas_map(reader_url(), query))


@app.post("/climate", responses={**REFUSALS, 200: {
    "description": "the climate signal of the region the GeoJSON body outlines, as GET /climate answers for a "
                   "country's"}})
def region_climate(query: Annotated[ClimateRequest, Query()],
                   outline: Annotated[dict[str, Any], OUTLINE]) -> Response:
    """The yearly values, anomalies and trend of a region given by its outline (the GeoJSON body; region=
    its name); the same object as `python -m era5etl climate --region-file FILE --json`."""
    return _read(lambda: read_climate(reader_url(), query, outline))


class Era5DashboardPlugin(AirflowPlugin):
    # Airflow reads these class attributes (declared as plain lists on AirflowPlugin), never instances.
    name = "era5_dashboard"
    fastapi_apps = [{"app": app, "url_prefix": URL_PREFIX, "name": "ERA5 months dashboard"}]  # noqa: RUF012
    external_views = [{  # noqa: RUF012
        "name": "ERA5 months",
        "href": f"{URL_PREFIX}/",
        "url_route": URL_ROUTE,
        "destination": "nav",
        "category": "browse",
    }]
