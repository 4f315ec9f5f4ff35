"""The figures reported: the targets and how the measurements compare with them, the printed summary,
and the chart (matplotlib)."""

from __future__ import annotations

import resource
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from era5bench.comparison import KINDS, Result, format_table
from era5bench.downloads import CACHE_DIR
from era5bench.methods import BLOG
from era5bench.tables import durable

DEFAULT_CHART = CACHE_DIR / "ingest.png"
TARGET_ROWS_PER_S = 1_200_000
TARGET_X_DOWNLOAD = 1.5
TARGET_MIN_ROWS = 100_000_000
TARGET_RATIO_VS_BLOG = 10.0
TARGET_RSS_MB = 1024.0
TARGET_TENTH_BAND = 0.2


def write_chart(path: Path, results: Sequence[Result], sustained: dict[str, Any] | None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    configs = list(dict.fromkeys((r.method, r.batch) for r in results))
    by_key = {(r.method, r.batch, r.kind): r for r in results}
    label = {r.method: r.label for r in results}
    heights = ([max(len(configs), 1)] if results else []) + ([6] if sustained else [])
    fig, axes = plt.subplots(len(heights), 1, squeeze=False, gridspec_kw={"height_ratios": heights},
                             figsize=(11, 0.45 * len(configs) + 2.5 + (3.5 if sustained else 0)))
    if results:
        ax = axes[0][0]
        kinds = [k for k in KINDS if any(r.kind == k for r in results)]
        h = 0.8 / max(len(kinds), 1)
        for j, kind in enumerate(kinds):
            med, lo, hi, ys = [], [], [], []
            for i, (m, b) in enumerate(configs):
                r = by_key.get((m, b, kind))
                if r is None or r.median <= 0:
                    continue
                ys.append(i + (j - (len(kinds) - 1) / 2) * h)
                med.append(r.median)
                lo.append(r.median - r.min)
                hi.append(r.max - r.median)
            ax.barh(ys, med, height=h, xerr=[lo, hi], capsize=2, label=kind)
        ax.set_yticks(np.arange(len(configs)), [label[m] + (f" [{b:,}]" if b else "") for m, b in configs],
                      fontsize=8)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel("rows/s (median of repeats; bars min..max; [rows per batch])")
        ax.set_title(f"Ingest into PostgreSQL/TimescaleDB, {max(r.rows for r in results):,} ERA5-shaped rows"
                     " (single-row INSERT: fewer, see the table)")
        ax.grid(axis="x", which="both", alpha=0.3)
        ax.legend(loc="lower right")
    if sustained:
        ax2 = axes[-1][0]
        rates = [t["rows_per_s"] for t in sustained["tenths"]]
        ax2.bar(range(1, 11), rates, color="tab:green")
        ax2.axhline(TARGET_ROWS_PER_S, color="tab:red", linestyle="--", label=f"target {TARGET_ROWS_PER_S:,}/s")
        ax2.set_xticks(range(1, 11))
        ax2.set_xlabel("tenth of the rows")
        ax2.set_ylabel("rows/s")
        ax2.set_title(f"End to end (era5etl.load), {sustained['rows']:,} rows: {sustained['rows_per_s']:,} rows/s")
        ax2.legend(loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def summarize(results: Sequence[Result], sustained: dict[str, Any] | None, settings: dict[str, str]
              ) -> dict[str, Any]:
    """The headline figures and the targets, each with what it was measured on."""
    def median_of(method: str) -> float | None:
        for r in results:
            if r.method == method and r.kind == "hypertable" and r.median > 0:
                return r.median
        return None

    if sustained:
        e2e: float | None = sustained["rows_per_s"]
        e2e_on = f"sustained load of {sustained['rows']:,} rows"
        blog: float | None = sustained["blog"]["rows_per_s"]
        blog_copy: float | None = sustained["blog"].get("copy_rows_per_s")
        blog_on = f"first {sustained['blog']['rows']:,} rows of the sustained data"
        rss = sustained["client_peak_rss_mb"]
        tenth = sustained["last_tenth_vs_first_tenth"]
    else:
        e2e, blog = median_of("end_to_end"), median_of(BLOG)
        blog_copy = None
        e2e_on = blog_on = "comparison rows, hypertable, median"
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        tenth = None
    ratio = e2e / blog if e2e and blog else None
    ratio_copy = e2e / blog_copy if e2e and blog_copy else None
    sustained_rows = sustained["rows"] if sustained else 0
    # None: not checked. The targets are about the sustained load; a comparison alone checks only the ratio.
    on_sustained = None if not sustained else True
    targets = {
        "end_to_end_rows_per_s": {
            "target": f">= {TARGET_ROWS_PER_S:,} over >= {TARGET_MIN_ROWS:,} rows, durable settings",
            "met": on_sustained and bool(e2e and e2e >= TARGET_ROWS_PER_S and sustained_rows >= TARGET_MIN_ROWS
                                         and durable(settings) and sustained and sustained.get("logged"))},
        "ratio_vs_blog": {"target": f">= {TARGET_RATIO_VS_BLOG:g}",
                          "met": None if ratio is None else ratio >= TARGET_RATIO_VS_BLOG},
        "client_peak_rss_mb": {"target": f"<= {TARGET_RSS_MB:g}", "met": on_sustained and rss <= TARGET_RSS_MB},
        "last_tenth_vs_first_tenth": {"target": f"{1 - TARGET_TENTH_BAND:g}..{1 + TARGET_TENTH_BAND:g}",
                                      "met": on_sustained and bool(tenth and abs(tenth - 1) <= TARGET_TENTH_BAND)},
    }
    return {
        "end_to_end_rows_per_s": round(e2e) if e2e else None, "end_to_end_measured_on": e2e_on,
        "blog_path_rows_per_s": round(blog) if blog else None, "blog_path_measured_on": blog_on,
        "ratio_vs_blog": round(ratio, 3) if ratio else None,
        # The post's copy_timer: its write_row loop without building each hour's frame.
        "blog_copy_loop_rows_per_s": round(blog_copy) if blog_copy else None,
        "ratio_vs_blog_copy_loop": round(ratio_copy, 3) if ratio_copy else None,
        "client_peak_rss_mb": round(rss, 1),
        "last_tenth_vs_first_tenth": tenth,
        "durable_settings": durable(settings),
        "targets": targets,
    }


def print_comparison(results: Sequence[Result], comparison: dict[str, Any], methods: Sequence[str]) -> None:
    """The comparison's table, and on how many rows single-row INSERT was timed."""
    print(format_table(results))
    if comparison["single_row_insert_rows"] < comparison["rows"] and "insert_row" in methods:
        print(f"single-row INSERT loaded the first {comparison['single_row_insert_rows']:,} rows only; "
              "its rate is the one measured on those")


def print_sustained(sustained: dict[str, Any], summary: dict[str, Any]) -> None:
    """The sustained load's rate, per tenth, its peak RSS, and the blog's path on the same data."""
    print(f"\nend to end (era5etl.load): {sustained['rows']:,} rows in {sustained['seconds']:,.1f} s = "
          f"{sustained['rows_per_s']:,} rows/s; client peak RSS {sustained['client_peak_rss_mb']:,.0f} MB "
          f"(psutil {sustained['psutil_peak_rss_mb']:,.0f} MB)")
    print("per tenth (rows/s): " + ", ".join(f"{t['rows_per_s']:,}" for t in sustained["tenths"]))
    print(f"blog's path on the same data: {sustained['blog']['rows_per_s']:,} rows/s "
          f"({sustained['blog']['rows']:,} rows; the post's loader timer: frame, COPY, commit); its "
          f"write_row COPY alone (the post's copy_timer): {sustained['blog']['copy_rows_per_s']:,} rows/s")
    if summary["ratio_vs_blog_copy_loop"]:
        print(f"end to end vs the blog's COPY loop alone: {summary['ratio_vs_blog_copy_loop']:.2f}x")


def print_layouts(figures: dict[str, Any]) -> None:
    """The storage layouts' table, the columnstore against the server alone, and the storage target."""
    from era5bench.layouts import format_layouts

    print(f"\nlayouts: {figures['rows']:,} rows from {Path(figures['download']).name} "
          f"({figures['download_bytes'] / 1e6:,.1f} MB downloaded); reads: median of 5 warm runs")
    print(format_layouts(figures))
    by = {f["layout"]: f for f in figures["layouts"]}
    col, server = by.get("columnstore"), by.get("server alone")
    if col and server and "rows_per_s" in server:
        ratio = col["rows_per_s"] / server["rows_per_s"]
        print(f"columnstore load vs the server alone (COPY from files on the server, {server['writers']} at once): "
              f"{col['rows_per_s']:,} / {server['rows_per_s']:,} rows/s = {ratio:.2f}")
    if col and col.get("column_bytes_per_row"):
        print("columnstore bytes a row by column: " + ", ".join(
            f"{c} {b}" for c, b in col["column_bytes_per_row"].items()))
    if col:
        verdict = "met" if col["x_download"] <= TARGET_X_DOWNLOAD else "NOT met"
        print(f"target storage: {col['x_download']}x the download (want <= {TARGET_X_DOWNLOAD}): {verdict}")
        for name, p in figures.get("projection", {}).items():
            where = "global" if name == "global" else f"area {p.get('name', '')}"
            print(f"1940-now, {where}: {p['rows']:,} rows, {p['bytes'] / 1e12:,.3f} TB in the columnstore, "
                  f"~{p['load_hours']:,} h of loading at {col['rows_per_s']:,} rows/s")


def print_targets(summary: dict[str, Any], settings: dict[str, str]) -> None:
    """The server's durability settings, then each target with its figure and whether it is met."""
    fmt = {"ratio_vs_blog": "{:.2f}x", "last_tenth_vs_first_tenth": "{:.3f}"}
    print(f"\nsettings: fsync={settings.get('fsync')} synchronous_commit={settings.get('synchronous_commit')} "
          f"full_page_writes={settings.get('full_page_writes')}")
    for name, t in summary["targets"].items():
        value = summary[name]
        shown = "-" if value is None else fmt.get(name, "{:,}").format(value)
        verdict = "not checked (needs --sustained)" if t["met"] is None else "met" if t["met"] else "NOT met"
        print(f"target {name}: {shown} (want {t['target']}): {verdict}")
