"""Publication: which hours the CDS holds yet (ERA5T latency) and a month's expver (ERA5T or final)."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from era5etl.core.months import Month
from localcds.synth.request import SynthRequest

# ERA5T reaches the CDS about five days behind real time; later hours simply are not there yet.
ERA5T_LATENCY = timedelta(days=5)
# ERA5T ("0005") is replaced by final ERA5 ("0001") some 2-3 months later; a month counts as final
# once it ended more than three months ago.
FINAL_AFTER_MONTHS = 3


class NoDataError(RuntimeError):
    """A well-formed request whose dates hold no data (yet); the CDS fails such a job."""


def expver_for(month: Month, today: date) -> str:
    """"0001" once the month is final ERA5, "0005" while it is still ERA5T."""
    end = month.end.date()  # first day of the next month
    index = end.year * 12 + end.month - 1 + FINAL_AFTER_MONTHS
    cutoff = date(index // 12, index % 12 + 1, 1)
    return "0001" if cutoff <= today else "0005"


def available_times(req: SynthRequest, now: datetime) -> list[datetime]:
    """The requested hours already published: ERA5T lags real time by about five days."""
    latest = (now - ERA5T_LATENCY).replace(minute=0, second=0, microsecond=0)
    return [t for t in req.times if t <= latest]
