"""A trend per decade of yearly values: ordinary least squares with its 95% interval (Student's t on
n - 2 degrees of freedom), and the Theil-Sen slope (the median of the slopes of every pair of years,
robust to an outlying year).

Computed in numpy with ``scipy.special``'s t distribution rather than through ``scipy.stats``
(``linregress``, ``theilslopes``): importing ``scipy.stats`` alone took 2 to 6 s of a ``climate``
process on this 2-core machine, more than the whole read. The tests check both figures against
``scipy.stats.linregress`` and ``scipy.stats.theilslopes``.
"""

# Imports inside functions: scipy loads only when a trend's confidence interval is computed.

from __future__ import annotations

import threading
from typing import Any

import numpy as np

MIN_YEARS = 3  # a slope and its interval need at least three years


def import_early() -> None:
    """Import ``scipy.special`` in a thread now, while the caller waits on the database: a third of a
    cold ``climate`` process's imports (0.3-0.4 s here), which the first trend would otherwise pay in
    line. Importing a module a thread is still importing waits for it, so the trend is unchanged; the
    thread is not a daemon, so a process that ends early still ends after the import, never inside it."""
    threading.Thread(target=_import_scipy_special, name="import scipy.special").start()


def _import_scipy_special() -> None:
    import scipy.special  # noqa: F401


def _ols(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """(slope, half of its 95% interval, two-sided p-value of slope = 0)."""
    from scipy.special import stdtr, stdtrit

    dx = x - x.mean()
    sxx = float(dx @ dx)
    slope = float(dx @ (y - y.mean())) / sxx
    resid = y - y.mean() - slope * dx
    dof = x.size - 2
    se = float(np.sqrt(float(resid @ resid) / dof / sxx))
    if se == 0.0:
        return slope, 0.0, 0.0
    return slope, float(stdtrit(dof, 0.975)) * se, float(2 * stdtr(dof, -abs(slope) / se))


def theil_sen(x: np.ndarray, y: np.ndarray) -> float:
    """The median of (y_j - y_i) / (x_j - x_i) over the pairs with x_j > x_i."""
    dx = x[:, None] - x[None, :]
    dy = y[:, None] - y[None, :]
    return float(np.median(dy[dx > 0] / dx[dx > 0]))


def trend_per_decade(years: np.ndarray, values: np.ndarray) -> dict[str, Any]:
    """``{ols, ci95: [low, high], theil_sen, p_value, years}`` per decade over the finite values; every
    figure None (and ``years`` the count) when fewer than MIN_YEARS are finite."""
    keep = np.isfinite(values)
    x, y = np.asarray(years, dtype=np.float64)[keep], np.asarray(values, dtype=np.float64)[keep]
    if x.size < MIN_YEARS:
        return {"ols": None, "ci95": None, "theil_sen": None, "p_value": None, "years": int(x.size)}
    if np.all(y == y[0]):  # a constant (a count of zero days every year): no slope, no spread
        return {"ols": 0.0, "ci95": [0.0, 0.0], "theil_sen": 0.0, "p_value": None, "years": int(x.size)}
    slope, half, p = _ols(x, y)
    return {"ols": slope * 10, "ci95": [(slope - half) * 10, (slope + half) * 10], "theil_sen": theil_sen(x, y) * 10,
            "p_value": p, "years": int(x.size)}


__all__ = ["MIN_YEARS", "import_early", "theil_sen", "trend_per_decade"]
