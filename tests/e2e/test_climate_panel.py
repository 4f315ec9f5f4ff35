"""The Data view's Climate panel in a real Airflow API server, seen by headless Chromium: Jakarta's grid
point over 1940-2024 (the local CDS's synthetic download, through ``load-file``), the place typed by
name, then the point's area, then Singapore as a region (its four cells over 1991-2000), each drawn as
one SVG bar per complete year whose anomaly is the
``/era5/climate`` answer's, which is ``climate --json``'s, with the OLS trend line. The API server
machinery is ``test_data_view.py``'s (``apiserver.py``)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest

from era5etl.core.months import Month
from era5etl.db import connect
from era5etl.track import ledger
from tests.e2e.apiserver import CHROMIUM, CHROMIUM_ARGS, STARTUP_TIMEOUT_S, api_server, clean, status
from tests.integration.climate.conftest import download

pytestmark = pytest.mark.e2e

BOX = "-6.25/106.75/-6.25/106.75"  # Jakarta's grid point: the area the download covers


@dataclass(frozen=True)
class Served:
    url: str
    password: str
    table: str
    token: str


def _token(url: str, password: str) -> str:
    body = json.dumps({"username": "admin", "password": password}).encode()
    request = urllib.request.Request(f"{url}/auth/token", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return str(json.load(response)["access_token"])


@pytest.fixture(scope="module")
def served(db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    work = tmp_path_factory.mktemp("climate-panel")
    table = f"cp_{uuid.uuid4().hex[:10]}"
    try:
        with api_server(work, db_url) as server:
            load = subprocess.run([sys.executable, "-m", "era5etl", "load-file", str(download("jakarta")), "--table",
                                   table], capture_output=True, text=True, timeout=600, check=False)
            assert load.returncode == 0, load.stdout + load.stderr
            load = subprocess.run([sys.executable, "-m", "era5etl", "load-file", str(download("singapore")),
                                   "--table", table], capture_output=True, text=True, timeout=600, check=False)
            assert load.returncode == 0, load.stdout + load.stderr
            # The HTTP reads and the Data view answer for the ledger's tables: load-file keeps no ledger.
            with connect(db_url) as conn:
                rows = conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()
            # 85 years of hours at one grid point, and Singapore's 4 points over 1991-2000
            assert rows is not None and rows[0] == 745_128 + 4 * 87_672
            ledger.set_state(db_url, table=table, month=Month.parse("2024-12"), area=BOX, grid="0.25/0.25",
                             state="loaded", run_id="test_climate_panel", rows=int(rows[0]))
            server.wait_healthy(time.monotonic() + STARTUP_TIMEOUT_S)
            password = server.admin_password()
            yield Served(server.url, password, table, _token(server.url, password))
    finally:
        clean(db_url, table, None)
        shutil.rmtree(work, ignore_errors=True)


def _climate(served: Served, **params: str) -> Any:
    url = f"{served.url}/era5/climate?" + urlencode({"table": served.table, **params})
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {served.token}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


def _cli(*args: str) -> Any:
    done = subprocess.run([sys.executable, "-m", "era5etl", "climate", *args, "--json"], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _bars(frame: Any) -> list[tuple[int, float]]:
    rects = frame.locator("#climate-chart rect.bar")
    return [(int(r.get_attribute("data-year") or 0), float(r.get_attribute("data-anomaly") or "nan"))
            for r in rects.all()]


def _check_drawn(frame: Any, answer: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    complete = [(r["year"], r["anomaly"]) for r in answer["years"] if not r["partial"]]
    expect(frame.locator("#climate-chart")).to_have_attribute("data-bars", str(len(complete)))
    drawn = _bars(frame)
    assert [y for y, _ in drawn] == [y for y, _ in complete]
    assert all(abs(a - b) < 1e-12 for (_, a), (_, b) in zip(drawn, complete, strict=True))
    line = frame.locator("#climate-chart line.trend")
    assert float(line.get_attribute("data-ols") or "nan") == answer["trend_per_decade"]["ols"]


def _data_page(browser: Any, served: Served) -> Any:
    """The Data view of the served table, signed in, every request outside 127.0.0.1 refused."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1440, "height": 1600})
    context.route(re.compile(r"^https?://(?!127\.0\.0\.1[:/])"), lambda route: route.abort())
    page = context.new_page()
    page.set_default_timeout(60_000)
    expect.set_options(timeout=60_000)
    route = f"/plugin/era5-months/era5/data?table={quote(served.table)}"
    page.goto(served.url + route)
    page.get_by_label("Username").fill("admin")
    page.get_by_label("Password").fill(served.password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/plugin/era5-months/**")
    page.goto(f"{served.url}/era5/data?table={quote(served.table)}")
    return page


def test_the_climate_panel_draws_a_places_an_areas_and_a_regions_anomalies(served: Served, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    place = _climate(served, place="Jakarta", baseline="1961-1990")
    assert place == _cli("--place", "Jakarta", "--baseline", "1961-1990", "--table", served.table)
    area = _climate(served, area=BOX, baseline="1961-1990")
    assert area == _cli(f"--area={BOX}", "--baseline", "1961-1990", "--table", served.table)  # "-6..." needs the = form
    region = _climate(served, region="Singapore", baseline="1991-2000")
    assert region == _cli("--region", "SG", "--baseline", "1991-2000", "--table", served.table)
    assert region["region"]["points"] == 4 and [r["year"] for r in region["years"]] == list(range(1991, 2001))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = _data_page(browser, served)
            frame = page.locator("body")
            expect(page.locator("h1")).to_have_text("ERA5 data")
            panel = page.locator("#climate-form")
            panel.get_by_label("Place").fill("Jakarta")
            panel.get_by_label("Baseline").fill("1961-1990")
            panel.get_by_role("button", name="Show climate").click()
            _check_drawn(frame, place)
            expect(page.locator("#climate-summary")).to_contain_text("Jakarta, ID")
            expect(page.locator("#climate-summary")).to_contain_text("Partial years, no bar: 1940")
            # The same point as an area: UTC days from the rollup, so other anomalies.
            panel.get_by_label("Place").fill("")
            panel.get_by_label("Area N/W/S/E (instead)").fill(BOX)
            panel.get_by_role("button", name="Show climate").click()
            expect(page.locator("#climate-summary")).to_contain_text("area -6.25/106.75/-6.25/106.75: 1 grid points")
            _check_drawn(frame, area)
            # A country: its four cells weighted by their overlap with the outline.
            panel.get_by_label("Area N/W/S/E (instead)").fill("")
            panel.get_by_label("Region (instead)").fill("Singapore")
            panel.get_by_label("Baseline").fill("1991-2000")
            panel.get_by_role("button", name="Show climate").click()
            expect(page.locator("#climate-summary")).to_contain_text("region Singapore (Natural Earth")
            _check_drawn(frame, region)
            # An unknown place: the endpoint's 404 sentence, no chart.
            panel.get_by_label("Region (instead)").fill("")
            panel.get_by_label("Place").fill("Jakrta")
            panel.get_by_role("button", name="Show climate").click()
            expect(page.locator("#climate-status")).to_contain_text("closest names")
            expect(page.locator("#climate-chart rect.bar")).to_have_count(0)
            page.screenshot(path=str(tmp_path / "climate-panel.png"), full_page=True)
        finally:
            browser.close()


def _atlas(served: Served, **params: str) -> Any:
    url = f"{served.url}/era5/atlas?" + urlencode({"table": served.table, **params})
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {served.token}"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.load(response)


def test_the_atlas_panel_ranks_draws_the_map_and_a_click_opens_the_climate_panel(served: Served,
                                                                                 tmp_path: Path) -> None:
    """Jakarta and Singapore's cities ranked by their trend (the /era5/atlas answer, the CLI's), the map
    of every grid point drawn, then a click on Jakarta's row: its Climate panel, as the panel draws it
    when asked by name."""
    from playwright.sync_api import expect, sync_playwright

    cities = _atlas(served, by="city", top="100")  # every city on the table's five grid points
    done = subprocess.run([sys.executable, "-m", "era5etl", "atlas", "--table", served.table, "--by", "city", "--top",
                           "100", "--json"], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert cities == json.loads(done.stdout.strip().splitlines()[-1])
    names = [r["city"]["name"] for r in cities["ranking"]]
    assert "Jakarta" in names and len(names) == cities["units"] < 100
    rain = _atlas(served, variable="total_precipitation", by="point", top="3")
    for path in ("atlas", "atlas.png", "static/atlas.js"):  # behind the login, as the other reads
        assert status(f"{served.url}/era5/{path}?table={quote(served.table)}") == 401, path
    jakarta = _climate(served, place="Jakarta")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = _data_page(browser, served)
            panel = page.locator("#atlas-form")
            panel.get_by_label("Top").fill("100")
            panel.get_by_role("button", name="Show atlas").click()
            rows = page.locator("#atlas-rows tr")
            expect(rows).to_have_count(len(names))
            for i, r in enumerate(cities["ranking"]):
                expect(rows.nth(i)).to_contain_text(r["city"]["described"])
            page.wait_for_function("() => document.getElementById('atlas-map').naturalWidth > 0")
            assert page.evaluate("document.getElementById('atlas-map').naturalWidth") == 1100  # the CLI's PNG
            expect(page.locator("#atlas-zonal")).to_contain_text(f"{cities['ranked']} of {cities['units']} ranked")
            page.screenshot(path=str(tmp_path / "atlas-panel.png"), full_page=True)
            # A click on Jakarta's row: the Climate panel of Jakarta, the /era5/climate answer drawn.
            rows.filter(has_text="Jakarta").first.click()
            expect(page.locator("#climate-form").get_by_label("Place")).to_have_value("Jakarta")
            expect(page.locator("#climate-summary")).to_contain_text("Jakarta, ID")
            _check_drawn(page.locator("body"), jakarta)
            # Another variable, grid points: the rain's ranking.
            panel.get_by_label("Variable").select_option("total_precipitation")
            panel.get_by_label("Rank").select_option("point")
            panel.get_by_label("Top").fill("3")
            panel.get_by_role("button", name="Show atlas").click()
            expect(rows).to_have_count(len(rain["ranking"]))
            expect(page.locator("#atlas-zonal")).to_contain_text("total total_precipitation")
            # A span holding no complete year: the endpoint's sentence, no rows, no map.
            panel.get_by_label("From", exact=True).fill("1900")
            panel.get_by_label("To", exact=True).fill("1901")
            panel.get_by_role("button", name="Show atlas").click()
            expect(page.locator("#atlas-status")).to_contain_text("holds no complete year")
            expect(rows).to_have_count(0)
        finally:
            browser.close()
