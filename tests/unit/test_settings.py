"""The settings model: every ERA5_* variable typed, checked when read, and documented once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from era5etl import settings
from era5etl.core.errors import InputError
from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.paths import PROJECT_ROOT


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith(settings.ENV_PREFIX):
            monkeypatch.delenv(name)


def test_defaults_are_what_a_first_run_needs() -> None:
    s = settings.load()
    assert s.area == Area.parse("50/5/45/10") and s.grid == Grid() and s.table == "weather"
    assert s.start_month == Month(2024, 1) and s.chunk_rows == 25_000_000 and s.compression == "auto"
    assert s.staging_dir == PROJECT_ROOT / ".local" / "staging" and s.database_url is None
    assert len(s.variables) == 6 and s.timescaledb_license == "timescale"


def test_values_come_from_the_environment_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ERA5_AREA", "46/7/45/8")
    monkeypatch.setenv("ERA5_VARIABLES", "t2m, total_precipitation")
    monkeypatch.setenv("ERA5_CHUNK_ROWS", "0")
    monkeypatch.setenv("ERA5_START_MONTH", "1999-12")
    monkeypatch.setenv("ERA5_LOG_LEVEL", "info")
    monkeypatch.setenv("ERA5_STAGING_DIR", "/tmp/somewhere")
    s = settings.load()
    assert s.area == Area.parse("46/7/45/8") and s.chunk_rows == 0 and s.start_month == Month(1999, 12)
    assert s.variables == ("2m_temperature", "total_precipitation")  # short names resolved, table order
    assert s.log_level == "INFO" and s.staging_dir == Path("/tmp/somewhere")
    # A mapping given to load() wins over the environment (the functions that take an env use it).
    assert settings.load({"ERA5_CHUNK_ROWS": "7"}).chunk_rows == 7


@pytest.mark.parametrize(("name", "value", "says"), [
    ("ERA5_AREA", "46/7/45", "N/W/S/E"),
    ("ERA5_GRID", "0.3", "multiple of 0.25"),
    ("ERA5_VARIABLES", "sea_ice", "unknown variable"),
    ("ERA5_CHUNK_ROWS", "-1", "greater than or equal to 0"),
    ("ERA5_CHUNK_ROWS", "many", "valid integer"),
    ("ERA5_COMPRESSION", "gzip", "'auto' or 'off'"),
    ("ERA5_KEEP_DOWNLOADS", "some", "'none', 'failed' or 'all'"),
    ("ERA5_TIMESCALEDB_LICENSE", "gpl", "'timescale' or 'apache'"),
    ("ERA5_START_MONTH", "1939-12", "ERA5 starts in January 1940"),
    ("ERA5_PUBLICATION_DELAY", "soon", "valid number"),
    ("ERA5_PUBLICATION_DELAY", "-1", "greater than or equal to 0"),
    ("ERA5_FINAL_AFTER_MONTHS", "0", "greater than or equal to 1"),
    ("ERA5_MAX_ACTIVE_RUNS", "0", "greater than or equal to 1"),
    ("ERA5_TABLE", "weather; drop table x", "is not a table name"),
    ("ERA5_TABLE", "public.weather", "is schema-qualified"),
    ("ERA5_TABLE", "pg_class", "is a system name"),
    ("ERA5_TABLE", "era5_months", "bookkeeping"),
    ("ERA5_TABLE", "w" * 56, "at most 55"),
])
def test_a_bad_value_is_a_clear_error_naming_the_variable(monkeypatch: pytest.MonkeyPatch, name: str, value: str,
                                                          says: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(InputError) as err:
        settings.load()
    assert f"{name}={value!r}" in str(err.value) and says in str(err.value)


def test_the_configuration_pages_table_is_the_models() -> None:
    page = (PROJECT_ROOT / "docs" / "configuration.md").read_text()
    block = re.search(r"<!-- settings:begin -->\n(.*?)\n<!-- settings:end -->", page, re.S)
    assert block is not None, "docs/configuration.md lost its generated settings table markers"
    assert block.group(1).strip() == settings.markdown_table(), \
        "docs/configuration.md's settings table differs from the model: paste `python -m era5etl settings --markdown`"
    documented = set(re.findall(r"`(ERA5_[A-Z0-9_]+)`", block.group(1)))
    assert documented == {settings.env_name(n) for n in settings.Settings.model_fields}
