"""The local server's Unix socket: the server's OS user's alone; another user of the machine cannot connect.

The server trusts its socket (clusters made before initdb's ``--auth-local`` became SCRAM), so the
socket's directory is the barrier: mode 0700, owned by the server's user. The test connects through
the socket as root (it works: the socket is live) and, from a process switched to ``nobody``, fails
with "Permission denied", while that process can walk to the directory holding the socket's folder
(so it is the folder's mode that stops it, not a closed path further up).
"""

from __future__ import annotations

import os
import stat

import psycopg
import pytest

from era5etl.db.local import SOCKET_DIR_IN_ROOT, LocalTimescale

NOBODY = 65534


def _connect_as(uid: int, host: str, port: int, password: str) -> tuple[bool, bool, str]:
    """In a child switched to ``uid``: (could enter the socket folder's parent, connected, error text)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read)
        code = 0
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            parent_ok = os.access(os.path.dirname(host), os.X_OK)
            try:
                psycopg.connect(host=host, port=port, user="postgres", dbname="era5", password=password,
                                connect_timeout=5).close()
                result = f"{int(parent_ok)}1"
            except psycopg.OperationalError as exc:
                result = f"{int(parent_ok)}0{exc}"
            os.write(write, result.encode())
        except BaseException as exc:  # reported to the parent, whatever it is
            os.write(write, f"00child failed: {exc!r}".encode())
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        out = fh.read().decode()
    os.waitpid(pid, 0)
    return out[:1] == "1", out[1:2] == "1", out[2:]


def test_another_user_cannot_connect_through_the_socket(db_url: str) -> None:
    server = LocalTimescale()
    state = server.state()
    if os.environ.get("ERA5_DATABASE_URL") or state is None or not server.running(state):
        pytest.fail("this test needs the checkout's own local server (ERA5_DATABASE_URL unset)")
    folder = server.socket_path
    socket_file = folder / f".s.PGSQL.{state.port}"
    assert socket_file.exists(), f"no socket at {socket_file}"
    assert server.socket_directory(state) == SOCKET_DIR_IN_ROOT
    info = folder.stat()
    uid, _ = server._ids()
    assert (stat.S_IMODE(info.st_mode), info.st_uid) == (0o700, uid), (oct(info.st_mode), info.st_uid)
    assert not (server.root / "tmp" / f".s.PGSQL.{state.port}").exists()  # nothing left in the shared /tmp

    # Root (the test) gets through: the socket is live and takes the password.
    with psycopg.connect(host=str(folder), port=state.port, user="postgres", dbname="era5",
                         password=state.password, connect_timeout=5) as conn:
        assert conn.execute("SELECT current_user").fetchone() == ("postgres",)

    # Another user does not, even with the password, and not for lack of a path to the folder.
    parent_ok, connected, error = _connect_as(NOBODY, str(folder), state.port, state.password)
    assert parent_ok, "nobody cannot reach the socket folder's parent: the test would prove nothing"
    assert not connected and "Permission denied" in error, error

    # The URL the code uses (TCP, SCRAM) keeps working.
    with psycopg.connect(db_url, connect_timeout=5) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
