"""The ETCCDI indices as xclim computes them (its functions and its defaults), per year: the reference
the product's indices (read.indices) are tested against, from daily series on every calendar day."""

from __future__ import annotations

import numpy as np
import xarray as xr


def xclim_indices(tn: xr.DataArray, tx: xr.DataArray, tg: xr.DataArray, pr: xr.DataArray,
                  baseline: xr.DataArray | None = None) -> dict[str, np.ndarray]:
    """Every index ``climate`` offers, per year (``freq="YS"``); the 90th percentile of the day of the
    year from ``baseline``'s Tmax (default: ``tx`` itself)."""
    from xclim import indices as xi
    from xclim.core.calendar import percentile_doy

    tx90 = percentile_doy(tx if baseline is None else baseline, window=5, per=90).sel(percentiles=90)
    out = {
        "frost_days": xi.frost_days(tn, freq="YS"),
        "icing_days": xi.ice_days(tx, freq="YS"),
        "summer_days": xi.tx_days_above(tx, thresh="25 degC", freq="YS"),
        "tropical_nights": xi.tn_days_above(tn, thresh="20 degC", freq="YS"),
        "tx90p": xi.tx90p(tx, tx90, freq="YS"),
        "warm_spell_days": xi.warm_spell_duration_index(tx, tx90, window=6, freq="YS"),
        "rx1day": xi.max_1day_precipitation_amount(pr, freq="YS"),
        "rx5day": xi.max_n_day_precipitation_amount(pr, window=5, freq="YS"),
        "consecutive_dry_days": xi.maximum_consecutive_dry_days(pr, thresh="1 mm/day", freq="YS"),
        "heating_degree_days": xi.heating_degree_days(tg, thresh="17 degC", freq="YS"),
        "cooling_degree_days": xi.cooling_degree_days(tg, thresh="18 degC", freq="YS"),
    }
    return {k: np.asarray(v.values, dtype=np.float64) for k, v in out.items()}
