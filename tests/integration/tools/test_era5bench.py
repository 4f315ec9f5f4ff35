"""`python -m era5bench` against the real TimescaleDB, on a few hundred rows: every method is reported with the
rows its table holds, and every method loads the same rows the product's binary COPY does."""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pytest

from era5bench.comparison import format_table, run_comparison
from era5bench.downloads import FIRST_DAY, cached_download, comparison_download, day_request
from era5bench.methods import METHODS, Context
from era5bench.report import summarize
from era5bench.rows import read_rows
from era5bench.sustained import run_sustained
from era5bench.tables import create_table, drop_table, server_settings
from era5etl.core.variables import DATA_COLUMNS
from era5etl.db import connect

ROWS, DAYS = 600, 2  # 13 points x 48 hours: two days, so the parallel COPY gets a day per worker


@pytest.fixture(scope="module")
def download(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return comparison_download(ROWS, DAYS, tmp_path_factory.mktemp("bench"))


@pytest.fixture(scope="module")
def ctx(db_url: str, download: Path) -> Context:
    return Context(db_url, read_rows([download]), [download], workers=2, single_rows=200)


def contents(url: str, table: str) -> list[tuple[object, ...]]:
    floats = ", ".join(f"{c}::float8" for c in ("latitude", "longitude", *DATA_COLUMNS))
    with connect(url) as conn:
        return conn.execute(f"SELECT time, location_id, {floats} FROM {table} ORDER BY time, location_id").fetchall()


def test_each_method_reports_the_rows_its_table_holds(db_url: str, ctx: Context) -> None:
    assert len(ctx.rows) == 624 and len(ctx.rows.day_ranges()) == DAYS
    run_id = uuid.uuid4().hex[:8]
    results = run_comparison(db_url, ctx, batch_sizes=(250,), repeat=1, flush=False, run_id=run_id)
    # run_comparison itself fails when a table's count(*) differs from what the method reported.
    seen = {(r.method, r.kind) for r in results}
    assert seen == {(m.name, k) for m in METHODS for k in m.kinds}
    for r in results:
        assert r.rows == (200 if r.method == "insert_row" else 624), r
        assert len(r.seconds) == 1 and r.median > 0
    assert "x blog" in format_table(results)
    with connect(db_url) as conn:
        left = conn.execute("SELECT count(*) FROM pg_tables WHERE starts_with(tablename, %s)",
                            (f"bench_{run_id}",)).fetchone()
    assert left is not None and left[0] == 0, "the bench's tables are dropped afterwards"


def test_every_method_loads_the_same_rows_as_binary_copy(db_url: str, ctx: Context) -> None:
    full = Context(ctx.url, ctx.rows, ctx.paths, workers=2, single_rows=len(ctx.rows))
    prefix = f"bench_t{uuid.uuid4().hex[:6]}"
    template = f"{prefix}_tpl"
    create_table(db_url, template, "hypertable", template, bare=True)
    try:
        tables = {}
        for m in METHODS:
            tables[m.name] = f"{prefix}_{m.name}"
            create_table(db_url, tables[m.name], "hypertable", template, bare=m.bare)
            assert m.fn(full, tables[m.name], 100) == len(ctx.rows)
        want = contents(db_url, tables["binary_copy"])
        assert len(want) == len(ctx.rows)
        for name, table in tables.items():
            assert contents(db_url, table) == want, f"{name} loaded different rows"
    finally:
        for table in [template, *(f"{prefix}_{m.name}" for m in METHODS)]:
            drop_table(db_url, table)


def test_sustained_reports_rate_per_tenth_and_the_loaders_peak_rss(db_url: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    area = (50.0, 5.0, 49.0, 6.0)  # 5 x 5 points: 2,010 rows are 81 whole hours, 4 day files (the last cut)
    # A chunk a day, as global days get (a month this small would otherwise be one chunk).
    monkeypatch.setenv("ERA5_CHUNK_ROWS", "0")
    out = run_sustained(db_url, 2010, area=area, cache_dir=tmp_path)
    assert out["rows"] == 81 * 25 and len(out["files"]) == 4
    assert len(out["tenths"]) == 10 and all(t["rows_per_s"] > 0 for t in out["tenths"])
    assert out["last_tenth_vs_first_tenth"] == pytest.approx(
        out["tenths"][-1]["rows_per_s"] / out["tenths"][0]["rows_per_s"], rel=1e-3)
    assert 0 < out["client_peak_rss_mb"] < 1024 and out["psutil_peak_rss_mb"] > 0
    assert out["logged"] and out["chunk_count"] == 4 and out["blog"]["rows"] == 25
    assert out["rows_per_s"] == pytest.approx(out["rows"] / out["seconds"], rel=1e-2)
    np.testing.assert_array_less(0, [c["rows"] for c in out["chunks"]])
    summary = summarize([], out, server_settings(db_url))
    assert summary["end_to_end_rows_per_s"] == out["rows_per_s"]
    assert summary["targets"]["end_to_end_rows_per_s"]["met"] is False  # far fewer than 100M rows


def test_layouts_compare_the_same_rows_in_every_layout(db_url: str, tmp_path: Path) -> None:
    from era5bench.layouts import format_layouts, projection, run_layouts

    path = cached_download(day_request([FIRST_DAY], (50.0, 5.0, 48.0, 7.0)), tmp_path)

    def bench_tables() -> set[str]:
        with connect(db_url) as conn:
            return {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE tablename LIKE 'bench\\_%%'")}

    before = bench_tables()
    figures = run_layouts(db_url, path, runs=1)
    by = {f["layout"]: f for f in figures["layouts"]}
    assert set(by) == {"plain", "hypertable", "compressed", "columnstore", "server alone"}
    rows = 24 * 9 * 9
    for name in ("plain", "hypertable", "compressed", "columnstore"):
        f = by[name]
        assert f["rows"] == rows and f["total_bytes"] > 0 and f["rows_per_s"] > 0
        assert f["place_history"]["rows"] == 24 and f["hour_slice"]["rows"] == 81
    # The row store keeps indexes; the columnstore keeps no index of the loader's and is smaller.
    assert by["hypertable"]["index_bytes"] > 0
    assert by["columnstore"]["total_bytes"] < by["hypertable"]["total_bytes"]
    per_column = by["columnstore"]["column_bytes_per_row"]
    assert set(per_column) == {"time", "location_id", "latitude", "longitude", *DATA_COLUMNS}
    assert 0 < sum(per_column.values()) < by["columnstore"]["bytes_per_row"]
    assert by["server alone"]["rows"] == rows and by["server alone"]["writers"] == 1
    plan = projection(figures, 441)
    assert plan["global"]["rows"] == 1_038_240 * 727_080 and plan["area"]["points"] == 441
    assert "columnstore" in format_layouts(figures)
    assert bench_tables() == before, "the layouts' tables are dropped afterwards"
