"""The table read from Python, for notebooks: pandas DataFrames and xarray Datasets of the reads the
CLI and the HTTP API answer with (the same ``era5etl.read`` functions, so the same values).

```python
from era5etl import api

api.series(place="Jakarta", step="day", tz="local")           # DataFrame: time index, a column per value
api.climate(place="Jakarta", baseline=(1961, 1990))           # DataFrame per year; .attrs["climate"]: all of it
api.area("-6/106.5/-6.5/107", "2024-01-01", "2024-02-01")     # xarray.Dataset (time, latitude, longitude)
api.region_series("Chile", start="2024-01-01", end="2024-02-01")  # DataFrame: the region's weighted days
```

Each function reads through this thread's connection to ``url`` (default the pipeline's database,
ERA5_DATABASE_URL or the checkout's local server), opened on the first call and kept for the next
(``era5etl.db.session``; ``api.close()`` closes it), and reads ``table`` (default ERA5_TABLE, else
``weather``). Bad input raises ``era5etl.core.errors.InputError`` (a ``ReadError`` naming what the
table holds).
"""

# Imports inside functions: pandas (~0.3 s to import) loads only when a call returns a DataFrame.

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from era5etl import settings
from era5etl.core.grid import Area
from era5etl.db.session import close as close, session
from era5etl.read.area_grid import area_grid
from era5etl.read.climate_read import area_climate, climate_request
from era5etl.read.question import Answer, answer, ask, check_question, check_target, target_of
from era5etl.read.regions import Region, resolve_region
from era5etl.read.series import Series
from era5etl.read.where import Where, where

if TYPE_CHECKING:
    import pandas as pd
    import xarray as xr

MAX_AREA_VALUES = 50_000_000  # grid points x time steps an area's Dataset may hold


def _table(table: str | None) -> str:
    return table or settings.load().table


def _moment(value: str | datetime | None) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value if value is None or value.tzinfo else value.replace(tzinfo=UTC)
    return datetime.fromisoformat(value).replace(tzinfo=UTC)


def series(place: str | None = None, *, lat: float | None = None, lon: float | None = None,
           country: str | None = None, area: str | None = None, region: str | None = None,
           region_file: str | None = None, start: str | datetime | None = None, end: str | datetime | None = None,
           variables: list[str] | None = None, step: str = "day", tz: str | None = None, level: int | None = None,
           table: str | None = None, url: str | None = None) -> pd.DataFrame:
    """A series as a DataFrame: a place's (``place`` by name, or ``lat`` and ``lon``), an ``area``'s
    (N/W/S/E) or a ``region``'s (a country by name or ISO code, or ``region_file``, a GeoJSON file), the
    question ``read.question`` checks and answers for the CLI and HTTP too. Index ``time`` (UTC; with
    ``tz`` each local day's start in that offset), one column per value, ``hours`` where read (an
    area's and a region's also ``points``). ``start`` is included, ``end`` excluded (local days' bounds
    are local midnights); ``level``: the hPa of a table on pressure levels. ``attrs``: a place's
    ``place``, grid point (``point``) and ``described``, or the ``area`` or ``region``; ``step``,
    ``units`` and ``utc_offset_hours``."""
    given_region = region is not None or region_file is not None
    check_question(lat=lat, lon=lon, place=place, country=country, area=area is not None, region=given_region,
                   tz=tz, step=step)
    target = target_of(lat=lat, lon=lon, place=place, country=country, area=area,
                       region=(lambda: resolve_region(region, region_file)) if given_region else None)
    q = ask(_table(table), target, start=_moment(start), end=_moment(end), variables=variables,
            step=step, tz=tz, level=level)  # type: ignore[arg-type]
    with session(url) as conn:
        return _frame(answer(conn, q))


