"""The climate signal drawn to a PNG (read.climate_plot), read back pixel by pixel with matplotlib's own
PNG reader: warm anomalies red and cold ones blue, for an accumulation wet blue and dry brown, no bar
for a partial year, and a trend line only when there is a trend."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from matplotlib import image

from era5etl.read.climate_plot import plot_climate

RED, BLUE, BROWN = (0xB2, 0x18, 0x2B), (0x21, 0x66, 0xAC), (0x8C, 0x51, 0x0A)


def summary(anomalies: list[float | None], statistic: str = "mean", trend: float | None = 0.2) -> dict[str, Any]:
    years = [{"year": 1991 + i, "anomaly": a, "partial": a is None} for i, a in enumerate(anomalies)]
    return {"years": years, "statistic": statistic, "unit": "degC" if statistic == "mean" else "mm",
            "baseline": (1991, 2000),
            "trend_per_decade": {"ols": trend, "ci95": (0.1, 0.3), "theil_sen": 0.19} if trend is not None else
            {"ols": None, "ci95": None, "theil_sen": None}}


def pixels(path: Path, colour: tuple[int, int, int]) -> int:
    rgb = np.round(image.imread(path)[..., :3] * 255).astype(int)
    return int((np.abs(rgb - np.array(colour)).sum(axis=-1) <= 6).sum())


def test_warm_years_are_red_and_cold_ones_blue(tmp_path: Path) -> None:
    warm = plot_climate(summary([0.5, 0.8, 1.0]), "warm", tmp_path / "warm.png")
    cold = plot_climate(summary([-0.5, -0.8, -1.0]), "cold", tmp_path / "cold.png")
    assert pixels(warm, RED) > 1000 and pixels(warm, BLUE) == 0
    assert pixels(cold, BLUE) > 1000 and pixels(cold, RED) == 0


def test_an_accumulation_is_wet_blue_and_dry_brown(tmp_path: Path) -> None:
    wet = plot_climate(summary([5.0, 8.0], "total"), "wet", tmp_path / "wet.png")
    dry = plot_climate(summary([-5.0, -8.0], "total"), "dry", tmp_path / "dry.png")
    assert pixels(wet, BLUE) > 1000 and pixels(wet, BROWN) == 0
    assert pixels(dry, BROWN) > 1000 and pixels(dry, BLUE) == 0


def test_a_partial_year_has_no_bar_and_no_trend_draws_no_line(tmp_path: Path) -> None:
    whole = plot_climate(summary([0.6, 0.6, 0.6], trend=None), "three", tmp_path / "three.png")
    one_partial = plot_climate(summary([0.6, None, 0.6], trend=None), "two", tmp_path / "two.png")
    assert 0 < pixels(one_partial, RED) < pixels(whole, RED)
    with_trend = plot_climate(summary([0.6, 0.6, 0.6]), "trend", tmp_path / "trend.png")
    black = pixels(with_trend, (0, 0, 0)) - pixels(whole, (0, 0, 0))
    assert black > 100  # the trend line (and its legend's)
