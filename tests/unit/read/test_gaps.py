"""Steps without rows: found between the rows a series has, named as months where whole, and made a
NaN row so a drawn line breaks there (the PNGs of ``series --png``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure

from era5etl.read.gaps import gap_text, gaps, with_gaps
from era5etl.read.plots import plot_series
from era5etl.read.points import Point
from era5etl.read.series import Series


def _days(*spans: tuple[str, str]) -> np.ndarray:
    return np.concatenate([np.arange(np.datetime64(a), np.datetime64(b) + 1, dtype="datetime64[D]")
                           for a, b in spans]).astype("datetime64[us]")


def _series(times: np.ndarray, step: str) -> Series:
    n = times.size
    values = {"temperature_2m_mean": np.linspace(-5, 20, n, dtype=np.float32),
              "total_precipitation_sum": np.full(n, 1.5, dtype=np.float32), "hours": np.full(n, 24, np.int64)}
    return Series(Point(1, 47.5, 7.5, 0.0), step, list(values), times, values)


def test_daily_gap_of_whole_years() -> None:
    t = _days(("2000-01-01", "2002-01-31"), ("2024-01-01", "2024-01-31"))
    found = gaps(t, "day")
    assert found == [(np.datetime64("2002-02-01", "us"), np.datetime64("2023-12-31", "us"))]
    assert gap_text(found, "day") == ["2002-02 to 2023-12"]
    assert gaps(_days(("2024-01-01", "2024-03-31")), "day") == []


def test_gaps_at_each_step() -> None:
    months = np.array(["2024-01", "2024-02", "2024-05"], dtype="datetime64[M]").astype("datetime64[us]")
    assert gap_text(gaps(months, "month"), "month") == ["2024-03 to 2024-04"]
    days = _days(("2024-01-01", "2024-01-10"), ("2024-01-12", "2024-01-20"))
    assert gap_text(gaps(days, "day"), "day") == ["2024-01-11"]
    hours = np.array(["2024-01-01T00", "2024-01-01T01", "2024-01-01T05"], dtype="datetime64[h]").astype(
        "datetime64[us]")
    assert gap_text(gaps(hours, "hour"), "hour") == ["2024-01-01 02:00 UTC to 2024-01-01 04:00 UTC"]
    whole = np.array(["2024-01-31T23", "2024-03-01T00"], dtype="datetime64[h]").astype("datetime64[us]")
    assert gap_text(gaps(whole, "hour"), "hour") == ["2024-02"]


def test_with_gaps_puts_one_nan_row_at_each_gap() -> None:
    t = _days(("2000-01-01", "2000-01-31"), ("2000-04-01", "2000-04-30"), ("2000-06-01", "2000-06-30"))
    s = with_gaps(_series(t, "day"))
    assert s.time.size == t.size + 2
    nan = np.flatnonzero(np.isnan(s.values["temperature_2m_mean"]))
    assert s.time[nan].astype("datetime64[D]").astype(str).tolist() == ["2000-02-01", "2000-05-01"]
    assert np.isnan(s.values["total_precipitation_sum"][nan]).all() and (s.values["hours"][nan] == 0).all()
    assert bool(np.all(s.time[1:] > s.time[:-1]))
    # Rows kept as they were, in order.
    kept = np.setdiff1d(np.arange(s.time.size), nan)
    assert np.array_equal(s.time[kept], t)
    assert np.array_equal(s.values["temperature_2m_mean"][kept], _series(t, "day").values["temperature_2m_mean"])
    unchanged = _series(_days(("2000-01-01", "2000-01-31")), "day")
    assert with_gaps(unchanged) is unchanged


def test_the_png_line_breaks_at_the_gap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What matplotlib is handed: the line's data has a NaN at the gap, so it is drawn in two pieces,
    and the missing months are written under the panels."""
    t = _days(("2000-01-01", "2002-01-31"), ("2024-01-01", "2024-01-31"))
    drawn: list[Figure] = []
    save = Figure.savefig

    def keep(fig: Figure, *args: object, **kwargs: object) -> None:
        drawn.append(fig)
        save(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    out = plot_series(_series(t, "day"), tmp_path / "gap.png")
    assert out.read_bytes()[:4] == b"\x89PNG"
    fig = drawn[0]
    line = fig.axes[0].get_lines()[0]
    y = np.asarray(line.get_ydata(), dtype=float)
    assert y.size == t.size + 1 and int(np.isnan(y).sum()) == 1
    # matplotlib's own path of the line: two pieces, a MOVETO starting each.
    path = line.get_path().cleaned(remove_nans=True)
    assert int((path.codes == path.MOVETO).sum()) == 2
    assert fig.get_supxlabel() == "no rows: 2002-02 to 2023-12"
