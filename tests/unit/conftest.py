"""Fixtures for the stager's unit tests: the real CDS samples (``samples`` comes from tests/conftest.py)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

NEW_ZIP = "newcds_zip_instant_accum_2023-09_hourly.nc"


@pytest.fixture
def zip_members(samples: Path, tmp_path: Path) -> dict[str, Path]:
    """The ZIP sample unpacked by the test itself (independent of the stager): step type -> file."""
    into = tmp_path / "unzipped"
    with zipfile.ZipFile(samples / NEW_ZIP) as zf:
        zf.extractall(into)
    return {p.stem.rsplit("-", 1)[-1]: p for p in into.glob("*.nc")}
