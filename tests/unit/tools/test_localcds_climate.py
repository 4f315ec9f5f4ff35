"""The local CDS's planted climate (tools/localcds/synth/climate.py): the calibrated area means on the
0.25 degree lattice and coarser ones, the hot spots on top, a per-point least-squares fit recovering
the trend; and the monthly means in closed form (fields.MeanSlice) against the average of the hours."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from scipy import stats

from era5etl.core.months import Month
from localcds.synth import climate, packing
from localcds.synth.climate import ARCTIC_TREND, GLOBAL_TREND, HOT_SPOTS, area_means, lattice, trend_per_decade
from localcds.synth.fields import F64, LINEAR_FIELDS, FieldSlice, MeanSlice
from localcds.synth.monthly import monthly_means
from localcds.synth.variables import META

YEARS = range(1979, 2022)  # Rantanen et al.'s span


@pytest.mark.parametrize("step", [0.25, 1.0, 2.5, 5.0])
def test_the_area_means_are_rantanen_et_al_s_on_every_lattice(step: float) -> None:
    lats, lons = lattice(step)
    world, arctic = area_means(lats, trend_per_decade(lats, lons))
    exact = 1e-9 if step == climate.CALIBRATION_STEP else None
    assert world == pytest.approx(GLOBAL_TREND, abs=exact or 0.001)
    assert arctic == pytest.approx(ARCTIC_TREND, abs=exact or 0.002)
    assert (climate.GLOBAL_TREND, climate.ARCTIC_TREND, climate.ARCTIC_SOUTH) == (0.191, 0.705, 66.5)


def _distances(lats: F64, lons: F64) -> F64:
    """(spot x lat x lon) great-circle distance in degrees to each hot spot's centre."""
    lat = np.radians(lats)[:, None]
    out = []
    for _, lat0, lon0, _, _ in HOT_SPOTS:
        cos_d = (np.sin(lat) * np.sin(np.radians(lat0))
                 + np.cos(lat) * np.cos(np.radians(lat0)) * np.cos(np.radians(lons - lon0))[None, :])
        out.append(np.degrees(np.arccos(np.clip(cos_d, -1.0, 1.0))))
    return np.stack(out)


@pytest.mark.parametrize("step", [0.25, 1.0, 2.5, 5.0])
def test_the_hot_spots_are_the_top_ranked_cells(step: float) -> None:
    lats, lons = lattice(step)
    trend = trend_per_decade(lats, lons)
    distance = _distances(lats, lons)
    peaks = []
    for i, (name, lat0, lon0, radius, _) in enumerate(HOT_SPOTS):
        inside = distance[i] <= radius
        j, k = np.unravel_index(np.argmax(np.where(inside, trend, -np.inf)), trend.shape)
        assert (lats[j], lons[k] % 360) == (lat0, lon0 % 360), name  # the centre is the spot's top cell
        peaks.append(trend[j, k])
    # Everything outside the spots (farther than two radii from each) is 0.4 K/decade below the lowest.
    outside = (distance > 2 * np.array([s[3] for s in HOT_SPOTS])[:, None, None]).all(axis=0)
    assert trend[outside].max() <= min(peaks) - 0.4
    assert trend.max() == pytest.approx(max(peaks))
    if step == 5.0:  # the atlas's lattice: its top three cells are the three centres, one a spot
        top = np.argsort(trend, axis=None)[::-1][:3]
        cells = {(lats[j], lons[k] % 360) for j, k in zip(*np.unravel_index(top, trend.shape), strict=True)}
        assert cells == {(s[1], s[2] % 360) for s in HOT_SPOTS}


def _yearly_means(lats: F64, lons: F64) -> F64:
    """(year x lat x lon) the anomaly's yearly means over YEARS, from the months' middles (the anomaly
    is linear within a year, so the mean of the hours is its value at their middle)."""
    out = []
    for year in YEARS:
        starts = [datetime(year, m, 1, tzinfo=UTC).timestamp() / 3600 for m in range(1, 13)]
        ends = [*starts[1:], datetime(year + 1, 1, 1, tzinfo=UTC).timestamp() / 3600]
        middles = np.array([(a + b - 1) / 2 for a, b in zip(starts, ends, strict=True)])
        weights = np.diff([*starts, ends[-1]])[:, None, None]
        out.append((climate.anomaly(0, middles, lats, lons) * weights).sum(axis=0) / weights.sum())
    return np.stack(out)


def test_least_squares_over_1979_2021_recovers_the_planted_trend() -> None:
    # A few points: the hot spots' centres, the pole, the tropics, the Southern Ocean.
    points = [(s[1], s[2]) for s in HOT_SPOTS] + [(90.0, 0.0), (75.0, 100.0), (0.0, 180.0), (-60.0, 30.0)]
    for lat, lon in points:
        lats, lons = np.array([lat]), np.array([lon])
        fit = stats.linregress(np.array(YEARS, dtype=np.float64), _yearly_means(lats, lons)[:, 0, 0])
        planted = trend_per_decade(lats, lons)[0, 0]
        # The noise's 0.3 K a year leaves +-0.037 K/decade on a slope over 43 years: 4 standard errors.
        assert 10 * fit.slope == pytest.approx(planted, abs=max(4 * 10 * fit.stderr, 0.1)), (lat, lon)
    # The whole 5 degree lattice, fitted per point and area-averaged: the figures come back.
    lats, lons = lattice(5.0)
    yearly = _yearly_means(lats, lons)
    t = np.array(YEARS, dtype=np.float64) - np.mean(YEARS)
    slopes = 10 * np.tensordot(t, yearly, axes=(0, 0)) / (t @ t)
    world, arctic = area_means(lats, slopes)
    assert world == pytest.approx(GLOBAL_TREND, abs=0.005)
    assert arctic == pytest.approx(ARCTIC_TREND, abs=0.02)
    noise = yearly - (slopes[None] / 10) * t[:, None, None] - yearly.mean(axis=0)
    assert noise.std() == pytest.approx(climate.INTERANNUAL_STD, rel=0.05)


