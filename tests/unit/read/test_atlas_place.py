"""A place's rank among the cities by its trend, and the order of its changes, on fields made here."""

from __future__ import annotations

import numpy as np

from era5etl.core.grid import location_ids
from era5etl.read.atlas import point_trends
from era5etl.read.atlas_place import city_rank, clearest_first
from era5etl.read.places import gazetteer
from era5etl.read.yearly import YearlyField


def _field(step: float = 10.0) -> YearlyField:
    lats = np.arange(-90.0, 90.0 + step / 2, step)
    lons = np.arange(-180.0 + step, 180.0 + step / 2, step)
    lat, lon = (a.ravel() for a in np.meshgrid(lats, lons, indexing="ij"))
    span = np.arange(1980, 2021)
    rng = np.random.default_rng(1)
    slope = 0.01 * lat[:, None] + 0.001 * lon[:, None]
    values = 10 + slope * (span - 2000) + rng.normal(0, 0.1, (lat.size, span.size))
    return YearlyField("t", "temperature_2m", "mean", "degC", location_ids(lat, lon), lat, lon, span, values)


def test_the_rank_counts_the_cities_on_points_of_greater_trend() -> None:
    field = _field()
    slopes = point_trends(field).per_decade
    cities = [p for ps in gazetteer()[0].values() for p in ps]
    step = 10.0
    # Every city's nearest lattice point, by hand: its trend.
    lat = np.clip(np.rint(np.array([c.latitude for c in cities]) / step) * step, -90, 90)
    lon = np.rint(np.array([c.longitude for c in cities]) / step) * step
    lon = np.where(lon <= -180, lon + 360, lon)
    theirs = slopes[np.searchsorted(field.location_id, location_ids(lat, lon))]
    for row in (0, 400, int(np.argmax(slopes)), int(np.argmin(slopes))):
        got = city_rank(field, row)
        assert got == {"rank": int((theirs > slopes[row]).sum()) + 1, "of": len(cities)}
    assert city_rank(field, int(np.argmax(slopes)))["rank"] == 1
    big = city_rank(field, 0, min_population=5_000_000)
    assert 0 < big["of"] < 100
    field.values[7, :] = np.nan
    assert city_rank(field, 7)["rank"] is None


def test_changes_comeclearest_first_first_and_those_without_a_p_value_last() -> None:
    entries = [{"trend_per_decade": {"p_value": p}} for p in (0.5, None, 0.001, 0.04)]
    assert [e["trend_per_decade"]["p_value"] for e in sorted(entries, key=clearest_first)] == [0.001, 0.04, 0.5, None]
