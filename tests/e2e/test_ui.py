"""The dashboard plugin in a real Airflow API server, seen by headless Chromium after a real UI login.

One month is loaded for real (``era5etl run-month`` against the local CDS server, so its figures,
chunks and Data Docs are the pipeline's own) while the API server starts; three more months are
written to the ledger in other states so the calendar shows several colours. The server runs
with its own AIRFLOW_HOME (the simple auth manager's generated password and a JWT secret of its
own) on the checkout's metadata database, and everything the test wrote is removed afterwards.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from era5etl.core.months import Month
from era5etl.core.paths import PROJECT_ROOT
from era5etl.db import connect
from era5etl.report import STATE_COLOURS
from era5etl.track import liveness
from tests.e2e.apiserver import CHROMIUM, CHROMIUM_ARGS, PATH, STARTUP_TIMEOUT_S, api_server, clean, status

pytestmark = pytest.mark.e2e

SCREENSHOT = PROJECT_ROOT / ".local" / "ui-test.png"
AREA = "46/7/45/8"
LOADED = "2024-01"
# Months the test writes straight into the ledger, each in a state of its own.
SYNTHETIC = {"2023-11": "pending", "2024-02": "failed", "2024-03": "loading"}
BUSY = "2024-03"  # the synthetic month a live run holds (the fixture holds its lock)


@dataclass(frozen=True)
class Stack:
    url: str  # the API server
    password: str  # the simple auth manager's generated password for "admin"
    table: str
    chunks: int  # chunks of the real load, as its metrics recorded them
    log: Path

    def dashboard(self, path: str = "") -> str:
        return f"{self.url}/era5/{path}?table={quote(self.table)}&area={quote(AREA, safe='')}"


def _write_synthetic_months(db_url: str, table: str) -> None:
    with connect(db_url) as conn, conn.transaction():
        for month, state in SYNTHETIC.items():
            conn.execute(
                "INSERT INTO era5_months (table_name, month, area, grid, state, rows, expected_rows, expver, run_id,"
                " error) VALUES (%s, %s, %s, '0.25', %s, %s, 18600, %s, %s, %s)",
                (table, f"{month}-01", AREA, state, 17000 if state == "failed" else None,
                 ["0001"] if state != "pending" else None, f"ui-test-{month}",
                 "load: synthetic failure for the UI test" if state == "failed" else None))
        # A recorded load for February too, so the rate-per-month chart has a line to draw.
        conn.execute(
            "INSERT INTO era5_metrics (run_id, task, month, table_name, area, rows, bytes, seconds, rows_per_s,"
            " detail) VALUES ('ui-test-2024-02', 'load', '2024-02-01', %s, %s, 17400, 800000, 1.5, 11600,"
            " '{\"chunks\": []}')", (table, AREA))


@pytest.fixture(scope="module")
def stack(db_url: str, cds: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    work = tmp_path_factory.mktemp("ui")
    table = f"ui_{uuid.uuid4().hex[:10]}"
    cds_url: str | None = None
    try:
        with api_server(work, db_url) as server:
            deadline = time.monotonic() + STARTUP_TIMEOUT_S
            # The real month loads while the server starts: the two together fit the test's time budget.
            cds_url = str(cds.url)
            run = subprocess.run(
                [sys.executable, "-m", "era5etl", "run-month", LOADED, "--table", table, "--area", AREA],
                env={**os.environ, "PATH": PATH, "ERA5_DATABASE_URL": db_url, "CDSAPI_URL": cds_url,
                     "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(work / "staging"),
                     "ERA5_VALIDATION_DIR": str(work / "validation")},
                capture_output=True, text=True, timeout=STARTUP_TIMEOUT_S)
            assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
            _write_synthetic_months(db_url, table)
            with connect(db_url) as conn:
                row = conn.execute(
                    "SELECT jsonb_array_length(detail -> 'chunks') FROM era5_metrics WHERE table_name = %s"
                    " AND task = 'load' AND month = %s", (table, f"{LOADED}-01")).fetchone()
            assert row is not None and row[0] > 0
            server.wait_healthy(deadline)
            # The synthetic "loading" month is a live run's: a month held by no live session reads as
            # a dead run's, failed (track.liveness), so the test holds its lock as a loading run does.
            with liveness.hold(db_url, table, Month.parse(BUSY), AREA):
                yield Stack(url=server.url, password=server.admin_password(), table=table, chunks=int(row[0]),
                            log=server.log)
    finally:
        clean(db_url, table, cds_url)
        shutil.rmtree(work, ignore_errors=True)


def _rgb(hex_colour: str) -> str:
    h = hex_colour.lstrip("#")
    return "rgb({}, {}, {})".format(*(int(h[i:i + 2], 16) for i in (0, 2, 4)))


def test_unauthenticated_requests_are_refused(stack: Stack) -> None:
    docs = f"{stack.url}/era5/docs/{stack.table}/{LOADED}/{AREA.replace('/', '_')}/docs/index.html"
    for url in (stack.dashboard(), stack.dashboard("api/dashboard"), docs):
        assert status(url) == 401, url
        # A token Airflow did not sign is no better than none.
        assert status(url, {"Authorization": "Bearer not.a.token"}) in (401, 403), url
        assert status(url, {"Cookie": "_token=forged"}) in (401, 403), url


def test_json_with_an_api_token(stack: Stack) -> None:
    body = json.dumps({"username": "admin", "password": stack.password}).encode()
    request = urllib.request.Request(f"{stack.url}/auth/token", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        token = json.load(response)["access_token"]
    request = urllib.request.Request(stack.dashboard("api/dashboard"), headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        data = json.load(response)
    months = {m["month"]: m for m in data["months"]}
    assert {k: v["state"] for k, v in months.items()} == {LOADED: "validated", **SYNTHETIC}
    assert months[LOADED]["rows"] == months[LOADED]["expected_rows"] == 18600
    # run-month compresses after validating; on this Apache-licensed server it records "unavailable".
    assert set(months[LOADED]["tasks"]) == {"fetch", "stage", "load", "validate", "compress"}
    assert months[LOADED]["tasks"]["load"]["rows_per_s"] > 0
    assert data["selected_month"] == "2024-02"  # the latest month with a recorded load
    assert {r["month"] for r in data["load_runs"]} == {LOADED, "2024-02"}


def test_dashboard_in_the_airflow_ui(stack: Stack) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            # A browser without Airflow's cookie gets no page either.
            anonymous = browser.new_page()
            response = anonymous.goto(stack.dashboard())
            assert response is not None and response.status == 401
            anonymous.close()

            context = browser.new_context(viewport={"width": 1440, "height": 1150})
            # Offline machine: requests beyond the API server (GX Data Docs load scripts from CDNs) fail at
            # once instead of waiting on DNS.
            context.route(re.compile(r"^https?://(?!127\.0\.0\.1[:/])"), lambda route: route.abort())
            page = context.new_page()
            page.set_default_timeout(30_000)
            expect.set_options(timeout=15_000)  # a shared, busy machine: the UI can take a while to draw
            # The plugin's page inside the UI, deep-linked to the test's table; the UI asks for a login first.
            route = f"/plugin/era5-months/era5/?table={quote(stack.table)}&area={quote(AREA, safe='')}&month={LOADED}"
            page.goto(stack.url + route)
            page.get_by_label("Username").fill("admin")
            page.get_by_label("Password").fill(stack.password)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url("**/plugin/era5-months/**")
            if stack.table not in page.url:  # a login that drops the deep link's query: follow it again
                page.goto(stack.url + route)
            # The external view is listed in the UI's Browse menu.
            page.get_by_role("button", name="Browse").click()
            expect(page.get_by_role("menuitem", name="ERA5 months")).to_be_visible()
            page.keyboard.press("Escape")
            frame = page.frame_locator('iframe[title="ERA5 months"]')
            expect(frame.locator("h1")).to_have_text("ERA5 months")
            expect(frame.locator("p.sub:not(#staging)")).to_contain_text(stack.table)

            for month, state in {LOADED: "validated", **SYNTHETIC}.items():
                cell = frame.locator(f'a.cell[data-month="{month}"]')
                expect(cell).to_have_attribute("data-state", state)
                expect(cell).to_contain_text(state)
                background, text = STATE_COLOURS[state]
                expect(cell).to_have_css("background-color", _rgb(background))
                expect(cell).to_have_css("color", _rgb(text))
            expect(frame.locator(f'a.cell[data-month="{LOADED}"]')).to_contain_text("18.6k / 18.6k")
            expect(frame.locator('span.cell.none[data-month="2024-04"]')).to_be_visible()

            row = frame.locator(f'tr[data-month="{LOADED}"]')
            expect(row).to_contain_text("18,600")
            expect(row.locator("td").nth(5)).to_contain_text("passed")
            for task in ("stage", "load", "validate"):
                expect(row.locator(f'td[data-task="{task}"]')).to_contain_text("rows/s")
            expect(row.locator('td[data-task="fetch"]')).to_contain_text(re.compile(r"\d [kMG]?B/s"))  # bytes, not rows
            expect(frame.locator('tr[data-month="2024-02"]')).to_contain_text("synthetic failure")

            expect(frame.locator("svg.chunks rect.bar")).to_have_count(stack.chunks)
            expect(frame.locator("svg.months circle.pt")).to_have_count(2)
            expect(frame.locator(f'svg.months circle.sel[data-month="{LOADED}"]')).to_have_count(1)

            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOT))

            # The month's Data Docs, served through the plugin from the validation folder in the ledger.
            docs = row.locator("a.docs")
            expect(docs).to_have_text("Data Docs")
            href = docs.get_attribute("href") or ""
            served = page.request.get(stack.url + href)  # with the browser's Airflow cookie
            assert served.status == 200 and "era5_month" in served.text()  # the suite's name, in the page source
            docs.click()
            # GX styles its tables with scripts from CDNs this machine cannot reach; the page itself renders.
            expect(frame.locator("strong", has_text="Data Docs")).to_be_visible()
            page.wait_for_url("**/plugin/era5-months/era5/docs/**")
        finally:
            browser.close()
