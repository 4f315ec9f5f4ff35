"""The climate signal as a PNG: each complete year's anomaly against the baseline as a bar (warm red,
cold blue; for an accumulation wet blue, dry brown), the OLS trend as a line through them, partial
years left blank and named (matplotlib's Agg, as ``read.plots``)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from era5etl.read.climate import year_ranges


def plot_climate(summary: dict[str, Any], title: str, path: str | Path) -> Path:
    """Anomaly bars and the trend line of a climate summary (``read.climate_read.point_climate``)."""
    years = np.array([r["year"] for r in summary["years"]])
    anomaly = np.array([np.nan if r["anomaly"] is None else r["anomaly"] for r in summary["years"]])
    total = summary["statistic"] == "total"
    up, down = ("#2166ac", "#8c510a") if total else ("#b2182b", "#2166ac")
    fig = Figure(figsize=(10, 4.2), dpi=100)
    ax = fig.add_subplot()
    ax.bar(years, np.nan_to_num(anomaly), color=np.where(anomaly >= 0, up, down), width=0.85)
    trend = summary["trend_per_decade"]
    base = summary["baseline"]
    if trend["ols"] is not None:
        finite = np.isfinite(anomaly)
        x, y = years[finite], anomaly[finite]
        slope = trend["ols"] / 10
        intercept = float(np.mean(y) - slope * np.mean(x))
        ax.plot(x, intercept + slope * x, color="black", lw=1.5,
                label=f"trend {trend['ols']:+.3g} {summary['unit']} per decade "
                      f"(95%: {trend['ci95'][0]:+.3g} to {trend['ci95'][1]:+.3g}; Theil-Sen {trend['theil_sen']:+.3g})")
        ax.legend(loc="upper left", fontsize=8)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_ylabel(f"anomaly ({summary['unit']}) vs {base[0]}-{base[1]}")
    ax.set_title("\n".join(part for line in title.splitlines() for part in textwrap.wrap(line, 110)), fontsize=9)
    partial = [r["year"] for r in summary["years"] if r["partial"]]
    if partial:
        fig.text(0.01, 0.01, f"partial years, no bar: {year_ranges(partial)}", fontsize=7)
    fig.tight_layout()
    target = Path(path)
    fig.savefig(target, format="png")
    return target


__all__ = ["plot_climate"]
