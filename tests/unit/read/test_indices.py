"""read.indices on calendar days, against xclim: a day deleted, a day with hours missing, a stub day at the
series' edge and the leap days are what xclim makes of a series on every day with those days NaN - in
the windows (rx5day's 5 days), in the percentile's pool (tx90p, warm spells) and in the years they
leave incomplete (no value, partial)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from era5etl.read.daily import Daily
from era5etl.read.indices import PR, TMAX, TMEAN, TMIN, calendar_days, compute_indices

from ...index_reference import xclim_indices

FIRST, LAST = 1991, 2000
BASELINE = (1991, 2000)
DELETED = np.datetime64("1995-12-30")  # a window ending on 1996-01-01..03 holds it
SHORT = np.datetime64("1998-03-01")  # 18 hours of 24 (the day after a leap year's 28 February)
NAMES = ["frost_days", "summer_days", "tx90p", "warm_spell_days", "rx1day", "rx5day", "consecutive_dry_days",
         "heating_degree_days"]


def series() -> tuple[Daily, pd.DataFrame]:
    """Ten years of plausible days (seed 1) with a stub day before them (6 hours), one day deleted and
    one of 18 hours; the product's Daily and the same days as xclim sees them (every day, NaN where a
    day is missing or incomplete)."""
    rng = np.random.default_rng(1)
    days = pd.date_range(f"{FIRST - 1}-12-31", f"{LAST}-12-31", freq="D")
    doy = days.dayofyear.to_numpy()
    season = -10 * np.cos(2 * np.pi * (doy - 15) / 365.25)
    tg = (12 + season + rng.normal(0, 3, days.size)).astype(np.float32).astype(np.float64)
    tn, tx = tg - rng.uniform(2, 8, days.size), tg + rng.uniform(2, 8, days.size)
    pr = np.where(rng.random(days.size) < 0.4, rng.gamma(0.8, 9.0, days.size), 0.0)
    hours = np.full(days.size, 24)
    hours[0] = 6  # the stub: the loaded range's first local day holds its last hours only
    dates = days.to_numpy().astype("datetime64[D]")
    hours[dates == SHORT] = 18
    keep = dates != DELETED
    values = {TMIN: tn, TMAX: tx, TMEAN: tg, PR: pr}
    daily = Daily(dates[keep], hours[keep], {c: v[keep] for c, v in values.items()}, 0)
    frame = pd.DataFrame({"tn": tn, "tx": tx, "tg": tg, "pr": pr}, index=days)
    frame[(hours < 24) | ~keep] = np.nan
    return daily, frame.loc[f"{FIRST}-01-01":]


def reference(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    def array(column: str, units: str) -> xr.DataArray:
        return xr.DataArray(frame[column].to_numpy(), coords={"time": frame.index.to_numpy()}, dims="time",
                            attrs={"units": units})

    tn, tx, tg, pr = array("tn", "degC"), array("tx", "degC"), array("tg", "degC"), array("pr", "mm/d")
    return xclim_indices(tn, tx, tg, pr, baseline=tx.sel(time=slice(f"{BASELINE[0]}", f"{BASELINE[1]}")))


def test_a_missing_day_is_a_calendar_day_without_values() -> None:
    daily, _ = series()
    full = calendar_days(daily)
    assert full.dates.size == daily.dates.size + 1
    at = int(np.flatnonzero(full.dates == DELETED)[0])
    assert full.hours[at] == 0 and np.isnan(full.values[PR][at])
    short = int(np.flatnonzero(full.dates == SHORT)[0])
    assert full.hours[short] == 18 and np.isnan(full.values[TMAX][short])  # incomplete: no value in a window
    assert full.hours[0] == 6 and np.isnan(full.values[PR][0])  # the stub at the edge likewise


def test_every_index_equals_xclims_on_calendar_days() -> None:
    daily, frame = series()
    ours = compute_indices(daily, NAMES, BASELINE, (FIRST, LAST))
    want = reference(frame)
    incomplete = {1995, 1998}  # the deleted day's year and the short day's
    for name in NAMES:
        rows = ours[name]["years"]
        assert [r["year"] for r in rows] == list(range(FIRST, LAST + 1))
        assert {r["year"] for r in rows if r["partial"]} == incomplete, name
        for i, r in enumerate(rows):
            if r["year"] in incomplete:
                assert r["value"] is None, name
            else:
                assert r["value"] == pytest.approx(want[name][i], abs=1e-6), (name, r["year"])
    # The window across the deleted day is missing, not a window of six calendar days: 1996's rx5day is
    # the largest of the windows that hold no missing day, as xclim's.
    assert ours["rx5day"]["years"][1996 - FIRST]["value"] == pytest.approx(want["rx5day"][1996 - FIRST])
    # Each index means something here: not a column of zeros that any code would match.
    for name in ("frost_days", "summer_days", "tx90p", "rx5day", "heating_degree_days"):
        assert np.nansum(want[name]) > 0, name
