"""The local TimescaleDB: idempotent `db up`, `db down`/`status`, ERA5_DATABASE_URL provisions nothing,
the Community build from the machine's image, and the Apache licence on the same binaries."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from era5etl.core.paths import PROJECT_ROOT
from era5etl.db import LocalTimescale, connect
from era5etl.db.image import SOURCE_NAME, SOURCE_TREE, TIMESCALEDB_VERSION, check_source, image_path, source_tree_digest
from era5etl.db.local import choose_port

from ..helpers import cli


def test_up_is_idempotent_and_down_then_up_restarts(db_url: str) -> None:
    code, _, err, first = cli("db", "up", "--json")
    assert code == 0, err
    code, _, err, second = cli("db", "up", "--json")
    assert code == 0, err
    assert first is not None and second is not None
    assert first["url"] == second["url"] == db_url and second["running"] is True

    code, out, _, _ = cli("db", "status")
    assert code == 0 and f"TimescaleDB {TIMESCALEDB_VERSION} (licence timescale)" in out

    code, out, _, stopped = cli("db", "down", "--json")
    assert code == 0 and out.strip().startswith("{") and stopped == {"stopped": True}  # only JSON
    code, _, _, status = cli("db", "status", "--json")
    assert code == 0 and status is not None and status["running"] is False
    code, _, err, again = cli("db", "up", "--json")
    assert code == 0, err
    assert again is not None and again["url"] == db_url and again["running"] is True
    with connect(db_url) as conn:
        # Durable bulk-load settings: WAL and fsync stay on, checkpoints are spaced out.
        settings = dict(conn.execute(
            "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'full_page_writes', "
            "'synchronous_commit', 'max_wal_size', 'checkpoint_timeout', 'shared_preload_libraries')").fetchall())
    assert settings["fsync"] == "on" and settings["full_page_writes"] == "on"
    assert settings["synchronous_commit"] == "on"
    assert int(settings["max_wal_size"]) >= 8192 and int(settings["checkpoint_timeout"]) >= 900
    assert "timescaledb" in settings["shared_preload_libraries"]


def test_database_url_is_used_as_given_and_nothing_is_provisioned(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"ERA5_DATABASE_URL": "postgresql://someone:pw@db.example:5432/era5", "ERA5_HOME": str(home)}
    code, out, _, obj = cli("db", "up", "--json", env=env)
    assert code == 0
    assert obj == {"url": env["ERA5_DATABASE_URL"], "running": True, "managed": False}
    assert not home.exists()
    code, out, _, _ = cli("db", "status", env=env)
    assert code == 0 and "pw" not in out  # the password is not printed
    assert cli("db", "down", env=env)[0] == 2


def test_a_second_checkout_gets_its_own_port(tmp_path: Path) -> None:
    ours = LocalTimescale().state()
    assert ours is not None
    other = choose_port(tmp_path / "other-checkout" / ".local")
    assert other != ours.port
    # A port already taken is skipped.
    with socket.socket() as s:
        s.bind(("127.0.0.1", other))
        s.listen()
        assert choose_port(tmp_path / "other-checkout" / ".local") != other


def test_the_server_is_timescaledb_community_built_from_the_checked_source(db_url: str) -> None:
    with connect(db_url) as conn:
        row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'").fetchone()
        licence = conn.execute("SELECT current_setting('timescaledb.license')").fetchone()
    assert row == (TIMESCALEDB_VERSION,) and licence == ("timescale",)
    # The checkout's server is the machine's image, hard-linked: built once per machine.
    ours = LocalTimescale()
    postgres = ours.root / "usr/lib/postgresql/17/bin/postgres"
    assert postgres.stat().st_ino == (image_path() / "usr/lib/postgresql/17/bin/postgres").stat().st_ino
    # The source check accepts the release tree and nothing else: on the archive db.image.find_source
    # takes first when the machine vendors one beside the checkout (the samples no longer live there).
    vendored = PROJECT_ROOT.parent / "shared" / "vendor" / SOURCE_NAME
    if vendored.exists():
        assert source_tree_digest(vendored) == SOURCE_TREE
        check_source(vendored)


def test_a_source_archive_that_is_not_the_release_is_refused(tmp_path: Path) -> None:
    import tarfile

    from era5etl.db.image import ImageError

    fake = tmp_path / "timescaledb.tar.gz"
    (tmp_path / "timescaledb-2.29.2").mkdir()
    (tmp_path / "timescaledb-2.29.2" / "README.md").write_text("not timescaledb\n")
    with tarfile.open(fake, "w:gz") as tar:
        tar.add(tmp_path / "timescaledb-2.29.2", arcname="timescaledb-2.29.2")
    with pytest.raises(ImageError, match="not the TimescaleDB"):
        check_source(fake)
    (tmp_path / "junk.tar.gz").write_bytes(b"junk")
    with pytest.raises(ImageError, match="not a readable"):
        check_source(tmp_path / "junk.tar.gz")


def test_the_url_printed_for_a_person_masks_the_password(db_url: str) -> None:
    # Issue 31: `db up` printed the superuser's password in its URL; --json keeps it, for programs.
    state = LocalTimescale().state()
    assert state is not None and state.password in db_url
    for argv in (("db", "up"), ("db", "status")):
        code, out, err, _ = cli(*argv)
        assert code == 0, err
        assert state.password not in out and ":***@" in out, out
    code, _, _, obj = cli("db", "up", "--json")
    assert code == 0 and obj is not None and obj["url"] == db_url


def test_no_session_compiles_with_jit(db_url: str) -> None:
    """The product's connections and the local server itself run without JIT (a read over 1,020 chunks
    spent 17.7 s compiling: docs/benchmarks.md), and a URL's own ``options`` are kept beside it."""
    import psycopg

    with connect(db_url) as conn:
        assert conn.execute("SHOW jit").fetchone() == ("off",)
    with connect(db_url + "?options=-c%20statement_timeout%3D1234") as conn:
        assert conn.execute("SELECT current_setting('jit'), current_setting('statement_timeout')").fetchone() == \
            ("off", "1234ms")
    with psycopg.connect(db_url) as conn:  # a user's psql: the server's own setting
        assert conn.execute("SHOW jit").fetchone() == ("off",)
