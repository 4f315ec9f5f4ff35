"""When a month can be loaded, and when its preliminary data (ERA5T) should be replaced by final ERA5.

The CDS publishes ERA5T about five days behind real time, so a month's run waits until the month's
end plus ``ERA5_PUBLICATION_DELAY`` (days, default 6: a day of margin). Those data carry expver
"0005"; final ERA5 ("0001") replaces them two to three months later. The ledger records which a
month holds, so :func:`select_to_finalize` picks the months still holding ERA5T once final data
should exist (``ERA5_FINAL_AFTER_MONTHS`` calendar months after the month's end, default 3, the rule
of the local CDS); :mod:`era5etl.pipeline.finalize` reloads them.

Policy only: pure functions of their arguments and the settings, unit-tested without a database.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from era5etl import settings
from era5etl.core.expver import PRELIMINARY
from era5etl.core.months import Month
from era5etl.track.ledger import SETTLED

# -------------------------------------------------------------------------------------------------
# Publication


def month_of_run(month_param: str | None, interval_start: datetime | None) -> Month | None:
    """The month a run loads: the ``month`` param when given, else its data interval's start."""
    if month_param:
        return Month.parse(month_param)
    if interval_start is None:
        return None
    return Month.of(interval_start.astimezone(UTC))


def publication_target(month: Month, delay: timedelta | None = None) -> datetime:
    """The moment every hour of ``month`` is published (as ERA5T at least)."""
    return month.end + (settings.load().publication_delay_td if delay is None else delay)


# -------------------------------------------------------------------------------------------------
# ERA5T -> final


def final_expected_at(month: Month, after_months: int | None = None) -> datetime:
    """When final ERA5 should cover ``month``: ``after_months`` calendar months after its end."""
    n = settings.load().final_after_months if after_months is None else after_months
    return month.next().plus(n).start


@dataclass(frozen=True)
class Finalize:
    """A ledger month holding ERA5T although final ERA5 should exist by now."""

    table: str
    month: str
    area: str
    grid: str
    expver: list[str]
    state: str
    dataset: str = "single-levels"  # what the ledger says the month was loaded from
    levels: tuple[int, ...] = ()

    def conf(self, revision: str) -> dict[str, Any]:
        """The run conf (of its dataset's monthly DAG) that reloads it."""
        conf: dict[str, Any] = {"month": self.month, "area": self.area, "grid": self.grid, "table": self.table,
                                "revision": revision}
        if self.dataset != "single-levels":
            conf["dataset"] = self.dataset
        if self.levels:
            conf["levels"] = list(self.levels)
        return conf


def select_to_finalize(rows: Iterable[Mapping[str, Any]], now: datetime,
                       after_months: int | None = None) -> list[Finalize]:
    """The ledger rows (as :func:`era5etl.track.ledger.months` returns them) to reload as final ERA5.

    A month is picked when any of its hours is ERA5T, no run is working on it, and final data
    should exist. A month whose reload still got ERA5T stays in the ledger as ERA5T and is picked
    again next time.
    """
    n = settings.load().final_after_months if after_months is None else after_months
    picked = []
    for row in rows:
        expver = list(row.get("expver") or [])
        if PRELIMINARY not in expver or row["state"] not in SETTLED:
            continue
        month = Month.parse(str(row["month"]))
        if final_expected_at(month, n) <= now:
            picked.append(Finalize(str(row["table_name"]), str(month), str(row["area"]), str(row["grid"]),
                                   expver, str(row["state"]), str(row.get("dataset") or "single-levels"),
                                   tuple(int(v) for v in row.get("levels") or ())))
    return picked


def revision_for(now: datetime) -> str:
    """The revision of a finalize reload: dated, so a reload that still got ERA5T is not reused later."""
    return f"final-{now.astimezone(UTC):%Y%m%d}"
