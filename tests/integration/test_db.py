"""The local TimescaleDB: idempotent `db up`, `db down`/`status`, ERA5_DATABASE_URL provisions nothing."""

from __future__ import annotations

import socket
from pathlib import Path

from era5etl.db import LocalTimescale, _choose_port, connect

from .helpers import cli


def test_up_is_idempotent_and_down_then_up_restarts(db_url: str) -> None:
    code, _, err, first = cli("db", "up", "--json")
    assert code == 0, err
    code, _, err, second = cli("db", "up", "--json")
    assert code == 0, err
    assert first is not None and second is not None
    assert first["url"] == second["url"] == db_url and second["running"] is True

    assert cli("db", "down")[0] == 0
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
    other = _choose_port(tmp_path / "other-checkout" / ".local")
    assert other != ours.port
    # A port already taken is skipped.
    with socket.socket() as s:
        s.bind(("127.0.0.1", other))
        s.listen()
        assert _choose_port(tmp_path / "other-checkout" / ".local") != other
