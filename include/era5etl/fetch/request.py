"""The request model: a month's CDS request, its hash, and the parts it is split into under the cost limit.

A request asks for one data format, NetCDF or GRIB (:data:`DATA_FORMATS`). The format is part of the
request the CDS sees, so the same month in GRIB and in NetCDF are two requests: two hashes, two
staging folders, two CDS jobs. GRIB is allowed larger requests (:mod:`era5etl.fetch.cost`), and one
GRIB file holds analyses and accumulations alike, so its parts need not keep step types apart.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any, get_args

from era5etl.core.datasets import SINGLE_LEVELS, Dataset
from era5etl.core.errors import InputError
from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.variables import Variable
from era5etl.fetch import cost as costing
from era5etl.fetch.errors import CostLimitError
from era5etl.settings import DataFormat

DATASET = SINGLE_LEVELS.collection  # the default collection

DATA_FORMATS: tuple[DataFormat, ...] = get_args(DataFormat)
DEFAULT_DATA_FORMAT: DataFormat = "netcdf"
# What a download in each format may be, as core.files.kind_of names it: the CDS sends NetCDF 3 or 4
# (or a ZIP of NetCDFs), GRIB (or a ZIP when asked for one).
FILE_KINDS: dict[DataFormat, frozenset[str]] = {
    "netcdf": frozenset({"nc3", "hdf5", "zip"}),
    "grib": frozenset({"grib", "zip"}),
}


def parse_data_format(text: str) -> DataFormat:
    """``netcdf`` or ``grib`` (any case); anything else is an InputError naming both."""
    value = text.strip().lower()
    if value not in DATA_FORMATS:
        raise InputError(f"data format {text!r}: expected one of {', '.join(DATA_FORMATS)}")
    return value


def _hash(request: Mapping[str, Any], collection: str = DATASET) -> str:
    # The collection is part of the key: the same month of two datasets is two downloads, each in its
    # own staging folder (single levels' hashes are the ones their staging folders are named by).
    canonical = json.dumps({"dataset": collection, **request}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class MonthRequest:
    month: Month
    area: Area
    grid: Grid
    variables: tuple[Variable, ...]
    # Not sent to the CDS: a new revision asks for a fresh download of the same request (ERA5T
    # replaced by final ERA5), so it must name another staging folder. Empty leaves the hash alone.
    revision: str = ""
    # Sent as the request's data_format, so it is part of every hash; NetCDF is the default format.
    data_format: DataFormat = DEFAULT_DATA_FORMAT
    # The CDS collection and its fixed request keys (Dataset.request_keys); single levels by default.
    dataset: Dataset = SINGLE_LEVELS
    # hPa, for a dataset with levels: sent as pressure_level; empty asks for all of the dataset's.
    levels: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.data_format not in DATA_FORMATS:
            raise InputError(f"data format {self.data_format!r}: expected one of {', '.join(DATA_FORMATS)}")
        object.__setattr__(self, "levels", self.dataset.parse_levels(self.levels))
        foreign = [v.cds_name for v in self.variables if v not in self.dataset.catalogue]
        if foreign:
            raise InputError(f"{', '.join(foreign)}: not variables of {self.dataset.name} "
                             f"({self.dataset.collection})")

    def cds_request(self) -> dict[str, Any]:
        levels = {"pressure_level": [str(level) for level in self.levels]} if self.dataset.has_levels else {}
        return {
            **{key: list(values) for key, values in self.dataset.request_keys.items()},
            **levels,
            "variable": [v.cds_name for v in self.variables],
            "year": [f"{self.month.year:04d}"],
            "month": [f"{self.month.month:02d}"],
            # The monthly means are asked for by month and time, without days (Dataset.request_times).
            **({} if self.dataset.monthly else {"day": [f"{d:02d}" for d in range(1, self.month.days + 1)]}),
            **self.dataset.request_times(),
            "area": self.area.cds,
            "grid": self.grid.cds,
            "data_format": self.data_format,
            "download_format": "unarchived",
        }

    @property
    def hash(self) -> str:
        """The month's key: its staging folder, whatever split its download took."""
        if self.revision:
            return _hash({**self.cds_request(), "revision": self.revision}, self.dataset.collection)
        return _hash(self.cds_request(), self.dataset.collection)

    def folder(self, staging_root: Path) -> Path:
        return staging_root / str(self.month) / self.hash

    def cost(self) -> costing.Cost:
        return costing.estimate(self.cds_request())


