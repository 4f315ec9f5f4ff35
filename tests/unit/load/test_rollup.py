"""The loader's rollup arithmetic (load.rollup) against numpy's own reductions of the same hours:
blocks of one hour (a global grid: folded in place) and blocks of many days (a few points over
decades: reduceat), NULL hours, a variable absent from the download, a day cut by the load, the wind
speed, and the monthly sums of the days."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

from era5etl.core.rollups import rolled_up
from era5etl.core.variables import DATA_COLUMNS
from era5etl.load.rollup import MonthlyRollup, Points, WindowRollup

P = 7
START = np.datetime64("2024-02-27T00", "s")


class Recorded(WindowRollup):
    """The rollup rows as values instead of COPY bytes."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.rows: dict[np.datetime64, dict[str, np.ndarray]] = {}

    def _emit(self, days: np.ndarray, partial: Any) -> None:
        values = partial.values(self.rolled)
        for i, day in enumerate(days):
            self.rows[day] = {"hours": partial.hours[i], **{c: v[i] for c, v in values.items()}}


def _data(hours: int, seed: int = 0) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    times = START + np.arange(hours) * np.timedelta64(3600, "s")
    values = {c: rng.normal(5, 10, (hours, P)).astype(np.float32) for c in DATA_COLUMNS if c != "snowfall"}
    values["total_cloud_cover"][rng.random((hours, P)) < 0.2] = np.nan  # NULL hours
    values["total_cloud_cover"][:, 0] = np.nan  # a point NULL all along
    return times, values


def _feed(times: np.ndarray, values: dict[str, np.ndarray], hours_a_block: int, load: slice) -> Recorded:
    points = Points(np.arange(P, dtype=np.int32), np.zeros(P, np.float32))
    window = Recorded(times[load].astype(np.int64), points, DATA_COLUMNS, MonthlyRollup())
    t = times[load]
    v = {c: a[load] for c, a in values.items()}
    for a in range(0, len(t), hours_a_block):
        window.add(t[a:a + hours_a_block], {c: x[a:a + hours_a_block] for c, x in v.items()})
    window.close()
    return window


def _expected(times: np.ndarray, values: dict[str, np.ndarray], day: np.datetime64) -> dict[str, np.ndarray]:
    """The day's rollup row by numpy's NaN-skipping reductions in float8 (NULL where every hour is)."""
    at = times.astype("datetime64[D]") == day
    out: dict[str, np.ndarray] = {"hours": np.full(P, at.sum())}
    u, v = (values[c][at].astype(np.float64) for c in ("zonal_wind_10m", "meridional_wind_10m"))
    series = {**{c: values[c][at].astype(np.float64) for c in values}, "wind_speed_10m": np.sqrt(u * u + v * v)}
    for variable, aggs in rolled_up(DATA_COLUMNS).items():
        if variable not in series:
            continue
        x = series[variable]
        none = np.isnan(x).all(axis=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a point NULL every hour: nanmean's warning
            for agg in aggs:
                got = {"min": np.nanmin, "max": np.nanmax, "mean": np.nanmean, "sum": np.nansum}[agg](x, axis=0)
                out[f"{variable}_{agg}"] = np.where(none, np.nan, got).astype(np.float32)
    return out


@pytest.mark.parametrize("hours_a_block", [1, 5, 24, 96])
def test_daily_rows_equal_numpys_reductions_whatever_the_blocks(hours_a_block: int) -> None:
    times, values = _data(96)  # four whole days, 2024-02-27 .. 03-01
    with np.errstate(all="ignore"):
        window = _feed(times, values, hours_a_block, slice(None))
        assert sorted(window.rows) == [np.datetime64(f"2024-{d}", "D") for d in ("02-27", "02-28", "02-29", "03-01")]
        for day, row in window.rows.items():
            want = _expected(times, values, day)
            assert set(row) == set(want)
            assert (row["hours"] == 24).all()
            for column, value in want.items():
                if column.endswith(("_min", "_max")) or column == "hours":
                    np.testing.assert_array_equal(row[column], value, err_msg=column)
                else:
                    np.testing.assert_allclose(row[column], value, rtol=1e-6, err_msg=column)
        # snowfall is not in the download: its sum is NULL; point 0's cloud cover is NULL every hour.
        assert "snowfall_sum" not in window.rows[np.datetime64("2024-02-27", "D")]
        assert np.isnan(window.rows[np.datetime64("2024-02-27", "D")]["total_cloud_cover_mean"][0])


def test_one_hour_blocks_and_many_day_blocks_give_the_same_rows_and_months() -> None:
    times, values = _data(96, seed=3)
    with np.errstate(all="ignore"):
        hourly, daily = _feed(times, values, 1, slice(None)), _feed(times, values, 96, slice(None))
    assert hourly.rows.keys() == daily.rows.keys()
    for day in hourly.rows:
        for column in hourly.rows[day]:
            np.testing.assert_allclose(hourly.rows[day][column], daily.rows[day][column], rtol=1e-12, err_msg=column)
    # February's three days and March's one, summed per month in both.
    assert sorted(hourly.monthly.months) == sorted(daily.monthly.months) == [
        np.datetime64("2024-02", "M"), np.datetime64("2024-03", "M")]
    feb = np.datetime64("2024-02", "M")
    assert (hourly.monthly.months[feb].hours == 72).all()
    np.testing.assert_allclose(hourly.monthly.months[feb].total["temperature_2m"],
                               values["temperature_2m"][:72].astype(np.float64).sum(axis=0)[None, :], rtol=1e-12)


def test_a_day_the_load_holds_part_of_is_left_to_sql() -> None:
    times, values = _data(96)
    with np.errstate(all="ignore"):
        window = _feed(times, values, 24, slice(6, 90))  # 06 UTC on the first day .. 17 UTC on the last
    assert [str(d) for d in window.partial_days] == ["2024-02-27", "2024-03-01"]
    assert sorted(str(d) for d in window.rows) == ["2024-02-28", "2024-02-29"]

