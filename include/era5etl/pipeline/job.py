"""The unit of work: one month of one area, grid and variable set into one table, and how it is
made from the settings and what a caller chose (the CLI's options, a DAG run's params)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from era5etl.core.grid import Area, Grid, expected_rows
from era5etl.core.months import Month
from era5etl.core.variables import Variable, parse_list
from era5etl.fetch import MonthRequest
from era5etl.fetch.request import parse_data_format
from era5etl.settings import DataFormat, Settings


@dataclass(frozen=True)
class MonthJob:
    month: Month
    area: Area
    grid: Grid
    variables: tuple[Variable, ...]
    table: str
    run_id: str
    staging_dir: Path
    chunk_interval: timedelta = field(default=timedelta(days=1))
    # "" for a first load; a reload that must not reuse the earlier download (ERA5T -> final) sets one.
    revision: str = ""
    data_format: DataFormat = "netcdf"  # what the CDS is asked for (ERA5_DATA_FORMAT)

    @property
    def request(self) -> MonthRequest:
        return MonthRequest(self.month, self.area, self.grid, self.variables, revision=self.revision,
                            data_format=self.data_format)

    @property
    def expected_rows(self) -> int:
        return expected_rows(self.month, self.area, self.grid)

    @classmethod
    def create(cls, settings: Settings, month: Month, *, run_id: str, area: Area | str | None = None,
               grid: Grid | str | None = None, variables: str | Sequence[str] | None = None,
               table: str | None = None, revision: str = "", data_format: str | None = None) -> MonthJob:
        """A month's job: what the caller chose where it chose, the settings for the rest."""
        return cls(
            month=month,
            area=Area.parse(area) if isinstance(area, str) else area or settings.area,
            grid=Grid.parse(grid) if isinstance(grid, str) else grid or settings.grid,
            variables=tuple(parse_list(variables or list(settings.variables))),
            table=table or settings.table,
            run_id=run_id,
            staging_dir=settings.staging_dir,
            chunk_interval=settings.chunk_interval,
            revision=revision,
            data_format=parse_data_format(data_format) if data_format else settings.data_format,
        )