@dataclass(frozen=True)
class RequestPart:
    """One CDS job's share of a month: some of its variables over a run of its days."""

    month: MonthRequest
    index: int
    count: int
    variables: tuple[Variable, ...]
    days: tuple[int, ...]  # day numbers, 1-based; () for the previous hour's part
    # The hour before the month (the previous day's 23 UTC), for a dataset whose accumulations are
    # running totals from 00 UTC (ERA5-Land): the month's first hour's amount is its difference from
    # it. The CDS crosses days with hours, so it is a request of its own; it is loaded from the month's
    # start (``load(start=)``), never stored as a row.
    previous_hour: bool = False

    def cds_request(self) -> dict[str, Any]:
        request = self.month.cds_request()
        request["variable"] = [v.cds_name for v in self.variables]
        if self.previous_hour:
            before = self.month.month.start - timedelta(hours=1)
            request.update(year=[f"{before.year:04d}"], month=[f"{before.month:02d}"], day=[f"{before.day:02d}"],
                           time=[f"{before.hour:02d}:00"])
        elif not self.month.dataset.monthly:
            request["day"] = [f"{d:02d}" for d in self.days]
        return request

    @property
    def hash(self) -> str:
        return _hash(self.cds_request(), self.month.dataset.collection)

    @property
    def stem(self) -> str:
        return f"part-{self.index:02d}"

    @property
    def label(self) -> str:
        if self.previous_hour:
            return (f"{self.month.month} part {self.index + 1}/{self.count} (the previous day's 23 UTC, for the "
                    f"first hour's accumulations, {len(self.variables)} variables)")
        if self.month.dataset.monthly:
            return f"{self.month.month} ({self.month.dataset.name}, {len(self.variables)} variables)"
        days = f"days {self.days[0]:02d}-{self.days[-1]:02d}"
        return f"{self.month.month} part {self.index + 1}/{self.count} ({days}, {len(self.variables)} variables)"

    def cost(self) -> costing.Cost:
        return costing.estimate(self.cds_request())


def needs_previous_hour(request: MonthRequest) -> bool:
    """Whether the month is fetched with the hour before it: a dataset whose accumulations are running
    totals from 00 UTC (ERA5-Land), unless the month is the collection's first (there is no hour before)."""
    return request.dataset.accumulation == "since_00utc" and str(request.month) > request.dataset.first_month


def plan(request: MonthRequest, cost_limit: float | None = None) -> list[RequestPart]:
    """The parts the month is fetched in: one when it fits under the limit, else as few as fit; for
    ERA5-Land one more, the previous day's 23 UTC (:func:`needs_previous_hour`)."""
    parts = _month_parts(request, cost_limit)
    if not needs_previous_hour(request):
        return parts
    count = len(parts) + 1
    return [*(replace(p, count=count) for p in parts),
            RequestPart(request, len(parts), count, request.variables, (), previous_hour=True)]


def _month_parts(request: MonthRequest, cost_limit: float | None) -> list[RequestPart]:
    whole = request.cost()
    limit = cost_limit if cost_limit is not None else whole.limit()
    days = tuple(range(1, request.month.days + 1))
    if request.dataset.monthly:  # a month of monthly means is a few fields: one part, never split by days
        if whole.value > limit:
            raise CostLimitError(f"{request.month}: {whole} exceeds the limit {limit:,.0f}", whole.value, limit)
        return [RequestPart(request, 0, 1, request.variables, ())]
    if whole.value <= limit:
        return [RequestPart(request, 0, 1, request.variables, days)]
    try:
        # NetCDF: keep step types apart where it costs no extra part (one file per part, not a ZIP of
        # two); a GRIB file holds every step type anyway.
        groups = None if request.data_format == "grib" else [
            0 if v.step_type == "instant" else 1 for v in request.variables]
        # Each level of each variable is a field of its own: the split weighs a variable-day-hour by them.
        weight = whole.weight * max(1, len(request.levels))
        splits = costing.split(len(request.variables), len(days), 24, weight, limit, groups=groups)
    except costing.CostError as exc:
        raise CostLimitError(f"{request.month}: {exc}", whole.value, limit) from None
    return [
        RequestPart(request, i, len(splits), tuple(request.variables[v] for v in s.variables),
                    tuple(days[d] for d in s.days))
        for i, s in enumerate(splits)
    ]


def canonical_request(request: Mapping[str, Any]) -> str:
    return json.dumps(request, sort_keys=True)


__all__ = ["DATASET", "DATA_FORMATS", "DEFAULT_DATA_FORMAT", "FILE_KINDS", "DataFormat", "MonthRequest",
           "RequestPart", "needs_previous_hour", "parse_data_format", "plan"]
