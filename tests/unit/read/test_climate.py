"""The climate summary from daily values: a year (a month) missing a day, or an hour of one, is
partial, with no value, left out of the climatology and the trend, and said; what is complete is the
mean (or the total) of its days."""

from __future__ import annotations

import numpy as np
import pytest

from era5etl.read.climate import summarize
from era5etl.read.daily import Daily
from era5etl.read.errors import ReadError


def _daily(first: str, last: str, seed: int = 0) -> Daily:
    dates = np.arange(np.datetime64(first), np.datetime64(last) + 1)
    rng = np.random.default_rng(seed)
    years = dates.astype("datetime64[Y]").astype(int) + 1970
    mean = 20 + 0.02 * (years - 2000) + rng.normal(0, 1, dates.size)
    total = rng.gamma(0.5, 4.0, dates.size)
    return Daily(dates, np.full(dates.size, 24), {"temperature_2m_mean": mean, "total_precipitation_sum": total}, 0)


def test_a_missing_day_and_a_missing_hour_make_their_year_and_month_partial() -> None:
    d = _daily("2000-01-01", "2005-12-31")
    drop = d.dates != np.datetime64("2002-07-14")  # a day not loaded
    d = Daily(d.dates[drop], d.hours[drop], {k: v[drop] for k, v in d.values.items()}, 0)
    d.hours[d.dates == np.datetime64("2004-02-29")] = 23  # an hour missing
    s = summarize(d, "temperature_2m", (2000, 2003), (2000, 2005))
    years = {r["year"]: r for r in s["years"]}
    assert [y for y, r in years.items() if r["partial"]] == [2002, 2004]
    assert years[2002]["value"] is None and years[2002]["days"] == 364 and years[2004]["days"] == 365
    complete = {y: d.values["temperature_2m_mean"][(d.dates.astype("datetime64[Y]").astype(int) + 1970) == y].mean()
                for y in (2000, 2001, 2003, 2005)}
    normal = np.mean([complete[2000], complete[2001], complete[2003]])
    for year, value in complete.items():
        assert years[year]["value"] == pytest.approx(value) and years[year]["anomaly"] == pytest.approx(value - normal)
    assert s["baseline_value"] == pytest.approx(normal)
    months = {(r["year"], r["month"]) for r in s["monthly"]}
    assert (2002, 7) not in months and (2004, 2) not in months and (2002, 6) in months and (2004, 3) in months
    assert len(months) == 6 * 12 - 2
    july = [r["value"] for r in s["monthly"] if r["month"] == 7 and r["year"] in (2000, 2001, 2003)]
    assert s["months"][6] == {"month": 7, "climatology": pytest.approx(np.mean(july)), "years": 3}
    assert s["trend_per_decade"]["years"] == 4
    assert any("baseline 2000-2003: 3 of 4 years complete" in n and "2002" in n for n in s["notes"])
    assert any(n.startswith("partial years") and n.endswith("2002, 2004") for n in s["notes"])


def test_an_accumulation_is_a_total_and_a_baseline_without_a_complete_year_is_refused() -> None:
    d = _daily("2010-01-01", "2012-12-31", seed=3)
    s = summarize(d, "total_precipitation", (2010, 2011), (2010, 2012))
    in_2011 = (d.dates >= np.datetime64("2011-01-01")) & (d.dates < np.datetime64("2012-01-01"))
    assert s["statistic"] == "total"
    assert s["years"][1]["value"] == pytest.approx(d.values["total_precipitation_sum"][in_2011].sum())
    with pytest.raises(ReadError, match=r"the baseline 1991-2000 has no complete year loaded \(complete years: "
                                        r"2010-2012\)"):
        summarize(d, "total_precipitation", (1991, 2000), (2010, 2012))
