"""The cost model and the split of a month under the CDS cost limit; the fetch options. No network."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import VARIABLES, Variable
from era5etl.fetch import CostLimitError, FetchOptions, MonthRequest, cost, plan
from era5etl.fetch.api import retry_after_seconds


def month_request(month: str = "2024-01", area: str = "50/5/45/10",
                  variables: tuple[Variable, ...] = VARIABLES) -> MonthRequest:
    return MonthRequest(Month.parse(month), Area.parse(area), Grid(), variables)


def test_fields_are_the_product_of_the_counted_keys_and_the_area_weighs_only_netcdf() -> None:
    request = month_request().cds_request()
    c = cost.estimate(request)
    assert c.fields == 6 * 31 * 24
    points = 21 * 21  # 50/5/45/10 on the 0.25 degree grid
    assert c.weight == pytest.approx(1 + points / (721 * 1440))
    assert c.data_format == "netcdf" and c.limit() == cost.DEFAULT_LIMITS["netcdf"]

    grib = cost.estimate({**request, "data_format": "grib"})
    assert (grib.fields, grib.weight, grib.limit()) == (c.fields, 1.0, cost.DEFAULT_LIMITS["grib"])
    assert cost.DEFAULT_LIMITS["netcdf"] < cost.DEFAULT_LIMITS["grib"]

    whole_globe = cost.estimate({**request, "area": [90, -180, -90, 180]})
    assert whole_globe.weight == pytest.approx(2.0)
    no_area = {k: v for k, v in request.items() if k != "area"}
    assert cost.estimate(no_area).weight == pytest.approx(2.0)
    # "a/b/c" strings count like lists, as the CDS splits them.
    assert cost.estimate({**request, "variable": "2m_temperature/total_precipitation"}).fields == 2 * 31 * 24
    assert cost.limit_for("netcdf", {"netcdf": 10.0}) == 10.0


@pytest.mark.parametrize(("n_vars", "n_days", "limit"), [
    (6, 31, 1e9), (6, 31, 4464), (6, 31, 4463), (6, 31, 1200), (6, 30, 144), (6, 28, 143), (6, 31, 50),
    (1, 31, 24), (9, 31, 3000), (2, 29, 47),
])
def test_split_covers_every_variable_day_once_under_the_limit_in_few_parts(
    n_vars: int, n_days: int, limit: float
) -> None:
    parts = cost.split(n_vars, n_days, 24, 1.0, limit, groups=[i % 2 for i in range(n_vars)])
    cells = [(v, d) for p in parts for v, d in itertools.product(p.variables, p.days)]
    assert sorted(cells) == sorted(itertools.product(range(n_vars), range(n_days)))
    assert all(len(p.variables) * len(p.days) * 24 <= limit for p in parts)
    # Days are runs, so a part is one contiguous request.
    assert all(list(p.days) == list(range(p.days[0], p.days[-1] + 1)) for p in parts)
    whole = n_vars * n_days * 24
    if whole <= limit:
        assert len(parts) == 1
    elif n_vars * 24 <= limit:  # a day of everything fits: only days are split, as evenly as can be
        assert all(len(p.variables) == n_vars for p in parts)
        assert len(parts) == -(-n_days // int(limit // (n_vars * 24)))
        assert max(len(p.days) for p in parts) - min(len(p.days) for p in parts) <= 1


def test_variables_are_split_only_when_one_day_is_over_and_step_types_stay_apart() -> None:
    # 4 instant + 2 accumulated variables; one day of all six (144) is over 100, four of them fit.
    parts = cost.split(6, 31, 24, 1.0, 100, groups=[0, 0, 0, 0, 1, 1])
    assert {p.variables for p in parts} == {(0, 1, 2, 3), (4, 5)}
    with pytest.raises(cost.CostError, match="raise the cost limit"):
        cost.split(6, 31, 24, 1.0, 23)


def test_plan_turns_the_split_into_requests_the_service_accepts() -> None:
    month = month_request("2024-02")  # 29 days
    (single,) = plan(month)
    assert single.hash == month.hash and single.cds_request() == month.cds_request()

    parts = plan(month, cost_limit=1500)
    assert len(parts) == 3 and [p.index for p in parts] == [0, 1, 2]
    assert all(p.cost().value <= 1500 for p in parts)
    assert [d for p in parts for d in p.days] == list(range(1, 30))
    assert len({p.hash for p in parts}) == 3 and month.hash not in {p.hash for p in parts}
    first = parts[0].cds_request()
    assert first["day"] == [f"{d:02d}" for d in parts[0].days]
    assert {k: v for k, v in first.items() if k != "day"} == {
        k: v for k, v in month.cds_request().items() if k != "day"}
    assert [p.stem for p in parts] == ["part-00", "part-01", "part-02"]

    with pytest.raises(CostLimitError, match="raise the cost limit") as err:
        plan(month, cost_limit=10)
    assert err.value.limit == 10 and err.value.estimate == month.cost().value


def test_options_from_the_environment_and_backoff_that_honours_the_service() -> None:
    opts = FetchOptions.from_env({"ERA5_CDS_COST_LIMIT": "5000", "ERA5_CDS_MAX_PARALLEL": "2",
                                  "ERA5_CDS_RETRIES": "3", "ERA5_CDS_BACKOFF_BASE": "0.5",
                                  "ERA5_CDS_MAX_RETRY_AFTER": "30"})
    assert (opts.cost_limit, opts.max_parallel, opts.retries, opts.backoff_base) == (5000, 2, 3, 0.5)
    assert FetchOptions.from_env({}) == FetchOptions()
    with pytest.raises(ValueError, match="ERA5_CDS_RETRIES"):
        FetchOptions.from_env({"ERA5_CDS_RETRIES": "many"})
    with pytest.raises(ValueError, match=r"ERA5_CDS_MAX_PARALLEL='0': Input should be greater than or equal to 1"):
        FetchOptions.from_env({"ERA5_CDS_MAX_PARALLEL": "0"})

    for attempt in range(1, 8):
        pause = opts.backoff(attempt)
        ceiling = min(opts.backoff_cap, 0.5 * 2 ** (attempt - 1))
        assert ceiling / 2 <= pause <= ceiling
    assert opts.backoff(1, hint=7.0) == 7.0  # the service's Retry-After, not our guess
    assert opts.backoff(1, hint=3600.0) == 30.0  # but never longer than allowed


def test_retry_after_in_seconds_or_as_a_date() -> None:
    class Response:
        def __init__(self, value: str | None) -> None:
            self.headers = {} if value is None else {"Retry-After": value}

    assert retry_after_seconds(Response("120")) == 120.0  # type: ignore[arg-type]
    assert retry_after_seconds(Response("0.25")) == 0.25  # type: ignore[arg-type]
    assert retry_after_seconds(Response(None)) is None  # type: ignore[arg-type]
    assert retry_after_seconds(Response("soon")) is None  # type: ignore[arg-type]
    when = (datetime.now(UTC) + timedelta(seconds=90)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    got = retry_after_seconds(Response(when))  # type: ignore[arg-type]
    assert got is not None and 80 <= got <= 91