def test_the_anomaly_is_zero_on_2000_01_01_and_constant_noise_within_a_year() -> None:
    lats, lons = np.array([10.0, -40.0]), np.array([0.0, 250.0])
    hours = np.array([datetime(2000, 1, 1, tzinfo=UTC).timestamp() / 3600]) + np.array([0.0, 24 * 200])
    a = climate.anomaly(3, hours, lats, lons)
    trend = trend_per_decade(lats, lons)
    assert a[1] - a[0] == pytest.approx(trend * 200 / 3652.425)  # the year's noise cancels
    assert climate.calendar_years(np.array([-1.0, 0.0, hours[0] - 1, hours[0]])).tolist() == [1969, 1970, 1999, 2000]


class _NoSpeckle(FieldSlice):
    """The hourly fields without the per-hour speckle: what MeanSlice's closed form is exactly the mean of."""

    def white(self, key: str) -> F64:
        return np.zeros((self.hours.size, self.lat_r.size, self.lon_r.size))


@pytest.mark.parametrize(("year", "month"), [(2020, 1), (2021, 2), (1979, 7)])
def test_the_closed_form_monthly_means_are_the_means_of_the_hours(year: int, month: int) -> None:
    lats, lons = np.linspace(80.0, -80.0, 17), np.arange(0.0, 360.0, 15.0)
    m = Month(year, month)
    start = int(m.start.timestamp())
    seconds = start + 3600 * np.arange(24 * m.days, dtype=np.int64)
    hourly, smooth = FieldSlice(0, seconds, lats, lons), _NoSpeckle(0, seconds, lats, lons)
    whole = MeanSlice(0, np.array([start]), 1, 24 * m.days, lats, lons)
    by_hour = MeanSlice(0, start + 3600 * np.arange(24, dtype=np.int64), 24, m.days, lats, lons)
    for name in sorted(LINEAR_FIELDS):
        exact = smooth.field(name)
        scale = max(1.0, float(np.abs(exact).max()))
        # Without the speckle the closed form is the hours' mean, to rounding.
        np.testing.assert_allclose(whole.field(name)[0], exact.mean(axis=0), atol=1e-9 * scale, err_msg=name)
        np.testing.assert_allclose(by_hour.field(name), exact.reshape(m.days, 24, *exact.shape[1:]).mean(axis=0),
                                   atol=1e-9 * scale, err_msg=name)
    # With it, t2m's hours average to within 0.02 K of the closed form (0.0198 K the largest over
    # these months and 33 x 48 points; by hour of day, 31 hours, 0.11 K).
    t2m = hourly.t2m
    assert np.abs(whole.t2m[0] - t2m.mean(axis=0)).max() < 0.02
    assert np.abs(by_hour.t2m - t2m.reshape(m.days, 24, *t2m.shape[1:]).mean(axis=0)).max() < 0.15
    with pytest.raises(ValueError, match="no closed-form mean"):
        whole.field("tp")


def test_monthly_means_of_t2m_come_from_the_closed_form_packed() -> None:
    lats, lons = np.array([60.0, 0.0, -45.0]), np.array([10.0, 200.0])
    m = Month(2010, 6)
    out = monthly_means(META["2m_temperature"], 0, m, [0], lats, lons, land=False, hourly_of_day=False)
    closed = MeanSlice(0, np.array([int(m.start.timestamp())]), 1, 24 * m.days, lats, lons).t2m
    np.testing.assert_array_equal(out, packing.grib_packed("t2m", closed).astype(np.float64))
    hod = monthly_means(META["2m_temperature"], 0, m, [0, 12], lats, lons, land=False, hourly_of_day=True)
    assert hod.shape == (2, 3, 2) and not np.allclose(hod[0], hod[1])  # the daily cycle


def test_era5_land_s_monthly_t2m_is_the_mean_of_its_hours_too() -> None:
    """ERA5-Land's t2m is the single-level field (land.land_field), so its closed-form monthly mean is
    the average of ERA5-Land's own hourly values, at sea NaN in both."""
    from localcds.synth.land import LAND_META, land_values

    lats, lons = np.linspace(70.0, -50.0, 13), np.arange(0.0, 360.0, 30.0)
    m, meta = Month(1995, 3), LAND_META["2m_temperature"]
    start = int(m.start.timestamp())
    hourly = land_values(meta, 0, start + 3600 * np.arange(24 * m.days, dtype=np.int64), lats, lons)
    out = monthly_means(meta, 0, m, [0], lats, lons, land=True, hourly_of_day=False)[0]
    sea = np.isnan(hourly[0])
    assert sea.any() and (~sea).any()
    np.testing.assert_array_equal(np.isnan(out), sea)
    assert np.abs(out[~sea] - hourly.mean(axis=0)[~sea]).max() < 0.02