def _frame(got: Answer) -> pd.DataFrame:
    import pandas as pd

    s, q, data = got.series, got.question, got.as_json()
    index = pd.DatetimeIndex(pd.to_datetime(s.time).tz_localize("UTC"), name="time")
    if q.offset_minutes is not None:
        index = index.tz_convert(timezone(timedelta(minutes=q.offset_minutes)))
    attrs: dict[str, Any] = {"step": q.step, "units": data["units"], "utc_offset_hours": (q.offset_minutes or 0) / 60}
    if isinstance(s, Series):
        at = q.target
        assert isinstance(at, Where)
        frame = pd.DataFrame({c: s.values[c] for c in s.columns}, index=index)
        attrs.update({"place": None if at.place is None else at.place.__dict__, "point": data["point"],
                      "described": got.named})
    else:
        frame = pd.DataFrame({"points": s.points, "hours": s.hours, **{c: s.values[c] for c in s.columns}},
                             index=index)
        attrs.update({"region": s.area.describe()} if isinstance(s.area, Region) else {"area": str(s.area)})
    frame.attrs.update(attrs)
    return frame


def climate_json(place: str | None = None, *, lat: float | None = None, lon: float | None = None,
                 country: str | None = None, variable: str = "temperature_2m",
                 baseline: tuple[int, int] | str = (1991, 2020), first: int | None = None,
                 last: int | None = None, indices: list[str] | None = None, tz: str | None = None,
                 table: str | None = None, url: str | None = None, area: str | None = None,
                 region: str | None = None, region_file: str | None = None) -> dict[str, Any]:
    """The climate object ``climate --json`` prints, for the same request: a place (by name, or ``lat``
    and ``lon``), an ``area`` (N/W/S/E), a ``region`` (a country's name or ISO code) or a
    ``region_file`` (a GeoJSON file)."""
    check_target(lat=lat, lon=lon, place=place, country=country, area=area is not None,
                 region=region is not None or region_file is not None)
    at = where(lat, lon, place, country)
    with session(url) as conn:
        if at is None:
            box = area if area is not None else resolve_region(region, region_file)
            return area_climate(conn, _table(table), box, variable, baseline, first, last, indices, tz)
        return climate_request(conn, _table(table), at, variable, baseline, first, last, indices, tz)


def climate(place: str | None = None, **request: Any) -> pd.DataFrame:
    """The climate signal per year as a DataFrame (index ``year``; ``value``, ``anomaly``, ``days``,
    ``partial``, and one column per index); ``attrs["climate"]`` holds the whole :func:`climate_json`
    object (the trend per decade, the baseline's months, each index's trend, the notes)."""
    import pandas as pd

    data = climate_json(place, **request)
    frame = pd.DataFrame(data["years"]).set_index("year")
    for name, index in data["indices"].items():
        frame[name] = pd.Series({r["year"]: r["value"] for r in index["years"]}, dtype="float64")
    frame[["value", "anomaly"]] = frame[["value", "anomaly"]].astype("float64")
    frame.attrs["climate"] = data
    return frame


def region_series(region: str | None = None, *, region_file: str | None = None, **question: Any) -> pd.DataFrame:
    """A region's series: :func:`series` of ``region`` (a country by name or ISO code) or
    ``region_file`` (a GeoJSON file), its points (the table's lattice's: ERA5-Land's 0.1 degree cells on
    a land table) weighted by their cells' overlap with the outline; ``question``: the other
    parameters :func:`series` takes (``start``, ``end``, ``variables``, ``step``, ``tz``, ``level``,
    ``table``, ``url``)."""
    return series(region=region, region_file=region_file, **question)


def area(box: str, start: str | datetime, end: str | datetime, variables: list[str] | None = None,
         step: str = "hour", table: str | None = None, url: str | None = None) -> xr.Dataset:
    """The rows of the grid points inside ``box`` (N/W/S/E) with a time in [start, end) as an
    xarray.Dataset with dimensions (time, latitude, longitude): hourly from the table, or ``step="day"``
    / ``"month"`` from its rollups (their columns, ``temperature_2m_max`` ...); a grid point or time
    without a row is NaN. Refused past MAX_AREA_VALUES grid points x steps."""
    first, last = _moment(start), _moment(end)
    assert first is not None and last is not None
    with session(url) as conn:
        grid: xr.Dataset = area_grid(conn, _table(table), Area.parse(box), first, last, variables, step,
                                     MAX_AREA_VALUES)
    return grid


__all__ = ["MAX_AREA_VALUES", "area", "climate", "climate_json", "close", "region_series", "series"]
