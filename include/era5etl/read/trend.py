"""A trend per decade of yearly values: ordinary least squares with its 95% interval
(``scipy.stats.linregress``, the interval from Student's t on n - 2 degrees of freedom) and the
Theil-Sen slope (``scipy.stats.theilslopes``, the median of the pairwise slopes, robust to an outlying
year)."""

from __future__ import annotations

from typing import Any

import numpy as np

MIN_YEARS = 3  # a slope and its interval need at least three years


def trend_per_decade(years: np.ndarray, values: np.ndarray) -> dict[str, Any]:
    """``{ols, ci95: [low, high], theil_sen, p_value, years}`` per decade over the finite values; every
    figure None (and ``years`` the count) when fewer than MIN_YEARS are finite."""
    from scipy import stats

    keep = np.isfinite(values)
    x, y = np.asarray(years, dtype=np.float64)[keep], np.asarray(values, dtype=np.float64)[keep]
    if x.size < MIN_YEARS:
        return {"ols": None, "ci95": None, "theil_sen": None, "p_value": None, "years": int(x.size)}
    if np.all(y == y[0]):  # a constant (a count of zero days every year): no slope, no spread
        return {"ols": 0.0, "ci95": [0.0, 0.0], "theil_sen": 0.0, "p_value": None, "years": int(x.size)}
    fit = stats.linregress(x, y)
    half = float(stats.t.ppf(0.975, x.size - 2)) * float(fit.stderr)
    theil = stats.theilslopes(y, x)
    return {"ols": float(fit.slope) * 10, "ci95": [(float(fit.slope) - half) * 10, (float(fit.slope) + half) * 10],
            "theil_sen": float(theil.slope) * 10, "p_value": float(fit.pvalue), "years": int(x.size)}


__all__ = ["MIN_YEARS", "trend_per_decade"]
