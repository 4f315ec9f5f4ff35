"""The dashboard's core from rows shaped like its queries': verdicts, calendar, table, charts, JSON, Data Docs."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from era5etl import report
from era5etl.core.grid import area_slug

AREA = "46/7/45/8"
T0 = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)


def ledger(month: date, state: str, **extra: Any) -> dict[str, Any]:
    return {"month": month, "grid": "0.25", "state": state, "rows": 744 * 25 if state in ("loaded", "validated")
            else None, "expected_rows": 744 * 25, "expver": ["0001"], "run_id": f"run_{month}", "error": None,
            "updated_at": T0, **extra}


def metric(month: date, task: str, *, at: datetime = T0, rows: int = 18600, seconds: float = 2.0,
           nbytes: int = 0, detail: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"month": month, "task": task, "run_id": f"run_{month}", "rows": rows, "bytes": nbytes,
            "seconds": seconds, "rows_per_s": rows / seconds if rows else None, "peak_rss_mb": 210.5,
            "recorded_at": at, "detail": detail or {}}


def chunk(day: int, rows: int = 600, seconds: float = 0.05) -> dict[str, Any]:
    return {"start": f"2024-01-{day:02d}T00:00:00+00:00", "rows": rows, "deleted": 0, "bytes": rows * 40,
            "seconds": seconds, "copy_seconds": seconds * 0.7, "index_seconds": seconds * 0.2,
            "rows_per_s": round(rows / seconds)}


JAN, FEB, MAR, APR, JUN = (date(2024, m, 1) for m in (1, 2, 3, 4, 6))


def sample() -> report.Dashboard:
    """Five months in five states over two years, figures for two of them, a chunked load of January."""
    months = [
        ledger(JAN, "validated", validated_at=T0, validation_failed=[], validation_path="/v/t/2024-01/46_7_45_8"),
        ledger(FEB, "failed", error="validate: failed row_count_day:2024-02-03", validated_at=T0,
               validation_failed=["row_count_day:2024-02-03"], validation_path="/v/t/2024-02/46_7_45_8"),
        ledger(MAR, "loading", expver=["0001", "0005"]),
        ledger(APR, "pending", expver=None),
        ledger(date(2025, 2, 1), "loaded"),
    ]
    tasks = [
        metric(JAN, "fetch", rows=0, nbytes=50_000_000, seconds=4.0),
        metric(JAN, "stage", seconds=0.5),
        metric(JAN, "load", seconds=3.0),
        metric(JAN, "validate", seconds=1.5, detail={"success": True, "failed": [], "expected_rows": 18600}),
        metric(FEB, "load", seconds=2.5),
    ]
    loads = [
        {"month": JAN, "rows": 18600, "seconds": 6.0, "rows_per_s": 3100.0, "recorded_at": T0 - timedelta(days=1),
         "run_id": "old"},
        {"month": JAN, "rows": 18600, "seconds": 3.0, "rows_per_s": 6200.0, "recorded_at": T0, "run_id": "run_JAN"},
        {"month": FEB, "rows": 17400, "seconds": 2.5, "rows_per_s": 6960.0, "recorded_at": T0, "run_id": "run_FEB"},
        {"month": date(2025, 2, 1), "rows": 16800, "seconds": 2.0, "rows_per_s": 8400.0, "recorded_at": T0,
         "run_id": "x"},
    ]
    return report.build(
        table="weather_test", area=AREA, month_rows=months, task_rows=tasks, load_rows=loads,
        chunk_details=[chunk(d, seconds=0.05 + d / 1000) for d in range(1, 32)], selected=JAN,
        targets=[report.Target("weather_test", AREA, 5, T0), report.Target("weather", "50/5/45/10", 12, T0)],
        generated_at=T0,
    )


@pytest.fixture
def dashboard() -> report.Dashboard:
    return sample()


def parse(page: str) -> ET.Element:
    # The page is written as well-formed XHTML-compatible markup, so a strict XML parser can check it.
    body = page.split("<!doctype html>", 1)[1].replace("<meta charset=\"utf-8\">", "<meta charset=\"utf-8\"/>")
    body = re.sub(r'<meta name="viewport"[^>]*>', "", body).replace("<br>", "<br/>")
    return ET.fromstring(body)


def test_parse_month_and_slug() -> None:
    assert report.parse_month("2024-03") == MAR
    for bad in ("2024-3", "2024-13", "march", "2024-03-01"):
        with pytest.raises(report.ReportError):
            report.parse_month(bad)
    assert area_slug(AREA) == "46_7_45_8"


def test_short_numbers_and_ticks() -> None:
    assert [report.short(x) for x in (0, 980, 18600, 1_490_000, 2.5e9, None)] == ["0", "980", "18.6k", "1.49M",
                                                                                    "2.5G", "–"]
    assert [report.byte_rate(x) for x in (12.5e6, 159_000, 512)] == ["12.5 MB/s", "159 kB/s", "512 B/s"]
    assert report.nice_ticks(6960) == [0, 2000, 4000, 6000, 8000]
    assert report.nice_ticks(0) == [0.0, 1.0]
    ticks = report.nice_ticks(123_456)
    assert ticks[0] == 0 and ticks[-1] >= 123_456 and len(ticks) <= 6


def test_validation_verdicts(dashboard: report.Dashboard) -> None:
    by = {m.month: m for m in dashboard.months}
    assert by[JAN].validation.status == "passed" and by[JAN].validation.path == "/v/t/2024-01/46_7_45_8"
    assert by[FEB].validation == report.ValidationView("failed", ("row_count_day:2024-02-03",), T0,
                                                       "/v/t/2024-02/46_7_45_8")
    assert by[MAR].validation.status == "none"


def test_validation_without_the_ledger_columns_uses_figures_unless_stale() -> None:
    # The schema before the validation columns: verdict from the validate task's figures.
    fresh = report.build(table="t", area=AREA, month_rows=[ledger(JAN, "validated")], task_rows=[
        metric(JAN, "load", at=T0), metric(JAN, "validate", at=T0 + timedelta(minutes=1),
                                           detail={"success": True, "failed": []})])
    assert fresh.months[0].validation.status == "passed"
    # A reload after the validation: the old verdict no longer describes the data.
    stale = report.build(table="t", area=AREA, month_rows=[ledger(JAN, "loaded")], task_rows=[
        metric(JAN, "validate", at=T0, detail={"success": True, "failed": []}),
        metric(JAN, "load", at=T0 + timedelta(hours=1))])
    assert stale.months[0].validation.status == "none"
    failed = report.build(table="t", area=AREA, month_rows=[ledger(JAN, "failed", error="validate: failed x")])
    assert failed.months[0].validation.status == "failed"


def test_build_keeps_latest_task_figures_and_picks_a_month() -> None:
    d = report.build(table="t", area=AREA, month_rows=[ledger(JAN, "loaded"), ledger(FEB, "loaded"),
                                                       ledger(MAR, "pending")],
                     task_rows=[metric(FEB, "load", at=T0, seconds=4.0),
                                metric(FEB, "load", at=T0 + timedelta(hours=1), seconds=2.0),
                                metric(JAN, "load", at=T0)])
    # No month asked for: the latest month with a load, not the latest in the ledger.
    assert d.selected == FEB
    assert d.months[1].tasks["load"].seconds == 2.0
    empty = report.build(table="t", area=AREA, month_rows=[])
    assert empty.selected is None and empty.months == []


def test_calendar_cells_coloured_by_state(dashboard: report.Dashboard) -> None:
    root = parse(report.render_page(dashboard, base="/era5/"))
    cells = {el.get("data-month"): el for el in root.iter() if "cell" in (el.get("class") or "").split()}
    # Two years (2024, 2025) of twelve cells each, the months outside the ledger drawn empty.
    assert len(cells) == 24
    assert cells["2024-05"].get("data-state") == "" and "none" in (cells["2024-05"].get("class") or "")
    for label, state in (("2024-01", "validated"), ("2024-02", "failed"), ("2024-03", "loading"),
                         ("2024-04", "pending"), ("2025-02", "loaded")):
        cell = cells[label]
        bg, fg = report.STATE_COLOURS[state]
        assert cell.get("data-state") == state
        assert f"background:{bg};color:{fg}" in (cell.get("style") or "")
        assert state in "".join(cell.itertext())
    assert "sel" in (cells["2024-01"].get("class") or "").split()
    jan = cells["2024-01"]
    assert "18.6k / 18.6k" in "".join(jan.itertext())
    assert "expver 0001" in (jan.get("title") or "") and "validation passed" in (jan.get("title") or "")
    assert jan.get("href") == "/era5/?table=weather_test&area=46%2F7%2F45%2F8&month=2024-01"


def test_months_table_rates_validation_and_docs(dashboard: report.Dashboard) -> None:
    root = parse(report.render_page(dashboard, base="/era5/"))
    rows = {tr.get("data-month"): tr for tr in root.iter("tr") if tr.get("data-month")}
    assert list(rows) == ["2025-02", "2024-04", "2024-03", "2024-02", "2024-01"]  # newest first
    jan = rows["2024-01"]
    text = " ".join(jan.itertext())
    assert "18,600" in text and "passed" in text
    rates = {td.get("data-task"): " ".join(td.itertext()) for td in jan.iter("td") if td.get("data-task")}
    assert rates["load"].startswith("6.2k rows/s") and "3.00 s" in rates["load"]
    assert rates["fetch"].startswith("12.5 MB/s")  # a fetch moves bytes, not rows
    assert rates["validate"].startswith("12.4k rows/s")
    docs = next(a for a in jan.iter("a") if a.get("class") == "docs")
    assert docs.get("href") == "/era5/docs/weather_test/2024-01/46_7_45_8/docs/index.html"
    feb = " ".join(rows["2024-02"].itertext())
    assert "failed" in feb and "row_count_day:2024-02-03" in feb
    mar = rows["2024-03"]
    assert "ERA5T" in " ".join(mar.itertext()) and not any(a.get("class") == "docs" for a in mar.iter("a"))


def test_chunk_chart_has_a_bar_per_chunk(dashboard: report.Dashboard) -> None:
    svg = ET.fromstring(report.chunk_chart(dashboard.chunks, 6200.0, "2024-01"))
    ns = "{http://www.w3.org/2000/svg}"
    bars = svg.findall(f"{ns}rect")
    assert len(bars) == 31
    heights = [float(b.get("height") or 0) for b in bars]
    assert heights == sorted(heights, reverse=True)  # chunk seconds grow with the day in the fixture
    assert [b.get("data-rate") for b in bars][:2] == ["11765", "11538"]
    tip = bars[0].findtext(f"{ns}title") or ""
    assert "2024-01-01 00:00" in tip and "COPY 0.04 s" in tip
    assert svg.find(f"{ns}line[@class='avg']") is not None
    assert "No chunk figures" in report.chunk_chart([], None, "2024-05")


def test_month_rate_chart_latest_and_superseded_loads(dashboard: report.Dashboard) -> None:
    svg = ET.fromstring(report.month_rate_chart(dashboard.load_runs, JAN))
    ns = "{http://www.w3.org/2000/svg}"
    points = svg.findall(f"{ns}circle")
    assert [(p.get("data-month"), p.get("class")) for p in points] == [
        ("2024-01", "pt old"), ("2024-01", "pt sel"), ("2024-02", "pt"), ("2025-02", "pt")]
    # Jan and Feb 2024 are joined; the twelve-month gap to 2025-02 breaks the line.
    lines = svg.findall(f"{ns}polyline")
    assert len(lines) == 1 and len((lines[0].get("points") or "").split()) == 2
    xs = [float(p.get("cx") or 0) for p in points]
    assert xs[0] == xs[1] < xs[2] < xs[3]
    assert "No loads" in report.month_rate_chart([], None)


def test_page_escapes_ledger_text() -> None:
    d = report.build(table="t<b>", area=AREA, month_rows=[ledger(JAN, "failed", error="load: <script>x</script>")])
    page = report.render_page(d)
    assert "<script>" not in page and "&lt;script&gt;" in page and "t&lt;b&gt;" in page
    parse(page)


def test_empty_dashboard_page() -> None:
    page = report.render_page(report.Dashboard(table=None, area=None))
    assert "No months in the ledger yet" in page
    parse(page)


def test_json(dashboard: report.Dashboard) -> None:
    data = report.to_json(dashboard, base="/era5/")
    assert data["table"] == "weather_test" and data["selected_month"] == "2024-01"
    jan = data["months"][0]
    assert jan["month"] == "2024-01" and jan["state"] == "validated" and jan["rows"] == 18600
    assert jan["validation"]["docs_url"] == "/era5/docs/weather_test/2024-01/46_7_45_8/docs/index.html"
    assert jan["tasks"]["load"]["rows_per_s"] == 6200.0
    assert len(data["chunks"]) == 31 and data["chunks"][0]["rows"] == 600
    assert [r["run_id"] for r in data["load_runs"]][:2] == ["old", "run_JAN"]
    assert data["months"][3]["validation"]["docs_url"] is None  # 2024-04 has no validation path


def test_docs_files_stay_inside_the_validation_folder(tmp_path: Path) -> None:
    folder = tmp_path / "weather" / "2024-01" / "46_7_45_8"
    (folder / "docs" / "validations").mkdir(parents=True)
    (folder / "docs" / "index.html").write_text("<html>index</html>")
    (folder / "docs" / "validations" / "run.html").write_text("run")
    (folder / "result.json").write_text("{}")
    (tmp_path / "secret.txt").write_text("no")
    assert report.docs_root(str(folder)) == (folder, "docs/index.html")
    assert report.docs_file(str(folder), "") == (folder / "docs" / "index.html").resolve()
    assert report.docs_file(str(folder), "docs/") == (folder / "docs" / "index.html").resolve()
    assert report.docs_file(str(folder), "docs/validations/run.html") is not None
    assert report.docs_file(str(folder), "result.json") is not None
    assert report.docs_file(str(folder), "../../../secret.txt") is None
    assert report.docs_file(str(folder), "docs/missing.html") is None
    # A path to the Data Docs page itself serves its folder.
    index = folder / "docs" / "index.html"
    assert report.docs_root(str(index)) == (index.parent, "index.html")
    assert report.docs_file(str(index), "validations/run.html") is not None
    assert report.docs_href("/era5/", "weather", JAN, AREA, str(folder)) == (
        "/era5/docs/weather/2024-01/46_7_45_8/docs/index.html")
