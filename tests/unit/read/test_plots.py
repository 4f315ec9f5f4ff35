"""Series and maps drawn to PNG files without a display (Agg)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from era5etl.read.columns import ROLLUP_VALUES, resolve
from era5etl.read.maps import HourMap
from era5etl.read.plots import plot_map, plot_series
from era5etl.read.points import Point
from era5etl.read.series import Series

PNG = b"\x89PNG\r\n\x1a\n"


def _series(step: str, n: int, columns: list[str]) -> Series:
    unit = {"hour": "h", "day": "D", "month": "M"}[step]
    times = np.arange(np.datetime64("2024-01-01", unit), np.datetime64("2024-01-01", unit) + n).astype("datetime64[us]")
    rng = np.random.default_rng(4)
    values = {c: rng.gamma(0.5, 2, n).astype(np.float32) for c in columns}
    values[columns[0]][n // 2] = np.nan  # a NULL in the table: a gap, not a failure
    return Series(Point(778348, 45.0, 7.0, 1.2), step, columns, times, values)


def _is_png(path: Path) -> None:
    assert path.read_bytes()[:8] == PNG and path.stat().st_size > 10_000


@pytest.mark.parametrize(("step", "n", "columns"), [
    ("hour", 744, resolve("hour", None)),
    ("hour", 8_784, ["total_precipitation", "snowfall"]),  # past MAX_BARS: a filled step line
    ("day", 366, list(ROLLUP_VALUES)),
    ("month", 24, ["temperature_2m_mean", "total_precipitation_sum"]),
    ("day", 1, ["snowfall_sum"]),
])
def test_a_series_is_drawn(tmp_path: Path, step: str, n: int, columns: list[str]) -> None:
    out = plot_series(_series(step, n, columns), tmp_path / "s.png")
    _is_png(out)


def test_a_map_is_drawn_on_its_lattice(tmp_path: Path) -> None:
    lat, lon = np.meshgrid(np.arange(40, 50.01, 0.5), np.arange(-5, 10.01, 0.5), indexing="ij")  # a 0.5 grid
    values = (lat + lon).astype(np.float32).ravel()
    values[:7] = np.nan
    m = HourMap(datetime(2024, 1, 1, 5, tzinfo=UTC), "temperature_2m", lat.ravel().astype(np.float32),
                lon.ravel().astype(np.float32), values)
    _is_png(plot_map(m, tmp_path / "m.png"))
    one = HourMap(m.time, "total_precipitation", m.latitude[:1], m.longitude[:1], m.values[-1:])
    assert plot_map(one, tmp_path / "one.png").read_bytes()[:8] == PNG
