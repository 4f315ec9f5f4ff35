"""The trend per decade equals scipy.stats': linregress (slope, its 95% interval from the stderr and
Student's t, the p-value) and theilslopes, on noisy years, with missing years and ties."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from era5etl.read.trend import trend_per_decade


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ols_and_theil_sen_equal_scipys(seed: int) -> None:
    rng = np.random.default_rng(seed)
    years = np.arange(1940, 2025, dtype=float)
    values = 26.5 + 0.018 * (years - 1940) + rng.normal(0, 0.3, years.size)
    values[[3, 17, 60]] = np.nan  # partial years: left out
    values[40] = values[41]  # a tie
    keep = np.isfinite(values)
    fit = stats.linregress(years[keep], values[keep])
    half = stats.t.ppf(0.975, keep.sum() - 2) * fit.stderr
    got = trend_per_decade(years, values)
    assert got["years"] == 82
    assert got["ols"] == pytest.approx(fit.slope * 10, rel=1e-12)
    assert got["ci95"] == pytest.approx([(fit.slope - half) * 10, (fit.slope + half) * 10], rel=1e-9)
    assert got["p_value"] == pytest.approx(fit.pvalue, rel=1e-6, abs=1e-300)
    assert got["theil_sen"] == pytest.approx(stats.theilslopes(values[keep], years[keep]).slope * 10, rel=1e-12)


def test_too_few_years_and_a_constant() -> None:
    assert trend_per_decade(np.array([2000.0, 2001.0]), np.array([1.0, 2.0]))["ols"] is None
    flat = trend_per_decade(np.arange(1991.0, 2021.0), np.zeros(30))
    assert (flat["ols"], flat["ci95"], flat["theil_sen"]) == (0.0, [0.0, 0.0], 0.0)


def test_import_early_imports_the_t_distribution_in_a_thread_of_a_fresh_process() -> None:
    """A new interpreter (this one has scipy already): the thread import_early starts leaves
    scipy.special imported once it ends, and the main thread did not import it itself."""
    import subprocess
    import sys

    code = ("import sys, threading\n"
            "from era5etl.read.trend import import_early\n"
            "assert 'scipy.special' not in sys.modules\n"
            "import_early()\n"
            "[t.join() for t in threading.enumerate() if t.name == 'import scipy.special']\n"
            "print('scipy.special' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"
