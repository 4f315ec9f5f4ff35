"""The Data view's model: which table and area hold data, over which hours, and what to show first.

Pure: the ledger's rows in, a :class:`DataView` out (``report.data.load_data_view`` reads them). A
month counts as loaded when the ledger says ``loaded`` or ``validated``; the view's range runs from the
first hour of the first such month to the last hour of the last, and the place and hour shown first
are the area's centre and the last loaded hour: the series of one place over every loaded year and a
snapshot of the area, the two figures of the "trillion rows" blog.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from era5etl.core.errors import InputError
from era5etl.core.grid import Area, lattice
from era5etl.core.months import Month
from era5etl.report.model import Target

LOADED_STATES = ("loaded", "validating", "validated")
HOUR = timedelta(hours=1)


@dataclass(frozen=True)
class DataView:
    table: str | None
    area: str | None
    grid: str | None = None
    months: tuple[date, ...] = ()  # loaded months, in order
    dataset: str | None = None  # core.datasets' name, as the ledger records it
    levels: tuple[int, ...] = ()  # hPa, a table on pressure levels: the levels its months hold
    targets: Sequence[Target] = field(default_factory=list)
    generated_at: datetime | None = None

    @property
    def first_hour(self) -> datetime | None:
        return Month(self.months[0].year, self.months[0].month).start if self.months else None

    @property
    def last_hour(self) -> datetime | None:
        return Month(self.months[-1].year, self.months[-1].month).end - HOUR if self.months else None

    @property
    def bounds(self) -> Area | None:
        try:
            return Area.parse(self.area) if self.area else None
        except InputError:
            return None

    @property
    def centre(self) -> tuple[float, float] | None:
        """The grid point nearest the middle of the area: where the series is shown first."""
        box = self.bounds
        if box is None:
            return None
        step = _step(self.grid)
        lats = lattice(box.south, box.north, step)
        lons = lattice(box.west, box.east, step)
        if not lats or not lons:
            return float((box.north + box.south) / 2), float((box.west + box.east) / 2)
        return float(lats[(len(lats) - 1) // 2]), float(lons[(len(lons) - 1) // 2])


def _step(grid: str | None) -> Decimal:
    try:
        step = Decimal(grid or "0.25")
    except InvalidOperation:
        return Decimal("0.25")
    return step if step.is_finite() and step > 0 else Decimal("0.25")


def build_data_view(table: str | None, area: str | None, month_rows: Sequence[Mapping[str, Any]],
                    targets: Sequence[Target] = (), generated_at: datetime | None = None) -> DataView:
    """The view of ``table`` and ``area`` from the ledger's rows of that pair (``ledger.month_rows``)."""
    loaded = sorted({r["month"] for r in month_rows if r.get("state") in LOADED_STATES and (r.get("rows") or 0) > 0})
    grids = sorted({str(r["grid"]) for r in month_rows if r.get("grid")})
    datasets = sorted({str(r["dataset"]) for r in month_rows if r.get("dataset")})
    levels = sorted({int(level) for r in month_rows if r.get("state") in LOADED_STATES
                     for level in (r.get("levels") or ())})
    return DataView(table=table, area=area, grid=grids[0] if grids else None, months=tuple(loaded),
                    dataset=datasets[0] if datasets else None, levels=tuple(levels),
                    targets=list(targets), generated_at=generated_at)
