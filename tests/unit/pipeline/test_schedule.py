"""The schedule rules: when a month is published, and when its ERA5T should be replaced by final ERA5."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import VARIABLES
from era5etl.fetch import MonthRequest
from era5etl.pipeline import schedule
from localcds import synth


def test_publication_target_is_month_end_plus_delay() -> None:
    assert schedule.publication_target(Month(2024, 1), timedelta(days=6)) == datetime(2024, 2, 7, tzinfo=UTC)
    assert schedule.publication_target(Month(2024, 12), timedelta(days=6)) == datetime(2025, 1, 7, tzinfo=UTC)
    # Leap February ends on the 29th: its target is still six days after the month's last instant.
    assert schedule.publication_target(Month(2024, 2), timedelta(days=6)) == datetime(2024, 3, 7, tzinfo=UTC)


def test_publication_target_is_late_enough_for_the_cds_latency() -> None:
    # At the target, the month's last hour is published by the CDS rule (now - 5 days).
    month = Month(2024, 1)
    target = schedule.publication_target(month)
    last_hour = month.end - timedelta(hours=1)
    assert target - synth.ERA5T_LATENCY >= last_hour


def test_run_month_prefers_the_param_then_the_interval() -> None:
    start = datetime(2024, 3, 1, tzinfo=UTC)
    assert schedule.month_of_run("2023-07", start) == Month(2023, 7)
    assert schedule.month_of_run("", start) == Month(2024, 3)
    assert schedule.month_of_run(None, None) is None


@pytest.mark.parametrize(("env", "days"), [({}, 6.0), ({"ERA5_PUBLICATION_DELAY": "8"}, 8.0),
                                           ({"ERA5_PUBLICATION_DELAY": "5.5"}, 5.5)])
def test_publication_delay_from_env(env: dict[str, str], days: float, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ERA5_PUBLICATION_DELAY", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert schedule.publication_target(Month(2024, 1)) == Month(2024, 2).start + timedelta(days=days)


@pytest.mark.parametrize("month", [Month(2023, 11), Month(2023, 12), Month(2024, 1), Month(2024, 2)])
def test_final_expected_at_matches_the_local_cds_rule(month: Month) -> None:
    due = schedule.final_expected_at(month, 3)
    assert synth.expver_for(month, due.date()) == "0001"
    assert synth.expver_for(month, (due - timedelta(days=1)).date()) == "0005"
    assert schedule.final_expected_at(Month(2023, 11), 3) == datetime(2024, 3, 1, tzinfo=UTC)


def _row(month: str, expver: list[str] | None, state: str = "validated", table: str = "weather") -> dict[str, Any]:
    return {"table_name": table, "month": month, "area": "46/7/45/8", "grid": "0.25", "state": state,
            "expver": expver}


def test_select_to_finalize_picks_era5t_months_final_data_covers() -> None:
    now = datetime(2024, 6, 15, tzinfo=UTC)
    rows = [
        _row("2024-01", ["0005"]),  # final since 2024-05-01: picked
        _row("2024-02", ["0001", "0005"]),  # a mixed month still holds ERA5T hours: picked
        _row("2024-03", ["0005"]),  # final from 2024-07-01: not yet
        _row("2023-12", ["0001"]),  # already final
        _row("2023-11", None),  # never staged
        _row("2023-10", ["0005"], state="loading"),  # a run is working on it
        _row("2023-09", ["0005"], state="failed"),  # failed at rest: a reload may mend it
    ]
    picked = schedule.select_to_finalize(rows, now, 3)
    assert [p.month for p in picked] == ["2024-01", "2024-02", "2023-09"]
    assert picked[0].conf("final-20240615") == {"month": "2024-01", "area": "46/7/45/8", "grid": "0.25",
                                                "table": "weather", "revision": "final-20240615"}
    # On the day final data is due the month is picked, the day before it is not.
    assert [p.month for p in schedule.select_to_finalize([rows[2]], datetime(2024, 7, 1, tzinfo=UTC), 3)] == [
        "2024-03"]
    assert schedule.select_to_finalize([rows[2]], datetime(2024, 6, 30, 23, tzinfo=UTC), 3) == []
    # A longer wait configured: fewer months.
    assert schedule.select_to_finalize(rows[:2], now, 5) == []


def test_revision_changes_the_staging_folder_but_not_the_cds_request() -> None:
    base = MonthRequest(Month(2024, 1), Area.parse("46/7/45/8"), Grid(), VARIABLES)
    final = MonthRequest(Month(2024, 1), Area.parse("46/7/45/8"), Grid(), VARIABLES, revision="final-20240615")
    assert final.hash != base.hash
    assert final.cds_request() == base.cds_request()
    # No revision: the hash every earlier download was staged under.
    assert base.hash == MonthRequest(Month(2024, 1), Area.parse("46/7/45/8"), Grid(), VARIABLES, revision="").hash
    assert schedule.revision_for(datetime(2024, 6, 15, 12, tzinfo=UTC)) == "final-20240615"
