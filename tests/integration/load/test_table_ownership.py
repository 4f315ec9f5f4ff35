"""The pipeline writes only to tables it made (era5_tables), or recognisably made before that registry.

Issue 31's reproduction: ``create table probe_user2(time timestamptz not null, note text)``, then
``load-file ... --table probe_user2`` turned the user's table into a hypertable with six added
columns and left ``probe_user2_daily``/``_monthly`` behind, though the load failed. Now it exits 2,
naming why, before any change: the table's definition and rows compare equal before and after, and
no rollup exists. A failed first load leaves nothing behind; ``table list``/``drop`` know load-file's
tables; a weather table made before the registry is adopted.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from era5etl.cli import main
from era5etl.db import connect

from ..helpers import cli, forget

ACCUM = "newcds_accum_tp_2025-05_hourly_expver0005.nc"


def _catalog(url: str) -> set[str]:
    """Every relation of the database by schema and name: what a refused command must leave alone."""
    with connect(url) as conn:
        return {f"{s}.{n}" for s, n in conn.execute(
            "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace")}


def _snapshot(url: str, name: str) -> dict[str, Any]:
    """A table's definition (columns, kind, hypertable or not, triggers, indexes) and its rows."""
    with connect(url) as conn:
        columns = conn.execute("SELECT attname, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute"
                               " WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
                               (name,)).fetchall()
        kind = conn.execute("SELECT relkind, relhastriggers FROM pg_class WHERE oid = %s::regclass", (name,)).fetchone()
        hyper = conn.execute("SELECT count(*) FROM timescaledb_information.hypertables WHERE hypertable_name = %s",
                             (name,)).fetchone()
        indexes = conn.execute("SELECT indexdef FROM pg_indexes WHERE tablename = %s ORDER BY 1", (name,)).fetchall()
        rows = conn.execute(f'SELECT * FROM "{name}" ORDER BY 1, 2').fetchall()
        related = conn.execute("SELECT relname FROM pg_class WHERE relname LIKE %s ORDER BY 1",
                               (name + "%",)).fetchall()
    return {"columns": columns, "kind": kind, "hypertable": hyper, "indexes": indexes, "rows": rows,
            "related": related}


@pytest.fixture
def user_table(db_url: str) -> Iterator[str]:
    """A table a user made by hand, with two rows: not the pipeline's."""
    name = f"probe_user_{uuid.uuid4().hex[:8]}"
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f'CREATE TABLE "{name}" (time timestamptz NOT NULL, note text)')
        conn.execute(f"INSERT INTO \"{name}\" VALUES ('2025-05-01', 'mine'), ('2025-05-02', 'also mine')")
    yield name
    with connect(db_url, autocommit=True) as conn:
        for n in (name, f"{name}_daily", f"{name}_monthly"):
            conn.execute(f'DROP TABLE IF EXISTS "{n}" CASCADE')


def test_load_file_into_a_users_table_is_refused_and_the_table_is_unchanged(
        db_url: str, samples: Path, user_table: str, table: str) -> None:
    # (``table``: the pipeline's bookkeeping exists, as on any database it has loaded)
    before, catalog = _snapshot(db_url, user_table), _catalog(db_url)
    code, out, err, _ = cli("load-file", str(samples / ACCUM), "--table", user_table)
    assert code == 2, out + err
    assert err.strip().splitlines()[-1].startswith("error: ") and "Traceback" not in err, err
    assert "not one of the pipeline's" in err and "not a hypertable" in err
    assert _snapshot(db_url, user_table) == before
    assert _catalog(db_url) == catalog  # no rollup, no chunk, nothing else
    with connect(db_url) as conn:
        assert conn.execute("SELECT 1 FROM era5_tables WHERE table_name = %s", (user_table,)).fetchone() is None


def test_run_month_into_a_users_table_is_refused_before_the_cds_is_asked(db_url: str, user_table: str) -> None:
    before = _snapshot(db_url, user_table)
    code, out, err, _ = cli("run-month", "2024-01", "--table", user_table, "--local-cds")
    assert code == 2 and "not one of the pipeline's" in err and "Traceback" not in err, out + err
    assert _snapshot(db_url, user_table) == before
    with connect(db_url) as conn:  # no ledger row: the refusal came before the fetch
        assert conn.execute("SELECT 1 FROM era5_months WHERE table_name = %s", (user_table,)).fetchone() is None


