"""The Data view from ledger rows: the loaded span, the place and hour shown first, the page's frame."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from typing import Any

from era5etl import report
from era5etl.report.assets import FILES, static_file

AREA = "46/7/45/8"


def row(month: date, state: str, rows: int | None = 18600) -> dict[str, Any]:
    return {"month": month, "grid": "0.25", "state": state, "rows": rows}


def view() -> report.DataView:
    rows = [row(date(2023, 11, 1), "pending", None), row(date(2024, 1, 1), "validated"),
            row(date(2024, 2, 1), "failed", 17000), row(date(2024, 3, 1), "loaded"), row(date(2024, 4, 1), "loading")]
    targets = [report.Target("weather", AREA, 5), report.Target("other", "50/5/45/10", 1)]
    return report.build_data_view("weather", AREA, rows, targets, datetime(2024, 6, 1, tzinfo=UTC))


def test_loaded_months_and_defaults() -> None:
    v = view()
    assert v.months == (date(2024, 1, 1), date(2024, 3, 1))  # loaded or validated only
    assert v.first_hour == datetime(2024, 1, 1, tzinfo=UTC)
    assert v.last_hour == datetime(2024, 3, 31, 23, tzinfo=UTC)
    assert v.centre == (45.5, 7.5)  # the middle grid point of 5 x 5
    # 45.25..46 holds four latitudes: the lower of the two middle ones
    assert report.build_data_view("t", "46/7/45.25/8", [], []).centre == (45.5, 7.5)


def test_page_frame() -> None:
    html = report.render_data_page(view(), base="/era5/")
    config = json.loads(re.search(r'<script type="application/json" id="era5-config">(.*?)</script>', html, re.S)
                        .group(1))  # type: ignore[union-attr]
    assert config["seriesUrl"] == "/era5/series" and config["mapUrl"] == "/era5/map"
    assert (config["from"], config["to"], config["time"]) == ("2024-01-01", "2024-03-31", "2024-03-31T23:00")
    assert (config["lat"], config["lon"], config["area"], config["table"]) == (45.5, 7.5, AREA, "weather")
    assert 'id="series-form"' in html and 'id="map-form"' in html
    # The script, its styles and uPlot are the plugin's static files, under the same base (and login).
    for name in ("uPlot.iife.min.js", "dataview.js"):
        assert f'<script src="/era5/static/{name}"></script>' in html
    for name in ("uPlot.min.css", "dataview.css"):
        assert f'<link rel="stylesheet" href="/era5/static/{name}">' in html
    assert config["bars"] == ["total_precipitation", "snowfall"]
    assert 'data-tab="data" href="/era5/data?table=weather&amp;area=46%2F7%2F45%2F8"' in html
    assert 'href="/era5/data?table=other&amp;area=50%2F5%2F45%2F10"' in html  # the other targets
    assert "3 months" not in html and "2 months loaded" in html


def _config(html: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="era5-config">(.*?)</script>', html, re.S)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_a_table_on_levels_is_read_at_a_level_the_ledger_says_it_holds() -> None:
    rows = [{**row(date(2024, 1, 1), "validated"), "dataset": "pressure-levels", "levels": [850, 500, 1000]},
            {**row(date(2024, 2, 1), "validated"), "dataset": "pressure-levels", "levels": [500, 250]},
            {**row(date(2024, 3, 1), "failed"), "dataset": "pressure-levels", "levels": [10]}]
    v = report.build_data_view("upper_air", AREA, rows)
    assert v.dataset == "pressure-levels" and v.levels == (250, 500, 850, 1000)  # a failed month's not
    html = report.render_data_page(v, base="/era5/")
    config = _config(html)
    assert config["levels"] == [250, 500, 850, 1000] and config["level"] == 500
    assert config["seriesVariables"] == "temperature,geopotential" and config["variable"] == "temperature"
    assert config["units"]["temperature"] == "°C" and config["units"]["geopotential"] == "m2 s-2"
    # A level picker in the series form and in the map's, 500 hPa chosen; the map offers the table's columns.
    pickers = re.findall(r'<select name="level">(.*?)</select>', html)
    assert len(pickers) == 2 and all('<option value="500" selected>500</option>' in p for p in pickers)
    variables = re.search(r'<select name="variable">(.*?)</select>', html.split('id="map-form"')[1])
    assert variables is not None and '<option value="temperature" selected>temperature (°C)' in variables.group(1)
    assert "temperature_2m" not in variables.group(1)
    # A table without levels has no picker, and the single-level columns.
    plain = report.render_data_page(view())
    assert 'name="level"' not in plain and _config(plain)["levels"] == [] and _config(plain)["level"] is None
    assert _config(plain)["variable"] == "temperature_2m"


def test_a_table_of_monthly_means_is_read_by_month() -> None:
    rows = [{**row(date(2024, m, 1), "validated"), "dataset": "monthly-means"} for m in (1, 2, 3)]
    html = report.render_data_page(report.build_data_view("means", AREA, rows))
    assert _config(html)["step"] == "month"
    steps = re.search(r'<select name="step">(.*?)</select>', html)
    assert steps is not None and steps.group(1) == '<option value="month" selected>monthly</option>'
    assert _config(report.render_data_page(view()))["step"] == "day"


def test_nothing_loaded_yet() -> None:
    html = report.render_data_page(report.build_data_view("weather", AREA, [row(date(2024, 1, 1), "pending", None)]))
    assert "no month is loaded yet" in html and "<script" not in html


def test_a_table_name_cannot_end_the_script() -> None:
    v = report.build_data_view("w</script><b>", AREA, [row(date(2024, 1, 1), "loaded")])
    html = report.render_data_page(v, base="/era5/")
    assert "w</script>" not in html and "w<\\/script>" in html


def test_months_page_has_the_tabs() -> None:
    d = report.build(table="weather", area=AREA, month_rows=[], task_rows=[], load_rows=[])
    html = report.render_page(d, base="/era5/")
    assert 'data-tab="months"' in html and 'data-tab="data" href="/era5/data?table=weather' in html


def test_static_files_are_the_ones_named() -> None:
    """Every name the page asks for is served (uPlot from node_modules, put there by scripts/setup.sh);
    nothing else is, whatever the path."""
    for name in FILES:
        path = static_file(name)
        assert path is not None and path.stat().st_size > 1000, name
    assert b"uPlot" in FILES["uPlot.iife.min.js"].read_bytes()[:5000]
    for name in ("../datapage.py", "dataview.py", "uPlot.esm.js", "", "..%2Fdatapage.py"):
        assert static_file(name) is None
