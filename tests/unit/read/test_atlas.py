"""The atlas's arithmetic on fields made here: every point's trend equals scipy's linregress, the cell
areas are the sphere's, an area-weighted mean is not the lattice's plain mean, the ranking and the
cities' grid points."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from era5etl.core.grid import location_ids
from era5etl.read.atlas import (
    ARCTIC,
    anomalies,
    area_mean,
    atlas,
    cell_areas,
    city_units,
    point_trends,
    regional_field,
    trend_map,
)
from era5etl.read.errors import ReadError
from era5etl.read.places import Place
from era5etl.read.regions import Region
from era5etl.read.yearly import YearlyField


def _field(step: float = 5.0, years: tuple[int, int] = (1979, 2021), seed: int = 0) -> YearlyField:
    lats = np.arange(-90.0, 90.0 + step / 2, step)
    lons = np.arange(-180.0 + step, 180.0 + step / 2, step)
    lat, lon = (a.ravel() for a in np.meshgrid(lats, lons, indexing="ij"))
    span = np.arange(years[0], years[1] + 1)
    rng = np.random.default_rng(seed)
    slope = 0.02 + 0.05 * np.sin(np.radians(lat)) ** 2  # per year: polar amplification
    values = 15.0 + slope[:, None] * (span[None, :] - 2000) + rng.normal(0, 0.3, (lat.size, span.size))
    return YearlyField("t", "temperature_2m", "mean", "degC", location_ids(lat, lon), lat, lon, span, values)


def test_every_points_trend_equals_scipys_linregress() -> None:
    field = _field()
    field.values[5, [0, 7, 30]] = np.nan  # years not complete at a point: left out of its trend
    field.values[6, 2:] = np.nan  # two years only: no trend
    trends = point_trends(field)
    for row in (0, 5, 100, 1500):
        keep = np.isfinite(field.values[row])
        fit = stats.linregress(field.years[keep], field.values[row, keep])
        half = stats.t.ppf(0.975, keep.sum() - 2) * fit.stderr
        assert trends.per_decade[row] == pytest.approx(fit.slope * 10, rel=1e-10)
        assert trends.half_ci95[row] == pytest.approx(half * 10, rel=1e-8)
        assert trends.years[row] == keep.sum()
    assert np.isnan(trends.per_decade[6]) and trends.years[6] == 2


def test_cell_areas_are_the_spheres() -> None:
    lat = np.arange(-90.0, 90.01, 0.25)
    assert cell_areas(lat).sum() == pytest.approx(2.0)  # sin(90) - sin(-90): the sphere per radian of longitude
    # The Arctic is 1 - sin(66.5) of the hemisphere's 1, however the lattice cuts it.
    assert cell_areas(lat, ARCTIC).sum() == pytest.approx(1 - np.sin(np.radians(66.5)))
    assert cell_areas(np.arange(-90.0, 90.01, 5.0), ARCTIC).sum() == pytest.approx(1 - np.sin(np.radians(66.5)))
    # A polar point's cell is a cap of half a step; an equatorial cell is ~cos(0) x the step.
    one = cell_areas(lat)
    assert one[0] == pytest.approx(1 - np.cos(np.radians(0.125)))
    assert one[360] == pytest.approx(2 * np.sin(np.radians(0.125)))


def test_an_area_weighted_mean_is_not_the_lattices_plain_mean() -> None:
    lat = np.repeat(np.arange(-90.0, 90.01, 1.0), 4)
    values = np.sin(np.radians(lat)) ** 2  # its mean over the sphere is 1/3
    got = area_mean(lat, values)
    assert got["mean"] == pytest.approx(1 / 3, abs=1e-4) and got["covered"] == pytest.approx(1.0)
    assert values.mean() == pytest.approx(0.5, abs=0.01)  # the plain mean counts a polar cell as an equatorial one
    values[lat > 80] = np.nan
    assert area_mean(lat, values)["covered"] == pytest.approx(1 - (1 - np.sin(np.radians(80.5))) / 2)
    with pytest.raises(ReadError, match="no grid point"):
        area_mean(lat[lat < 0], values[lat < 0], ARCTIC)


def test_the_atlas_ranks_and_says_which_years_it_used() -> None:
    field = _field()
    field.values[:, -1] = np.nan  # 2021 complete nowhere
    field.values[3, 0] = np.nan  # 1979 not complete at one point
    data = atlas(field, top=5)
    trends = point_trends(field).per_decade
    order = np.argsort(-trends, kind="stable")[:5]
    assert [r["grid_point"]["location_id"] for r in data["ranking"]] == field.location_id[order].tolist()
    assert [r["rank"] for r in data["ranking"]] == [1, 2, 3, 4, 5]
    assert data["ranking"][0]["trend_per_decade"]["ols"] == pytest.approx(trends[order[0]])
    assert data["complete_years"] == list(range(1980, 2021))
    assert any("2021" in n for n in data["notes"]) and any("1979" in n for n in data["notes"])
    field.values[4, 1:6] = np.nan  # 1980-1984 not complete at another: one range, not five years
    assert "complete at some points only (each unit's trend uses its own): 1979-1984" in atlas(field)["notes"][0]
    low = atlas(field, bottom=3)
    assert low["order"] == "lowest" and low["ranking"][0]["trend_per_decade"]["ols"] == pytest.approx(np.nanmin(trends))
    assert data["zonal"]["arctic_amplification"] == pytest.approx(
        data["zonal"]["arctic"]["mean"] / data["zonal"]["global"]["mean"])
    with pytest.raises(ReadError, match="one or the other"):
        atlas(field, top=3, bottom=3)
    with pytest.raises(ReadError, match="at least 1"):
        atlas(field, top=0)


def test_the_anomaly_is_the_last_ten_years_against_the_baseline() -> None:
    field = _field()
    anomaly, base = anomalies(field, (1991, 2020))
    years = field.years
    want = field.values[:, years >= 2012].mean(axis=1) - field.values[:, (years >= 1991) & (years <= 2020)].mean(axis=1)
    assert np.allclose(anomaly, want) and np.allclose(base, field.values[:, (years >= 1991) & (years <= 2020)].mean(1))
    assert np.isnan(anomalies(field, (1900, 1930))[0]).all()


def test_a_city_is_ranked_at_its_nearest_grid_point() -> None:
    field = _field()
    city = Place("Somewhere", "XX", 47.6, 11.2, 1_500_000, "Europe/Berlin", 1)
    small = Place("Village", "XX", 10.0, 10.0, 500, "Europe/Berlin", 2)
    units = city_units(field, [city, small], 1000)
    assert len(units) == 1 and units[0].place == city
    assert (field.latitude[units[0].row], field.longitude[units[0].row]) == (50.0, 10.0)
    east = Place("Dateline", "XX", 0.0, 179.0, 2_000_000, "Pacific/Fiji", 3)
    (unit,) = city_units(field, [east], 0)
    assert (field.latitude[unit.row], field.longitude[unit.row]) == (0.0, 180.0)
    data = atlas(field, by="city", cities=[city, east], top=2)
    assert {r["city"]["name"] for r in data["ranking"]} == {"Somewhere", "Dateline"} and data["units"] == 2


def test_the_trend_map_is_a_dataarray_on_the_lattice() -> None:
    field = _field(step=10.0)
    grid = trend_map(field)
    assert grid.dims == ("latitude", "longitude") and grid.shape == (19, 36)
    row = 40
    got = grid.sel(latitude=field.latitude[row], longitude=field.longitude[row]).item()
    assert got == pytest.approx(point_trends(field).per_decade[row])
    assert grid.attrs["units"] == "degC/decade"
    # A few scattered points: their cells on the lattice, the gaps between them empty, not stretched.
    keep = np.flatnonzero(np.isin(field.location_id, field.location_id[[40, 41, 300]]))
    sparse = YearlyField(field.table, field.variable, field.statistic, field.unit, field.location_id[keep],
                         field.latitude[keep], field.longitude[keep], field.years, field.values[keep])
    drawn = trend_map(sparse)
    lats = np.unique(sparse.latitude)
    assert drawn.shape[0] == round((lats[-1] - lats[0]) / 10) + 1 and int(np.isfinite(drawn.values).sum()) == 3
    for row in range(3):
        at = drawn.sel(latitude=sparse.latitude[row], longitude=sparse.longitude[row]).item()
        assert at == pytest.approx(point_trends(sparse).per_decade[row])


def _region(name: str, field: YearlyField, rows: list[int], weights: list[float], extra_ids: tuple[int, ...] = ()
            ) -> Region:
    ids = np.concatenate([field.location_id[rows], np.array(extra_ids, dtype=np.int64)])
    w = np.concatenate([weights, np.ones(len(extra_ids))])
    order = np.argsort(ids)
    return Region(name, "test", None, None, ids=ids[order].astype(np.int64), weights=w[order],
                  latitudes=np.zeros(ids.size), longitudes=np.zeros(ids.size))


def test_a_regions_year_is_its_points_weighted_mean_and_missing_if_one_is() -> None:
    field = _field(step=10.0)
    east, west = int(np.flatnonzero((field.latitude == 0) & (field.longitude == 180))[0]), \
        int(np.flatnonzero((field.latitude == 0) & (field.longitude == -170))[0])
    a = _region("A", field, [10, 11, 12], [1.0, 2.0, 3.0], extra_ids=(3,))  # id 3: no point of the field
    dateline = _region("Across", field, [east, west], [1.0, 1.0])
    nowhere = Region("Nowhere", "test", None, None, ids=np.array([2], dtype=np.int64), weights=np.ones(1),
                     latitudes=np.zeros(1), longitudes=np.zeros(1))
    field.values[11, 4] = np.nan  # one point's year missing: the region's year is missing
    regional, kept = regional_field(field, [a, nowhere, dateline])
    assert [r.name for r in kept] == ["A", "Across"] and kept[0].points == 3 and kept[0].left_out == 1
    want = (field.values[10] + 2 * field.values[11] + 3 * field.values[12]) / 6
    assert np.isnan(regional.values[0, 4]) and np.isnan(want[4])
    assert np.allclose(regional.values[0], want, equal_nan=True)
    assert regional.latitude[0] == pytest.approx((field.latitude[[10, 11, 12]] * [1, 2, 3]).sum() / 6)
    assert abs(regional.longitude[1]) == pytest.approx(175.0)  # the circular mean of 180 and -170
    assert regional.location_id[0] == field.location_id[12]  # the heaviest point's
    data = atlas(field, by="country", regions=[a, dateline], left_out=["Far"], top=2)
    assert {r["country"]["name"] for r in data["ranking"]} == {"A", "Across"} and data["units"] == 2
    assert all("grid_point" not in r for r in data["ranking"])
    assert any("Far" in n for n in data["notes"])
    trend = point_trends(regional).per_decade[0]
    keep = np.isfinite(want)
    assert trend == pytest.approx(stats.linregress(field.years[keep], want[keep]).slope * 10, rel=1e-10)
    with pytest.raises(ReadError, match="no country has a grid point"):
        atlas(field, by="country", regions=[nowhere])
