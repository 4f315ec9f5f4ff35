"""One table for the places, local days and climate tests, loaded once through ``load-file`` from the
local CDS's synthetic downloads: Jakarta's grid point every hour of 1940-2024, Los Angeles' of 1990-2021
(30 whole years for the indices, and a UTC-8 place for local days), Santiago de Chile's of January 2024,
a 3 x 3 box in the Alps of January 2024 (an area for the Python API) and a 2 x 2 box at 60 N over
1991-1993 (an area's climate); and in tables of their own, Luxembourg's box in January 2024 (a region)
and Singapore's four cells over 1991-2000 (a country of whole years).
The downloads are deterministic (seed 0), so they are kept under .local/test-downloads between runs,
keyed by the synthetic fields' version (``localcds.synth.FIELDS_VERSION``)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ..helpers import cli, forget

CACHE = Path(__file__).resolve().parents[3] / ".local" / "test-downloads"
NOW = datetime(2025, 2, 1, tzinfo=UTC)  # publication cut-off: every hour of 2024 is out
# (name, the grid point's cell as N/W/S/E, first year, last year, months)
POINTS = {
    "jakarta": ((-6.25, 106.75, -6.25, 106.75), 1940, 2024, range(1, 13)),
    "los_angeles": ((34.0, -118.25, 34.0, -118.25), 1990, 2021, range(1, 13)),
    "santiago": ((-33.5, -70.75, -33.5, -70.75), 2024, 2024, range(1, 2)),
    "alps": ((45.5, 7.0, 45.0, 7.5), 2024, 2024, range(1, 2)),  # 3 x 3 grid points: an area for the API
    "box": ((60.0, 20.0, 59.75, 20.25), 1991, 1993, range(1, 13)),  # 2 x 2 grid points: an area's climate
}
# Loaded into a table of its own (region_table): the places' table's loaded box stays what its tests expect.
REGIONS = {"luxembourg": ((50.5, 5.5, 49.25, 6.75), 2024, 2024, range(1, 2)),
           # Singapore's four cells over ten years: a region for the Data view's Climate panel (tests/e2e).
           "singapore": ((1.5, 103.75, 1.25, 104.0), 1991, 2000, range(1, 13))}


def download(name: str) -> Path:
    from localcds.synth import FIELDS_VERSION, hourly_request, write_download

    area, first, last, months = {**POINTS, **REGIONS}[name]
    path = CACHE / f"climate-{name}-{first}-{last}-v{FIELDS_VERSION}.nc"  # a change of the fields, a new file
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    request = hourly_request(area, (first, last), months)
    partial = path.with_suffix(".part")
    write_download(request, partial, seed=0, now=NOW)
    partial.rename(path)
    return path


def _loaded(db_url: str, prefix: str, names: list[str]) -> Iterator[str]:
    """A table of its own holding the downloads ``names``, loaded by ``load-file``, forgotten after."""
    table = f"{prefix}_{uuid.uuid4().hex[:10]}"
    try:
        for name in names:
            code, out, err, _ = cli("load-file", str(download(name)), "--table", table, "--json")
            assert code == 0, out + err
        yield table
    finally:
        forget(db_url, table)


@pytest.fixture(scope="package")
def region_table(db_url: str) -> Iterator[str]:
    """Read only: Luxembourg's box (6 x 6 grid points, every cell that touches the country and a ring
    around them) every hour of January 2024, a country small enough to load whole in a test."""
    yield from _loaded(db_url, "r", ["luxembourg"])


@pytest.fixture(scope="package")
def singapore_table(db_url: str) -> Iterator[str]:
    """Read only: Singapore's four cells every hour of 1991-2000, a country of whole years."""
    yield from _loaded(db_url, "sg", ["singapore"])


@pytest.fixture(scope="package")
def places_table(db_url: str) -> Iterator[str]:
    """Read only: the three places' hourly rows and their rollups."""
    yield from _loaded(db_url, "c", list(POINTS))
