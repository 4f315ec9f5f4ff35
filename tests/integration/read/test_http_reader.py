"""The HTTP reads run as a role that can only read (db.reader), and default to a validated table.

Issue 31: the local server had one role, the superuser ``postgres``, and the HTTP reads ran as it;
and after ``run-month 2024-01 --table probe_rm`` failed, ``/era5/series?lat=47&lon=7`` (no table)
answered 404 ``table 'probe_rm' holds no rows yet``, since the default was the table the ledger
touched last. Here: the URL the plugin's ``/series`` and ``/map`` connect with cannot INSERT, UPDATE,
CREATE or DROP, yet reads a loaded table through the same code as the route; and a failed new table
leaves the default on the table with the latest validated month.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from era5etl import serve
from era5etl.core.months import Month
from era5etl.db import connect
from era5etl.serve.reads import read_series
from era5etl.track import ledger

from ..helpers import cli, forget

INSTANT = "newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc"


@pytest.fixture
def http_url() -> str:
    """What the plugin's /series and /map connect with."""
    from era5etl.airflow.plugins import era5_dashboard

    return era5_dashboard.reader_url()


@pytest.fixture
def loaded(db_url: str, samples: Path) -> Iterator[str]:
    name = f"t_{uuid.uuid4().hex[:10]}"
    code, out, err, _ = cli("load-file", str(samples / INSTANT), "--table", name)
    assert code == 0, out + err
    yield name
    forget(db_url, name)


def test_the_http_reads_connect_as_a_role_that_cannot_write(db_url: str, http_url: str, loaded: str) -> None:
    with connect(http_url, autocommit=True) as conn:
        who = conn.execute("SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()
        assert who == ("era5_reader", False)
        assert conn.execute(f'SELECT count(*) FROM "{loaded}"').fetchone() == (288 * 25,)
        for statement in (f"INSERT INTO \"{loaded}\" (time) VALUES ('2025-05-01')",
                          f'UPDATE "{loaded}" SET latitude = 0', f'DELETE FROM "{loaded}"',
                          "INSERT INTO era5_months (table_name, month, area, grid, state) VALUES"
                          " ('x', '2025-05-01', 'a', 'g', 'failed')",
                          "CREATE TABLE reader_probe (x int)", f'DROP TABLE "{loaded}"'):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)
    # ... and the route's own read works through it.
    reply = read_series(http_url, serve.series_request(lat="40.5", lon="-8.5", step="hour", table=loaded))
    assert len(json.loads(reply.body)["time"]) == 288


def test_the_reader_may_only_select_and_weigh_a_region_through_the_pipelines_function(
        db_url: str, http_url: str, loaded: str) -> None:
    """Issue 47: the reader could INSERT region weights, and one row changed every read of --region LU.
    Its table privileges are SELECT and nothing else; a region is kept only by era5_weigh_region, which
    keys the outline by its own WKB and computes its weights, and refuses a name no terminal should print."""
    from era5etl.read.region_weights import GRID, digest, weighed
    from era5etl.read.regions import region_from_geojson

    with connect(http_url, autocommit=True) as conn:
        grants = conn.execute("SELECT DISTINCT privilege_type FROM information_schema.role_table_grants"
                              " WHERE grantee = 'era5_reader'").fetchall()
        assert grants == [("SELECT",)], grants
        for statement in ("INSERT INTO era5_region_weights VALUES (1, 1, 0, 0, 1)",
                          "UPDATE era5_region_weights SET weight = 0", "DELETE FROM era5_regions",
                          "INSERT INTO era5_regions (grid, name, source, digest, outline)"
                          " VALUES ('g', 'n', 's', 'd', 'POINT(0 0)')"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="printable"):
            conn.execute("SELECT era5_weigh_region(%s, %s, 'GeoJSON', NULL, '\\x00'::bytea)",
                         (GRID, "\033]0;pwned\a"))
    square = region_from_geojson({"type": "Polygon", "coordinates": [
        [[20.1, 20.1], [20.4, 20.1], [20.4, 20.3], [20.1, 20.1]]]}, f"reader_{uuid.uuid4().hex[:8]}")
    with connect(db_url, autocommit=True) as conn:
        conn.execute("DELETE FROM era5_regions WHERE digest = %s", (digest(square.outline),))
    with connect(http_url) as conn:
        kept = weighed(conn, square)
    with connect(db_url) as conn:
        row = conn.execute("SELECT name, digest, (SELECT count(*) FROM era5_region_weights w"
                           " WHERE w.region_id = r.region_id) FROM era5_regions r WHERE region_id = %s",
                           (kept.region_id,)).fetchone()
        conn.execute("DELETE FROM era5_regions WHERE region_id = %s", (kept.region_id,))
        conn.commit()
    assert row == (square.name, digest(square.outline), kept.points) and kept.points > 0


def test_a_failed_new_table_leaves_the_default_on_the_validated_one(db_url: str, http_url: str, loaded: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from era5etl.serve.extent import default_table

    monkeypatch.delenv("ERA5_TABLE", raising=False)
    failed = f"probe_rm_{uuid.uuid4().hex[:8]}"
    try:
        # The validated table's month, then a newer run of another table that failed (as the CDS being
        # unreachable leaves it: a ledger row, its table made and empty).
        ledger.set_state(db_url, table=loaded, month=Month.parse("2025-05"), area="40.5/-8.5/39.5/-7.5",
                         grid="0.25", state="validated", run_id="test")
        code, out, err, _ = cli("load-file", str(Path(__file__).parents[2] / "data" / "era5-samples" / INSTANT),
                                "--table", failed)
        assert code == 0, out + err
        with connect(db_url, autocommit=True) as conn:
            conn.execute(f'TRUNCATE "{failed}"')
        ledger.set_state(db_url, table=failed, month=Month.parse("2024-01"), area="50/5/45/10", grid="0.25",
                         state="failed", run_id="cli__later")
        with connect(http_url) as conn:
            assert default_table(conn) == loaded
        reply = read_series(http_url, serve.series_request(lat="40.5", lon="-8.5", step="hour"))
        assert len(json.loads(reply.body)["time"]) == 288
    finally:
        forget(db_url, failed)


def test_the_local_servers_url_given_as_the_database_url_still_reads_as_the_reader(
        db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # `airflow up` hands its components ERA5_DATABASE_URL=<the local server>: the reads stay read-only.
    from era5etl.db.urls import reader_url

    monkeypatch.setenv("ERA5_DATABASE_URL", db_url)
    with connect(reader_url()) as conn:
        assert conn.execute("SELECT current_user").fetchone() == ("era5_reader",)
    # A managed server without a reader: its own URL (documented), unless ERA5_READER_DATABASE_URL says.
    monkeypatch.setenv("ERA5_DATABASE_URL", "postgresql://someone:pw@db.example:5432/era5")
    assert reader_url() == "postgresql://someone:pw@db.example:5432/era5"
    monkeypatch.setenv("ERA5_READER_DATABASE_URL", "postgresql://reader:pw@db.example:5432/era5")
    assert reader_url() == "postgresql://reader:pw@db.example:5432/era5"
