"""The unit of work: one month of one area, grid and variable set into one table, and how it is
made from the settings and what a caller chose (the CLI's options, a DAG run's params)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from era5etl.core.datasets import SINGLE_LEVELS, Dataset, by_name
from era5etl.core.errors import InputError
from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.names import check_table
from era5etl.core.variables import Variable, load_variables, parse_list
from era5etl.fetch import MonthRequest
from era5etl.fetch.request import parse_data_format
from era5etl.settings import DataFormat, Settings, table_for


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
    dataset: Dataset = SINGLE_LEVELS  # the collection (ERA5_DATASET)
    levels: tuple[int, ...] = ()  # hPa, for a dataset with levels (ERA5_LEVELS; all of them when empty)

    def __post_init__(self) -> None:
        object.__setattr__(self, "levels", self.dataset.parse_levels(self.levels))

    @property
    def request(self) -> MonthRequest:
        return MonthRequest(self.month, self.area, self.grid, self.variables, revision=self.revision,
                            data_format=self.data_format, dataset=self.dataset, levels=self.levels)

    @property
    def expected_rows(self) -> int:
        return self.dataset.times_in(self.month) * self.area.points(self.grid) * max(1, len(self.levels))

    @property
    def load_variables(self) -> tuple[Variable, ...]:
        """What a load writes: the table's own columns (NULL when not asked for), then the others asked."""
        return load_variables(self.variables, self.dataset)

    @classmethod
    def create(cls, settings: Settings, month: Month, *, run_id: str, area: Area | str | None = None,
               grid: Grid | str | None = None, variables: str | Sequence[str] | None = None,
               table: str | None = None, revision: str = "", data_format: str | None = None,
               dataset: str | None = None, levels: str | Sequence[int | str] | None = None) -> MonthJob:
        """A month's job: what the caller chose where it chose, the settings for the rest. A dataset
        other than ERA5_DATASET takes its own default variables, table and levels, not the settings'."""
        ds = by_name(dataset or settings.dataset)
        configured = ds.name == settings.dataset
        default_variables = list(settings.variables) if configured else list(ds.default_variables)
        on_grid = dataset_grid(settings, ds, grid)
        box = Area.parse(area) if isinstance(area, str) else area or settings.area
        return cls(
            month=month,
            area=box.on_lattice(on_grid.step),
            grid=on_grid,
            variables=tuple(parse_list(variables or default_variables, catalogue=ds.catalogue)),
            table=check_table(table or (settings.table if configured else table_for(ds.name))),
            dataset=ds,
            levels=ds.parse_levels(levels if levels else settings.levels if configured else ()),
            run_id=run_id,
            staging_dir=settings.staging_dir,
            chunk_interval=settings.chunk_interval,
            revision=revision,
            data_format=parse_data_format(data_format) if data_format else settings.data_format,
        )


def dataset_grid(settings: Settings, dataset: Dataset, grid: Grid | str | None = None) -> Grid:
    """The grid of a month of ``dataset``: the one asked for, a multiple of the dataset's native step
    (ERA5's 0.25 degrees, ERA5-Land's 0.1); else ERA5_GRID when it is such a multiple; else the
    dataset's native grid (ERA5-Land's 0.1 degree, whose lattice a 0.25 degree grid is not on)."""
    native = Grid.native(dataset.grid.step)
    if isinstance(grid, str):
        return Grid.parse(grid, native.step)
    if grid is not None:
        if not grid.is_multiple_of(native):
            raise InputError(f"grid {grid}: {dataset.name} needs a multiple of {native} degrees (its native grid)")
        return grid
    return settings.grid if settings.grid.is_multiple_of(native) else native
