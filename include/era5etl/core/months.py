"""Calendar months: the unit every run loads, and the arithmetic on them (UTC throughout)."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import overload

from era5etl.core.errors import InputError

HOURS_A_DAY = 24  # hours of a calendar day in UTC (and at any fixed offset)

_MONTH_RE = re.compile(r"^(\d{4})-(\d{2})$")


@overload
def as_utc(moment: datetime) -> datetime: ...
@overload
def as_utc(moment: None) -> None: ...
def as_utc(moment: datetime | None) -> datetime | None:
    """The product's one reading of a moment: a naive one is UTC, an aware one is converted to UTC."""
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


@dataclass(frozen=True, order=True)
class Month:
    year: int
    month: int

    @classmethod
    def parse(cls, text: str) -> Month:
        m = _MONTH_RE.match(text.strip())
        if not m:
            raise InputError(f"month {text!r} is not of the form YYYY-MM (for example 2024-01)")
        year, month = int(m.group(1)), int(m.group(2))
        if not 1 <= month <= 12:
            raise InputError(f"month {text!r}: month number {month} is not 01..12")
        if year < 1940:
            raise InputError(f"month {text!r}: ERA5 starts in January 1940")
        return cls(year, month)

    @classmethod
    def of(cls, moment: datetime) -> Month:
        return cls(moment.year, moment.month)

    def __str__(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"

    @property
    def start(self) -> datetime:
        return datetime(self.year, self.month, 1, tzinfo=UTC)

    @property
    def end(self) -> datetime:
        """The first instant of the next month (exclusive bound)."""
        return self.next().start

    @property
    def days(self) -> int:
        return calendar.monthrange(self.year, self.month)[1]

    @property
    def hours(self) -> int:
        return self.days * 24

    def next(self) -> Month:
        return Month(self.year + 1, 1) if self.month == 12 else Month(self.year, self.month + 1)

    def plus(self, n: int) -> Month:
        """The month ``n`` calendar months later (earlier when ``n`` is negative)."""
        index = self.year * 12 + self.month - 1 + n
        return Month(index // 12, index % 12 + 1)

    def day_starts(self) -> list[datetime]:
        return [self.start + timedelta(days=d) for d in range(self.days)]
