"""Suite-wide fixtures: the real database (started if needed), the local CDS server, the real samples."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

# Validation results and Data Docs of test runs go to a folder of the run, not the checkout's .local/;
# set before any test starts a subprocess, so the CLI and Airflow tasks inherit it.
os.environ.setdefault("ERA5_VALIDATION_DIR", tempfile.mkdtemp(prefix="era5-validation-"))

# The real CDS downloads (their README says where each came from), kept in the repository so that a
# clone tests against them; every test reads them through this constant or the fixture below.
SAMPLES = Path(__file__).resolve().parent / "data" / "era5-samples"


@pytest.fixture(scope="session")
def samples() -> Path:
    """The samples' folder; a test that needs it fails (never skips) when it is missing."""
    if not SAMPLES.is_dir():
        pytest.fail(f"the real CDS samples are missing: {SAMPLES}")
    return SAMPLES


@pytest.fixture(scope="session")
def db_url() -> str:
    from era5etl.db import database_url

    return database_url()


@pytest.fixture
def table(db_url: str) -> Iterator[str]:
    """A hypertable of its own for one test, dropped afterwards."""
    from era5etl.db import connect, drop_table, ensure_schema

    name = f"t_{uuid.uuid4().hex[:10]}"
    ensure_schema(db_url, name)
    yield name
    with connect(db_url, autocommit=True) as conn:
        drop_table(conn, name)
        conn.execute("DELETE FROM era5_months WHERE table_name = %s", (name,))
        conn.execute("DELETE FROM era5_metrics WHERE table_name = %s", (name,))
        conn.execute("DELETE FROM era5_validation_days WHERE table_name = %s", (name,))
        conn.execute("DELETE FROM era5_tables WHERE table_name = %s", (name,))


@pytest.fixture
def row_store_table(db_url: str, table: str) -> str:
    """A hypertable of its own kept in the row store (as on an Apache-licensed server): the loader's
    per-chunk indexes, statistics and COPY FREEZE path."""
    from era5etl.db import connect

    with connect(db_url, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {table} SET (timescaledb.enable_columnstore = false)")
    return table


@pytest.fixture(scope="session")
def cds() -> Iterator[object]:
    from localcds.server import LocalCDS

    with LocalCDS() as server:
        yield server


@pytest.fixture(scope="session")
def apache_url() -> Iterator[str]:
    """A second local server from the same image, started with timescaledb.license = 'apache' (the
    row store, no columnstore, no continuous aggregates), for the Apache-licence paths."""
    import shutil

    from era5etl.db.local import LocalTimescale

    home = Path(tempfile.mkdtemp(prefix="era5-apache-"))
    server = LocalTimescale(home=home, licence="apache")
    try:
        yield server.up()
    finally:
        server.down()
        shutil.rmtree(home, ignore_errors=True)
