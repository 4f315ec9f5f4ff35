"""The page's fetch figures: the attempt that downloaded, not a retry that found the download staged."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from era5etl.report.model import build

MONTH = date(2022, 3, 1)
T0 = datetime(2026, 11, 23, 12, tzinfo=UTC)


def _fetch(seconds: float, reused: bool | None, at: datetime) -> dict[str, Any]:
    detail = {} if reused is None else {"reused": reused}
    return {"month": MONTH, "task": "fetch", "rows": 0, "bytes": 80_600_000, "seconds": seconds,
            "recorded_at": at, "detail": detail}


def _shown(*rows: dict[str, Any]) -> float:
    d = build(table="t", area="46/7/45/8", month_rows=[{"month": MONTH, "state": "loaded"}], task_rows=rows)
    month = d.month(MONTH)
    assert month is not None
    return month.tasks["fetch"].seconds


def test_a_reuse_after_the_download_does_not_hide_it_in_either_order() -> None:
    download, retry = _fetch(8.0, False, T0), _fetch(0.001, True, T0 + timedelta(minutes=1))
    assert _shown(download, retry) == 8.0
    assert _shown(retry, download) == 8.0


def test_the_latest_download_wins_and_a_reuse_alone_is_shown() -> None:
    assert _shown(_fetch(8.0, False, T0), _fetch(4.0, False, T0 + timedelta(hours=1))) == 4.0
    assert _shown(_fetch(0.001, True, T0)) == 0.001
    # Rows recorded before the detail said whether it reused count as downloads.
    assert _shown(_fetch(6.0, None, T0), _fetch(0.001, True, T0 + timedelta(minutes=1))) == 6.0
