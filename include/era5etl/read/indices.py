"""Climate indices from daily values, per year, with ETCCDI's definitions as xclim implements them
(``xclim.indices``; the thresholds are xclim's defaults):

| name | what | xclim |
|---|---|---|
| frost_days | days with Tmin < 0 degC | ``frost_days`` |
| icing_days | days with Tmax < 0 degC | ``ice_days`` |
| summer_days | days with Tmax > 25 degC | ``tx_days_above(thresh="25 degC")`` |
| tropical_nights | days with Tmin > 20 degC | ``tn_days_above(thresh="20 degC")`` |
| tx90p | days with Tmax above the baseline's 90th percentile of its day of the year (5-day window) | ``tx90p`` |
| warm_spell_days | days in runs of 6 or more such days (WSDI) | ``warm_spell_duration_index`` |
| rx1day | the wettest day's total | ``max_1day_precipitation_amount`` |
| rx5day | the wettest 5 days' total (a window ends in its year) | ``max_n_day_precipitation_amount(window=5)`` |
| consecutive_dry_days | the longest run of days under 1 mm within the year | ``maximum_consecutive_dry_days`` |
| heating_degree_days | sum of 17 degC - Tmean where positive | ``heating_degree_days`` |
| cooling_degree_days | sum of Tmean - 18 degC where positive | ``cooling_degree_days`` |

Tmin, Tmax, Tmean are the day's minimum, maximum and mean of the hourly 2 m temperature; the
precipitation is the day's total. A year missing a day (or hours of one) has no value, marked partial.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from era5etl.read.daily import Daily
from era5etl.read.errors import ReadError
from era5etl.read.trend import trend_per_decade

T = "temperature_2m"
P = "total_precipitation"
TMIN, TMAX, TMEAN, PR = f"{T}_min", f"{T}_max", f"{T}_mean", f"{P}_sum"
WINDOW = 5  # tx90p's day-of-year window (days, centred)
SPELL = 6  # warm_spell_days: the shortest run counted
DRY = 1.0  # mm: a day under it is dry
RX_DAYS = 5
LEAD_DAYS = RX_DAYS - 1  # the days before a year its first window reaches back to


@dataclass(frozen=True)
class Index:
    name: str
    column: str  # the daily column it is made of
    unit: str
    description: str
    per_year: Callable[[np.ndarray, np.ndarray, dict[str, Any]], float]  # (values, dates of a year, context)


def _count(test: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray, np.ndarray, dict[str, Any]], float]:
    return lambda v, _d, _c: float(np.count_nonzero(test(v)))


def _longest_run(flags: np.ndarray) -> int:
    if not flags.any():
        return 0
    edges = np.diff(np.concatenate(([0], flags.astype(np.int8), [0])))
    return int((np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)).max())


def _days_in_runs(flags: np.ndarray, minimum: int) -> int:
    edges = np.diff(np.concatenate(([0], flags.astype(np.int8), [0])))
    lengths = np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)
    return int(lengths[lengths >= minimum].sum())


def _above_p90(values: np.ndarray, dates: np.ndarray, context: dict[str, Any]) -> np.ndarray:
    doy = (dates - dates.astype("datetime64[Y]")).astype(np.int64)  # 0-based day of the year
    return np.asarray(values > context["tx90"][doy])


def _rx5(values: np.ndarray, _dates: np.ndarray, context: dict[str, Any]) -> float:
    """The largest total of the windows ending in the year (those reaching before the first loaded day
    are left out, as xclim's rolling sum leaves them NaN and its yearly maximum skips them)."""
    totals = context["rx5"][context["year_mask"]]
    return float(np.nanmax(totals)) if np.isfinite(totals).any() else float("nan")


INDICES: dict[str, Index] = {i.name: i for i in (
    Index("frost_days", TMIN, "days", "days with Tmin < 0 degC", _count(lambda v: v < 0.0)),
    Index("icing_days", TMAX, "days", "days with Tmax < 0 degC", _count(lambda v: v < 0.0)),
    Index("summer_days", TMAX, "days", "days with Tmax > 25 degC", _count(lambda v: v > 25.0)),
    Index("tropical_nights", TMIN, "days", "days with Tmin > 20 degC", _count(lambda v: v > 20.0)),
    Index("tx90p", TMAX, "days", "days with Tmax above the baseline's 90th percentile of the day of the year",
          lambda v, d, c: float(np.count_nonzero(_above_p90(v, d, c)))),
    Index("warm_spell_days", TMAX, "days", f"days in runs of {SPELL} or more days above the baseline's Tmax 90th "
          "percentile", lambda v, d, c: float(_days_in_runs(_above_p90(v, d, c), SPELL))),
    Index("rx1day", PR, "mm", "the wettest day's total", lambda v, _d, _c: float(v.max())),
    Index("rx5day", PR, "mm", f"the wettest {RX_DAYS} consecutive days' total", _rx5),
    Index("consecutive_dry_days", PR, "days", f"the longest run of days under {DRY:g} mm",
          lambda v, _d, _c: float(_longest_run(v < DRY))),
    Index("heating_degree_days", TMEAN, "degC days", "sum of 17 degC - Tmean where positive",
          lambda v, _d, _c: float(np.clip(17.0 - v, 0.0, None).sum())),
    Index("cooling_degree_days", TMEAN, "degC days", "sum of Tmean - 18 degC where positive",
          lambda v, _d, _c: float(np.clip(v - 18.0, 0.0, None).sum())),
)}
DEFAULTS: dict[str, tuple[str, ...]] = {T: tuple(n for n, i in INDICES.items() if i.column.startswith(T)),
                                        P: tuple(n for n, i in INDICES.items() if i.column.startswith(P))}


def check_indices(names: list[str] | None, variable: str) -> list[str]:
    """The indices asked for (default: those of ``variable``); ReadError naming the known ones."""
    if not names:
        return list(DEFAULTS.get(variable, ()))
    unknown = [n for n in names if n not in INDICES]
    if unknown:
        raise ReadError(f"unknown index {', '.join(map(repr, unknown))}; the known ones: {', '.join(INDICES)}")
    return list(dict.fromkeys(names))


def columns_of(names: list[str]) -> list[str]:
    return list(dict.fromkeys(INDICES[n].column for n in names))


def doy_percentile(values: np.ndarray, dates: np.ndarray, years: tuple[int, int], per: float = 90.0) -> np.ndarray:
    """The ``per`` percentile of each day of the year (366 entries, 0-based) over ``years``, as xclim's
    ``percentile_doy``: the values of a WINDOW-day window centred on each day (time-wise, shorter at the
    series' ends) pooled by the day of the year, xclim's quantile (alpha = beta = 1/3: numpy's
    ``median_unbiased``); the 366th day, a quarter of the sample, is left out and days 1-365 are
    stretched linearly over 1-366."""
    y = dates.astype("datetime64[Y]").astype(np.int64) + 1970
    inside = (y >= years[0]) & (y <= years[1])
    v, d = values[inside], dates[inside]
    half = WINDOW // 2
    padded = np.concatenate((np.full(half, np.nan), v, np.full(half, np.nan)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, WINDOW)
    doy = (d - d.astype("datetime64[Y]")).astype(np.int64)
    by_day = np.full(365, np.nan)
    for day in range(365):
        pool = windows[doy == day].ravel()
        pool = pool[np.isfinite(pool)]
        if pool.size:
            by_day[day] = np.quantile(pool, per / 100.0, method="median_unbiased")
    known = np.isfinite(by_day)
    if not known.any():
        raise ReadError(f"the baseline {years[0]}-{years[1]} holds no daily values for the percentile")
    filled = np.interp(np.arange(365), np.flatnonzero(known), by_day[known])
    return np.asarray(np.interp(np.arange(1, 367), np.linspace(1, 366, 365), filled))


def calendar_days(daily: Daily) -> Daily:
    """``daily`` on every calendar day from its first to its last: a day it lacks is there with no hours
    and no values, and an incomplete day (fewer than 24 hours: cut by the loaded range, a stub at its
    edge, hours missing) keeps its hours but not its values. So a window of days (rx5day's 5, the
    percentile's 5) is a window of calendar days, and a day missing or incomplete is missing in every
    window and pool that holds it, as in xclim, whose series are on every day."""
    if daily.dates.size == 0:
        return daily
    dates = np.arange(daily.dates.min(), daily.dates.max() + np.timedelta64(1, "D"), dtype="datetime64[D]")
    at = np.searchsorted(dates, daily.dates)
    hours = np.zeros(dates.size, dtype=np.int64)
    hours[at] = daily.hours
    values = {}
    for column, given in daily.values.items():
        full = np.full(dates.size, np.nan)
        full[at] = np.where(daily.complete, given, np.nan)
        values[column] = full
    return Daily(dates, hours, values, daily.utc_offset_minutes)


def _context(daily: Daily, names: list[str], baseline: tuple[int, int]) -> dict[str, Any]:
    context: dict[str, Any] = {}
    if {"tx90p", "warm_spell_days"} & set(names):
        context["tx90"] = doy_percentile(daily.values[TMAX], daily.dates, baseline)
    if "rx5day" in names:
        pr = daily.values[PR]
        # A window's total belongs to the day it ends on; a window holding a missing day is NaN.
        padded = np.concatenate((np.full(RX_DAYS - 1, np.nan), pr))
        context["rx5"] = np.lib.stride_tricks.sliding_window_view(padded, RX_DAYS).sum(axis=1)
    return context


def compute_indices(daily: Daily, names: list[str], baseline: tuple[int, int],
                    span: tuple[int, int]) -> dict[str, Any]:
    """Per index: ``unit``, ``description``, ``years`` ({year, value, partial}) and ``trend_per_decade``,
    over calendar days (:func:`calendar_days`)."""
    daily = calendar_days(daily)
    context = _context(daily, names, baseline)
    years = daily.years()
    out: dict[str, Any] = {}
    for name in names:
        index = INDICES[name]
        values = daily.values[index.column]
        good = daily.complete & np.isfinite(values)
        rows = []
        for year in range(span[0], span[1] + 1):
            mask = years == year
            expected = 366 if (year % 4 == 0 and year % 100 != 0) or year % 400 == 0 else 365
            whole = int((good & mask).sum()) == expected
            context["year_mask"] = mask
            value = index.per_year(values[mask], daily.dates[mask], context) if whole else None
            value = value if value is None or np.isfinite(value) else None
            rows.append({"year": year, "value": value, "partial": not whole})
        x = np.array([r["year"] for r in rows], dtype=np.float64)
        y = np.array([np.nan if r["value"] is None else r["value"] for r in rows], dtype=np.float64)
        out[name] = {"unit": index.unit, "description": index.description, "years": rows,
                     "trend_per_decade": trend_per_decade(x, y)}
    return out


__all__ = ["DEFAULTS", "INDICES", "LEAD_DAYS", "calendar_days", "check_indices", "columns_of", "compute_indices",
           "doy_percentile"]
