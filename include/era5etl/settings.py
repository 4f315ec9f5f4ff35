"""Typed settings, read from the environment once, with the defaults a first run needs."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from era5etl.core.grid import Area, Grid
from era5etl.core.variables import DEFAULT_VARIABLES
from era5etl.db import PROJECT_ROOT

# A 5 x 5 degree box over the Alps: 441 grid points, ~330k rows a month, a first run in seconds.
DEFAULT_AREA = "50/5/45/10"


@dataclass(frozen=True)
class Settings:
    table: str = "weather"
    area: Area = field(default_factory=lambda: Area.parse(DEFAULT_AREA))
    grid: Grid = field(default_factory=Grid)
    variables: tuple[str, ...] = DEFAULT_VARIABLES
    staging_dir: Path = PROJECT_ROOT / ".local" / "staging"
    chunk_interval: timedelta = timedelta(days=1)

    @classmethod
    def from_env(cls) -> Settings:
        env = os.environ
        return cls(
            table=env.get("ERA5_TABLE", "weather"),
            area=Area.parse(env.get("ERA5_AREA", DEFAULT_AREA)),
            grid=Grid.parse(env.get("ERA5_GRID", "0.25")),
            variables=tuple(v.strip() for v in env.get("ERA5_VARIABLES", ",".join(DEFAULT_VARIABLES)).split(",")),
            staging_dir=Path(env.get("ERA5_STAGING_DIR", str(PROJECT_ROOT / ".local" / "staging"))),
        )
