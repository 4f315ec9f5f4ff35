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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rows: dict[np.datetime64, dict[str, np.ndarray]] = {}
        self.emitted: list[tuple[np.datetime64, np.ndarray | None, dict[str, np.ndarray]]] = []  # in order

    def _emit(self, days: np.ndarray, partial: Any, points: Points) -> None:
        values = partial.values(self.rolled)
        for i, day in enumerate(days):
            row = {"hours": partial.hours[i], **{c: v[i] for c, v in values.items()}}
            self.rows[day] = row
            self.emitted.append((day, points.level, row))


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



def _levels_window(times: np.ndarray, levels: int) -> Recorded:
    """A window on pressure levels: ``levels`` levels of the P points, level-major (as the loader's)."""
    points = Points(np.tile(np.arange(P, dtype=np.int32), levels), np.zeros(levels * P, np.float32),
                    np.repeat(np.arange(levels, dtype=np.int16) * 100 + 100, P))
    return Recorded(times.astype(np.int64), points, DATA_COLUMNS, MonthlyRollup(), levels=True)


def test_a_lone_hour_read_in_runs_of_levels_goes_to_disk_and_out_run_by_run() -> None:
    """An hour its day holds alone, read a run of levels at a time (load.loader.block_levels): each run
    is its points' whole day, spilled (load.spill) rather than summed over every (level, point), and out
    run by run in level order before the next day's rows; its month holds the runs, not sums."""
    times, values = _data(25, seed=5)  # 00 UTC of 02-27 .. 00 UTC of 02-28
    times, values = times[23:25], {c: v[23:25] for c, v in values.items()}  # 23 UTC alone, 02-28's first hour
    window = _levels_window(times[:1], 3)
    window.adopt([np.datetime64("2024-02-27", "D")])
    with np.errstate(all="ignore"):
        for level in range(3):
            window.add(times[:1], {c: v[:1] for c, v in values.items()}, slice(level * P, (level + 1) * P))
        window.close()
        want = _expected(times[:1], {c: v[:1] for c, v in values.items()}, np.datetime64("2024-02-27", "D"))
    assert window.open is None and not window.monthly.months  # nothing summed
    assert [(str(d), None if lv is None else sorted(set(lv.tolist()))) for d, lv, _ in window.emitted] == [
        ("2024-02-27", [100]), ("2024-02-27", [200]), ("2024-02-27", [300])]
    for _, _, row in window.emitted:  # every level the same values here: the hour's, or NULL
        assert set(row) == set(want)
        for column, value in want.items():
            np.testing.assert_array_equal(row[column], value, err_msg=column)
    feb = np.datetime64("2024-02", "M")
    assert [(str(r.day), r.cols) for r in window.monthly.runs[feb]] == [
        ("2024-02-27", slice(0, P)), ("2024-02-27", slice(P, 2 * P)), ("2024-02-27", slice(2 * P, 3 * P))]
    assert window.monthly.days[feb] == [np.datetime64("2024-02-27", "D")]
    np.testing.assert_array_equal(window.monthly.spill.get(window.monthly.runs[feb][1])["temperature_2m"],
                                  values["temperature_2m"][0])
    window.monthly.spill.close()


def test_a_spilled_days_rows_go_out_before_the_whole_day_after_it() -> None:
    """A lone hour at 23 UTC then the whole next day, both in runs of levels: the lone day's runs go out
    first, then the whole day summed in the client, so the daily COPY stays in bucket order."""
    times, values = _data(48, seed=6)
    times, values = times[23:48], {c: v[23:48] for c, v in values.items()}
    window = _levels_window(times, 2)
    window.adopt([np.datetime64("2024-02-27", "D")])
    with np.errstate(all="ignore"):
        for h in range(len(times)):
            for level in range(2):
                hour = {c: v[h:h + 1] for c, v in values.items()}
                window.add(times[h:h + 1], hour, slice(level * P, (level + 1) * P))
        window.close()
        whole = _expected(times, values, np.datetime64("2024-02-28", "D"))
    assert [(str(d), lv is None or len(lv)) for d, lv, _ in window.emitted] == [
        ("2024-02-27", P), ("2024-02-27", P), ("2024-02-28", 2 * P)]
    row = window.emitted[-1][2]
    assert (row["hours"] == 24).all()
    np.testing.assert_allclose(row["temperature_2m_mean"][:P], whole["temperature_2m_mean"], rtol=1e-6)
    window.monthly.spill.close()