def test_a_new_table_whose_rollup_name_is_taken_is_not_made(db_url: str, samples: Path, user_table: str) -> None:
    # The user's table is called <x>_daily: loading into <x> would take it over as a rollup.
    base = user_table + "_x"
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f'ALTER TABLE "{user_table}" RENAME TO "{base}_daily"')
    try:
        catalog = _catalog(db_url)
        code, out, err, _ = cli("load-file", str(samples / ACCUM), "--table", base)
        assert code == 2 and f"{base}_daily" in err and "Traceback" not in err, out + err
        assert _catalog(db_url) == catalog
    finally:
        with connect(db_url, autocommit=True) as conn:
            conn.execute(f'DROP TABLE IF EXISTS "{base}_daily"')


def test_a_failed_first_load_leaves_nothing_behind(db_url: str, samples: Path, table: str,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from era5etl import load as loader
    from era5etl.load import LoadError

    name = f"t_{uuid.uuid4().hex[:10]}"
    catalog = _catalog(db_url)

    def dies(*args: Any, **kwargs: Any) -> Any:  # the load fails after the table was made, as a lost server does
        raise LoadError("the load died")

    monkeypatch.setattr(loader, "load", dies)
    try:
        assert main(["load-file", str(samples / ACCUM), "--table", name]) == 1
        assert "the load died" in capsys.readouterr().err
        assert _catalog(db_url) == catalog  # no table, no rollups, no chunks
        with connect(db_url) as conn:
            assert conn.execute("SELECT 1 FROM era5_tables WHERE table_name = %s", (name,)).fetchone() is None
    finally:
        forget(db_url, name)


def test_load_files_table_is_listed_and_dropped_as_the_pipelines(db_url: str, samples: Path) -> None:
    name = f"t_{uuid.uuid4().hex[:10]}"
    try:
        code, out, err, _ = cli("load-file", str(samples / ACCUM), "--table", name)
        assert code == 0, out + err
        code, out, err, listed = cli("table", "list", "--json")
        assert code == 0 and listed is not None and name in {t["name"] for t in listed["tables"]}, out + err
        code, out, err, dropped = cli("table", "drop", name, "--yes", "--json")
        assert code == 0 and dropped is not None, out + err
        assert set(dropped["dropped"]) == {name, f"{name}_daily", f"{name}_monthly"}
        assert dropped["deleted"]["era5_tables"] == 1
    finally:
        forget(db_url, name)


def test_a_weather_table_made_before_the_registry_is_adopted(db_url: str, samples: Path, table: str) -> None:
    with connect(db_url, autocommit=True) as conn:  # as a version before era5_tables left it
        conn.execute("DELETE FROM era5_tables WHERE table_name = %s", (table,))
    code, out, err, _ = cli("load-file", str(samples / ACCUM), "--table", table)
    assert code == 0, out + err
    with connect(db_url) as conn:
        row = conn.execute("SELECT created_by FROM era5_tables WHERE table_name = %s", (table,)).fetchone()
    assert row is not None and "adopted" in row[0]


def test_rollups_rebuild_of_a_users_table_is_refused_and_changes_nothing(db_url: str, user_table: str) -> None:
    # `rollups rebuild` drops <table>_daily and _monthly and makes them again: never for another's table.
    with connect(db_url, autocommit=True) as conn:
        conn.execute(f'CREATE TABLE "{user_table}_daily" (note text)')
        conn.execute(f"INSERT INTO \"{user_table}_daily\" VALUES ('the user''s own')")
    before, catalog = _snapshot(db_url, user_table), _catalog(db_url)
    code, out, err, _ = cli("rollups", "rebuild", "--table", user_table)
    assert code == 2 and "not one of the pipeline's" in err and "Traceback" not in err, out + err
    assert _snapshot(db_url, user_table) == before and _catalog(db_url) == catalog
    with connect(db_url) as conn:
        assert conn.execute(f'SELECT note FROM "{user_table}_daily"').fetchall() == [("the user's own",)]
