"""read.years: a series' range cut at the copied years' bounds, the copy's stretches in time order."""

from __future__ import annotations

from datetime import UTC, datetime

from era5etl.read.years import Part, split_range, year_runs


def _t(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def test_consecutive_years_make_one_run() -> None:
    assert year_runs([2001, 1999, 2000, 2005]) == [(_t(1999), _t(2002)), (_t(2005), _t(2006))]
    assert year_runs([]) == []


def test_no_copy_reads_the_table_alone() -> None:
    assert split_range("w", True, [], None, None) == [Part("w", None, None, True)]
    assert split_range("w", False, [], _t(2000), _t(2001)) == [Part("w", _t(2000), _t(2001), False)]


def test_an_open_range_reads_before_between_and_after_the_copied_runs() -> None:
    runs = year_runs([1940, 1941, 1950])
    assert split_range("w", True, runs, None, None) == [
        Part("w", None, _t(1940), True), Part("w_years", _t(1940), _t(1942)),
        Part("w", _t(1942), _t(1950), True), Part("w_years", _t(1950), _t(1951)),
        Part("w", _t(1951), None, True)]


def test_a_range_is_cut_inside_the_runs() -> None:
    runs = year_runs([2023, 2024, 2025])
    assert split_range("w", True, runs, _t(2024, 2, 3), _t(2026, 2)) == [
        Part("w_years", _t(2024, 2, 3), _t(2026)), Part("w", _t(2026), _t(2026, 2), True)]
    # wholly inside the copy: the copy alone
    assert split_range("w", True, runs, _t(2023, 5), _t(2023, 6)) == [Part("w_years", _t(2023, 5), _t(2023, 6))]
    # wholly outside it: the table alone
    assert split_range("w", True, runs, _t(2019), _t(2020)) == [Part("w", _t(2019), _t(2020), True)]
    # ending where the copy begins
    assert split_range("w", True, runs, None, _t(2023)) == [Part("w", None, _t(2023), True)]
