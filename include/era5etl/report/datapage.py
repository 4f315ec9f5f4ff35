"""The Data view: the loaded table read back on the page, one place over time and the area at one hour.

The server writes the frame (forms filled with what the ledger says is loaded, the endpoints); the
charts are drawn in the browser by ``static/dataview.js`` (uPlot for the series, SVG for the map)
from the JSON of ``/series`` and ``/map``, the same answers a program gets. The script, its styles
and uPlot are static files the plugin serves (``report.assets``), no asset from elsewhere: the API
server may have no internet access. The external view's iframe allows
scripts and same-origin requests, so the script's fetches carry the Airflow login cookie.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from era5etl.core.datasets import DATASETS, SINGLE_LEVELS, Dataset
from era5etl.read.columns import known
from era5etl.read.regions import country_names
from era5etl.read.series import TOTALS
from era5etl.report.dataview import DataView
from era5etl.report.fmt import count, esc, when
from era5etl.report.page import CSS, query, tabs, targets_nav

# What the map can show (every hourly column ``era5etl.read`` answers), with the unit shown for each
# (the table's units: docs/table.md).
MAP_VARIABLES: tuple[str, ...] = known("hour")
UNITS = {"temperature_2m": "°C", "zonal_wind_10m": "m/s", "meridional_wind_10m": "m/s", "wind_speed_10m": "m/s",
         "total_cloud_cover": "0-1", "total_precipitation": "mm", "snowfall": "mm"}
# What the series charts draw: at a daily or monthly step each name stands for its rollup columns.
SERIES_VARIABLES = "temperature_2m,total_precipitation"
# A table on pressure levels: its temperature and geopotential at the chosen level; the level shown
# first is 500 hPa where the table holds it (the mid-troposphere's usual map), else its first level.
LEVEL_SERIES_VARIABLES = "temperature,geopotential"
FIRST_LEVEL = 500


def _dataset(v: DataView) -> Dataset:
    return DATASETS.get(v.dataset or "", SINGLE_LEVELS)


def _map_variables(v: DataView) -> tuple[str, ...]:
    """What the map offers: every hourly column of the table (a table on levels has its dataset's)."""
    dataset = _dataset(v)
    if not dataset.has_levels:
        return MAP_VARIABLES
    return known("hour", tuple(c.column for c in dataset.base_variables))


def _units(v: DataView) -> dict[str, str]:
    dataset = _dataset(v)
    if not dataset.has_levels:
        return UNITS
    return {c.column: c.table_unit.replace("degC", "°C") for c in dataset.base_variables}


def _steps(v: DataView) -> tuple[tuple[str, str], ...]:
    """The series form's steps, the one shown first first: a table of monthly means holds months only
    (its rows: ``read.monthly_means``), the others daily, hourly and monthly."""
    if _dataset(v).monthly:
        return (("month", "monthly"),)
    return (("day", "daily"), ("hour", "hourly"), ("month", "monthly"))


def _first_level(v: DataView) -> int | None:
    if not v.levels:
        return None
    return FIRST_LEVEL if FIRST_LEVEL in v.levels else v.levels[0]


def _level_select(v: DataView) -> str:
    """The level picker of a table on pressure levels (nothing for one without levels)."""
    if not v.levels:
        return ""
    first = _first_level(v)
    options = "".join(f'<option value="{level}"{" selected" if level == first else ""}>{level}</option>'
                      for level in v.levels)
    return (f'<label title="the pressure level the rows are read at">Level (hPa)<select name="level">{options}'
            "</select></label>")



def _iso_hour(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%dT%H:00") if moment is not None else ""


def _iso_day(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d") if moment is not None else ""


def config(v: DataView, base: str) -> dict[str, Any]:
    """What the script needs: endpoints, the view's table and area, and the defaults of each form."""
    centre = v.centre
    return {
        "seriesUrl": f"{base}series", "mapUrl": f"{base}map", "climateUrl": f"{base}climate",
        "atlasUrl": f"{base}atlas", "atlasMapUrl": f"{base}atlas.png",
        "table": v.table, "area": v.area, "grid": v.grid,
        "first": _iso_hour(v.first_hour), "last": _iso_hour(v.last_hour),
        "lat": centre[0] if centre else None, "lon": centre[1] if centre else None,
        "from": _iso_day(v.first_hour), "to": _iso_day(v.last_hour), "step": _steps(v)[0][0],
        "time": _iso_hour(v.last_hour), "variable": _map_variables(v)[0], "units": _units(v),
        "seriesVariables": LEVEL_SERIES_VARIABLES if v.levels else SERIES_VARIABLES, "bars": list(TOTALS),
        "levels": list(v.levels), "level": _first_level(v),
    }


def _script_json(data: dict[str, Any]) -> str:
    # Inside <script>, "</" would end the element: JSON allows "<\/" for it.
    return json.dumps(data).replace("</", "<\\/")


def _series_form(v: DataView) -> str:
    c = config(v, "")
    steps = "".join(f'<option value="{s}"{" selected" if s == c["step"] else ""}>{label}</option>'
                    for s, label in _steps(v))
    return (
        '<form class="pick" id="series-form">'
        f'<label>Latitude °N<input type="number" name="lat" step="any" min="-90" max="90" required'
        f' value="{esc(c["lat"] if c["lat"] is not None else "")}"></label>'
        f'<label>Longitude °E<input type="number" name="lon" step="any" min="-180" max="360" required'
        f' value="{esc(c["lon"] if c["lon"] is not None else "")}"></label>'
        '<label title="N/W/S/E, degrees: the series of the area\'s grid points (their mean weighted by '
        'cos(latitude), min and max) instead of the place\'s; or drag a box over the map">Area N/W/S/E (instead)'
        f'<input type="text" name="box" placeholder="{esc(v.area or "46/7/45/8")}" autocomplete="off"></label>'
        f'{_level_select(v)}<label>Step<select name="step">{steps}</select></label>'
        f'<label>From (UTC)<input type="date" name="from" value="{esc(c["from"])}"></label>'
        f'<label>To (UTC)<input type="date" name="to" value="{esc(c["to"])}"></label>'
        '<button type="submit">Show series</button>'
        '<span class="links"><a id="series-csv" href="#">CSV</a> · <a id="series-json" href="#">JSON</a> · '
        '<a id="series-parquet" href="#">Parquet</a></span>'
        "</form>")


def _map_form(v: DataView) -> str:
    c = config(v, "")
    units = c["units"]
    options = "".join(f'<option value="{esc(n)}"{" selected" if n == c["variable"] else ""}>{esc(n)}'
                      f" ({esc(units.get(n, ''))})</option>" for n in _map_variables(v))
    return (
        '<form class="pick" id="map-form">'
        f'<label>Hour (UTC)<input type="datetime-local" name="time" step="3600" required value="{esc(c["time"])}"'
        f' min="{esc(c["first"])}" max="{esc(c["last"])}"></label>'
        f'<label>Variable<select name="variable">{options}</select></label>{_level_select(v)}'
        '<button type="submit">Show map</button>'
        '<span class="links"><a id="map-csv" href="#">CSV</a> · <a id="map-json" href="#">JSON</a></span>'
        "</form>")


def _climate_form() -> str:
    variables = "".join(f'<option value="{n}">{n}</option>' for n in ("temperature_2m", "total_precipitation"))
    countries = "".join(f'<option value="{esc(n)}"></option>' for n in country_names())
    return (
        '<form class="pick" id="climate-form">'
        '<label>Place<input type="text" name="place" placeholder="Jakarta" autocomplete="off"></label>'
        '<label title="ISO 3166 alpha-2, for a name several countries share">Country'
        '<input type="text" name="country" size="3" placeholder="ID" autocomplete="off"></label>'
        '<label title="N/W/S/E: the area\'s cos(latitude)-weighted mean, UTC days">Area N/W/S/E (instead)'
        '<input type="text" name="box" autocomplete="off"></label>'
        '<label title="a country by name or ISO code: its grid points weighted by their cells\' overlap with '
        'Natural Earth\'s outline">Region (instead)'
        '<input type="text" name="region" list="climate-regions" placeholder="Chile" autocomplete="off"></label>'
        f'<datalist id="climate-regions">{countries}</datalist>'
        f'<label>Variable<select name="variable">{variables}</select></label>'
        '<label>Baseline<input type="text" name="baseline" value="1991-2020" size="9" pattern="\\d{4}-\\d{4}">'
        '</label>'
        '<button type="submit">Show climate</button>'
        '<span class="links"><a id="climate-json" href="#">JSON</a></span>'
        "</form>")


def _atlas_form() -> str:
    variables = "".join(f'<option value="{n}">{n}</option>' for n in ("temperature_2m", "total_precipitation"))
    by = "".join(f'<option value="{v}">{label}</option>' for v, label in (
        ("city", "cities"), ("point", "grid points"), ("country", "countries")))
    return (
        '<form class="pick" id="atlas-form">'
        f'<label>Variable<select name="variable">{variables}</select></label>'
        f'<label>Rank<select name="by">{by}</select></label>'
        '<label>Top<input type="number" name="top" value="10" min="1" max="1000" required></label>'
        '<label title="first year (default: the first loaded)">From<input type="number" name="from" min="1900" '
        'max="2200" placeholder="year"></label>'
        '<label title="last year (default: the last loaded)">To<input type="number" name="to" min="1900" max="2200" '
        'placeholder="year"></label>'
        '<button type="submit">Show atlas</button>'
        '<span class="links"><a id="atlas-json" href="#">JSON</a></span>'
        "</form>")


def render_data_page(v: DataView, base: str = "") -> str:
    """The Data view of ``v``'s table and area; ``base`` is the dashboard's root (``/era5/``)."""
    if v.table is None or not v.months:
        what = (f"table <b>{esc(v.table)}</b>, area <b>{esc(v.area or '–')}</b>: " if v.table else "")
        sub = what + ("no month is loaded yet: run the era5_monthly DAG or <code>era5etl run-month</code>.")
        body = f'<p class="empty">{sub}</p>'
    else:
        n = len(v.months)
        sub = (f"table <b>{esc(v.table)}</b>, area <b>{esc(v.area)}</b> (N/W/S/E)"
               + (f", grid {esc(v.grid)}°" if v.grid else "")
               + f" · {count(n)} month{'' if n == 1 else 's'} loaded, {esc(_iso_hour(v.first_hour))} to "
               f"{esc(_iso_hour(v.last_hour))} UTC")
        body = f"""<p class="sub">{sub}</p>
{targets_nav(v.targets, v.table, v.area, base + "data")}
<section id="series"><h2>A place or an area over time</h2>
{_series_form(v)}
<p class="status" id="series-status" role="status"></p>
<div class="charts" id="series-charts"></div>
<p class="gaps" id="series-gaps" role="note"></p></section>
<section id="map"><h2>The area at one hour</h2>
{_map_form(v)}
<p class="status" id="map-status" role="status"></p>
<div class="charts"><figure><figcaption id="map-caption">Map</figcaption><div id="map-chart"></div>
<p class="hint">Click a grid point to show its series above, or drag a box over grid points for their area's
series (the mean weighted by cos(latitude), min and max).</p></figure></div></section>
<section id="atlas"><h2>Which places have changed most?</h2>
{_atlas_form()}
<p class="status" id="atlas-status" role="status"></p>
<div class="atlas"><img id="atlas-map" alt="">
<div class="ranking"><table><thead><tr><th class="num">#</th><th>Place</th><th class="num">Trend per decade</th>
<th class="num">95%</th><th class="num">Last 10 years</th><th class="num">Highest</th></tr></thead>
<tbody id="atlas-rows"></tbody></table></div></div>
<p class="hint" id="atlas-zonal"></p>
<p class="hint">Each place's OLS trend per decade over its complete years (UTC days), and the map of every grid
point's; click a row for its Climate panel. The same object as <code>python -m era5etl atlas --json</code>
(docs/atlas.md).</p></section>
<section id="climate"><h2>Is it warmer? A place's years against a baseline</h2>
{_climate_form()}
<p class="status" id="climate-status" role="status"></p>
<div class="charts"><figure><div id="climate-chart"></div>
<figcaption id="climate-summary"></figcaption></figure></div>
<p class="hint">Each complete year's anomaly (a place's days on its standard offset), the line the OLS trend;
partial years have no bar. The same object as <code>python -m era5etl climate --json</code>.</p></section>
<script type="application/json" id="era5-config">{_script_json(config(v, base))}</script>
<script src="{esc(base)}static/uPlot.iife.min.js"></script>
<script src="{esc(base)}static/dataview.js"></script>
<script src="{esc(base)}static/climate.js"></script>
<script src="{esc(base)}static/atlas.js"></script>"""
    months_href = query(base, table=v.table, area=v.area)
    data_href = query(base + "data", table=v.table, area=v.area)
    footer = ([f"generated {when(v.generated_at)}"] if v.generated_at else []) + [
        f"endpoints: <code>{esc(base)}series</code>, <code>{esc(base)}map</code>, <code>{esc(base)}climate</code>, "
        f"<code>{esc(base)}atlas</code>"]
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>ERA5 data{" · " + esc(v.table) if v.table else ""}</title><style>{CSS}</style>
<link rel="stylesheet" href="{esc(base)}static/uPlot.min.css">
<link rel="stylesheet" href="{esc(base)}static/dataview.css">
</head>
<body>
<h1>ERA5 data</h1>
{tabs("data", months_href, data_href)}
{body}
<footer>{" · ".join(footer)}</footer>
</body></html>
"""
