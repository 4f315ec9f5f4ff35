"""The climate signal of one variable from a place's daily values: per year and per calendar month the
value (the mean of an instantaneous variable, the total of an accumulation), the baseline's
climatology, the anomaly; the highest and lowest years; the trend per decade (``read.trend``).

A year's (a month's) value needs all its days, each with its 24 hours: a year the loaded range cuts,
or one with a missing day, is listed as partial with the days it has, and no value; the baseline's
climatology is the mean of its complete years, and a baseline with missing years says so in
``notes`` (none at all: refused, naming the years that are complete).
"""

from __future__ import annotations

import calendar
from typing import Any

import numpy as np

from era5etl.core.rollups import aggregates_of
from era5etl.read.daily import Daily
from era5etl.read.errors import ReadError
from era5etl.read.trend import trend_per_decade

EXTREMES = 3  # the highest and the lowest years listed


def value_column(variable: str) -> tuple[str, str]:
    """(the daily rollup column a variable's climate is made of, ``mean`` or ``total``)."""
    aggs = aggregates_of(variable)
    if "sum" in aggs:
        return f"{variable}_sum", "total"
    if "mean" in aggs:
        return f"{variable}_mean", "mean"
    raise ReadError(f"{variable} has no daily mean or total (a wind component: ask for wind_speed_10m)")


def _days_in(year: int, month: int | None = None) -> int:
    if month is None:
        return 366 if calendar.isleap(year) else 365
    return calendar.monthrange(year, month)[1]


def _groups(daily: Daily, column: str, statistic: str, monthly: bool) -> dict[tuple[int, int], tuple[int, float]]:
    """(year, month or 0) -> (its complete days, the value folded over them), by bincount in one pass."""
    values = daily.values[column]
    good = daily.complete & np.isfinite(values)
    years, months = daily.years()[good], daily.months()[good] if monthly else np.zeros(int(good.sum()), np.int64)
    if years.size == 0:
        return {}
    first = int(years.min())
    keys = (years - first) * 13 + months
    counts = np.bincount(keys)
    sums = np.bincount(keys, weights=values[good])
    out = {}
    for key in np.flatnonzero(counts):
        n, total = int(counts[key]), float(sums[key])
        out[(first + int(key) // 13, int(key) % 13)] = (n, total if statistic == "total" else total / n)
    return out


def _years_of(daily: Daily, column: str, statistic: str, span: tuple[int, int]) -> list[dict[str, Any]]:
    """One record per year of ``span``: value (None when partial), the complete days it has."""
    groups = _groups(daily, column, statistic, monthly=False)
    out = []
    for year in range(span[0], span[1] + 1):
        days, value = groups.get((year, 0), (0, 0.0))
        complete = days == _days_in(year)
        out.append({"year": year, "value": value if complete else None, "anomaly": None, "days": days,
                    "partial": not complete})
    return out


def _months_of(daily: Daily, column: str, statistic: str, span: tuple[int, int]) -> list[dict[str, Any]]:
    """The complete months of ``span``'s years, in order."""
    groups = _groups(daily, column, statistic, monthly=True)
    return [{"year": y, "month": m, "value": value, "anomaly": None} for (y, m), (days, value) in sorted(groups.items())
            if span[0] <= y <= span[1] and days == _days_in(y, m)]


def _baseline_note(records: list[dict[str, Any]], baseline: tuple[int, int],
                   loaded: list[dict[str, Any]]) -> tuple[list[float], list[str]]:
    inside = [r for r in records if baseline[0] <= r["year"] <= baseline[1]]
    used = [r["value"] for r in inside if r["value"] is not None]
    wanted = baseline[1] - baseline[0] + 1
    missing = [r["year"] for r in inside if r["value"] is None] + [
        y for y in range(baseline[0], baseline[1] + 1) if y not in {r["year"] for r in inside}]
    notes = []
    if not used:
        complete = [r["year"] for r in loaded if r["value"] is not None]
        held = year_ranges(complete) if complete else "none"
        raise ReadError(f"the baseline {baseline[0]}-{baseline[1]} has no complete year loaded (complete years: "
                        f"{held}); load its years or give --baseline within them")
    if len(used) < wanted:
        notes.append(f"baseline {baseline[0]}-{baseline[1]}: {len(used)} of {wanted} years complete; left out "
                     f"(not loaded or partial): {year_ranges(sorted(missing))}")
    return used, notes


def year_ranges(years: list[int]) -> str:
    """``1940-1960, 1975``."""
    parts: list[str] = []
    for y in years:
        if parts and parts[-1].split("-")[-1] == str(y - 1):
            parts[-1] = f"{parts[-1].split('-')[0]}-{y}"
        else:
            parts.append(str(y))
    return ", ".join(parts)


def _extremes(years: list[dict[str, Any]], highest: bool) -> list[dict[str, Any]]:
    complete = [r for r in years if r["value"] is not None]
    ranked = sorted(complete, key=lambda r: (-r["value"] if highest else r["value"], r["year"]))
    return [{k: r[k] for k in ("year", "value", "anomaly")} for r in ranked[:EXTREMES]]


def summarize(daily: Daily, variable: str, baseline: tuple[int, int], span: tuple[int, int]) -> dict[str, Any]:
    """The signal of ``variable`` over the years of ``span`` against ``baseline`` (both inclusive)."""
    column, statistic = value_column(variable)
    years = _years_of(daily, column, statistic, span)
    base_years = _years_of(daily, column, statistic, baseline)
    loaded = _years_of(daily, column, statistic, (int(daily.years().min()), int(daily.years().max())))
    used, notes = _baseline_note(base_years, baseline, loaded)
    normal = float(np.mean(used))
    for r in years:
        r["anomaly"] = None if r["value"] is None else r["value"] - normal
    monthly = _months_of(daily, column, statistic, span)
    base_months = _months_of(daily, column, statistic, baseline)
    months = []
    for month in range(1, 13):
        values = [r["value"] for r in base_months if r["month"] == month]
        months.append({"month": month, "climatology": float(np.mean(values)) if values else None,
                       "years": len(values)})
    for r in monthly:
        clim = months[r["month"] - 1]["climatology"]
        r["anomaly"] = None if clim is None else r["value"] - clim
    partial = [r["year"] for r in years if r["partial"]]
    if partial:
        notes.append(f"partial years (missing days or hours; no value, left out of the trend): {year_ranges(partial)}")
    x = np.array([r["year"] for r in years], dtype=np.float64)
    y = np.array([np.nan if r["value"] is None else r["value"] for r in years], dtype=np.float64)
    return {"statistic": statistic, "baseline": list(baseline), "baseline_value": normal, "years": years,
            "months": months, "monthly": monthly, "highest": _extremes(years, True),
            "lowest": _extremes(years, False), "trend_per_decade": trend_per_decade(x, y), "notes": notes}


__all__ = ["summarize", "value_column", "year_ranges"]
