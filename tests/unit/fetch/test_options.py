"""How hard a fetch tries (fetch.options): the ERA5_CDS_* settings read into FetchOptions, and the
pause before each retry (the service's hint within bounds, else doubling with jitter in the upper half)."""

from __future__ import annotations

import pytest

from era5etl.fetch import FetchOptions


def test_the_settings_are_read_from_the_environment_given() -> None:
    options = FetchOptions.from_env({"ERA5_CDS_RETRIES": "9", "ERA5_CDS_POLL_BASE": "0.5",
                                     "ERA5_CDS_MAX_PARALLEL": "2", "ERA5_CDS_COST_LIMIT": "1234"})
    assert (options.retries, options.poll_base, options.max_parallel, options.cost_limit) == (9, 0.5, 2, 1234)
    assert options.backoff_cap == FetchOptions().backoff_cap  # what is not set keeps its default


def test_a_hint_is_honoured_up_to_the_longest_allowed() -> None:
    options = FetchOptions(max_hint=30.0)
    assert options.backoff(1, hint=12.5) == 12.5
    assert options.backoff(1, hint=3600.0) == 30.0
    assert options.backoff(1, hint=-5.0) == 0.0


@pytest.mark.parametrize(("attempt", "ceiling"), [(1, 2.0), (2, 4.0), (3, 8.0), (6, 60.0), (30, 60.0)])
def test_pauses_double_up_to_the_cap_with_jitter_in_the_upper_half(attempt: int, ceiling: float) -> None:
    options = FetchOptions(backoff_base=2.0, backoff_cap=60.0)
    pauses = [options.backoff(attempt) for _ in range(200)]
    assert all(ceiling / 2 <= p <= ceiling for p in pauses), (min(pauses), max(pauses))
    assert len(set(pauses)) > 1  # jittered: parallel tasks that failed together do not retry in step
