"""The local server's Unix socket: the server's OS user's alone; another user of the machine cannot connect.

The server trusts its socket (clusters made before initdb's ``--auth-local`` became SCRAM), so the
socket's directory is the barrier: mode 0700, owned by the server's user. The test connects through
the socket as root (it works: the socket is live) and, from a process switched to ``nobody``, fails
with "Permission denied", while that process can walk to the directory holding the socket's folder
(so it is the folder's mode that stops it, not a closed path further up).

A checkout may sit in a folder no other user may enter (a home of mode 0700, ``mktemp -d``), where
``nobody`` could not reach the checkout's socket whatever its mode, and the test would prove nothing.
So ``nobody`` is tried against a server of the same code under a folder of the test's own, open to
every user (mode 0755 in the machine's temporary folder); the checkout's own server is held to the
same mode and owner, and to working for root.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

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


def _open_folder() -> Path:
    """A new folder every user may enter, in the first temporary folder ``nobody`` can reach."""
    for base in dict.fromkeys([tempfile.gettempdir(), "/tmp", "/var/tmp"]):
        if os.path.isdir(base) and _child_as(NOBODY, lambda base=base: os.access(base, os.X_OK)):
            folder = Path(tempfile.mkdtemp(prefix="era5-socket-", dir=base))
            folder.chmod(0o755)
            return folder
    pytest.skip("no temporary folder another user can enter on this machine: nothing to prove the socket's "
                "mode against")


def _child_as(uid: int, probe: Callable[[], bool]) -> bool:
    """``probe()`` in a child switched to ``uid``."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            code = 0 if probe() else 1
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


@pytest.fixture(scope="module")
def open_server() -> Iterator[LocalTimescale]:
    """A local server of this code under a folder every user may enter, stopped and removed afterwards."""
    folder = _open_folder()
    server = LocalTimescale(home=folder / "local")
    try:
        server.up()
        yield server
    finally:
        server.down()
        shutil.rmtree(folder, ignore_errors=True)


def _assert_socket_folder(server: LocalTimescale) -> tuple[Path, int, str]:
    """The server's socket folder is its OS user's alone, and root connects through it."""
    state = server.state()
    assert state is not None and server.running(state)
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
    return folder, state.port, state.password


def test_the_checkouts_socket_is_its_servers_user_alone(db_url: str) -> None:
    server = LocalTimescale()
    state = server.state()
    if os.environ.get("ERA5_DATABASE_URL") or state is None or not server.running(state):
        pytest.fail("this test needs the checkout's own local server (ERA5_DATABASE_URL unset)")
    _assert_socket_folder(server)
    # The URL the code uses (TCP, SCRAM) keeps working.
    with psycopg.connect(db_url, connect_timeout=5) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_another_user_cannot_connect_through_the_socket(open_server: LocalTimescale) -> None:
    folder, port, password = _assert_socket_folder(open_server)
    # Another user does not, even with the password, and not for lack of a path to the folder.
    parent_ok, connected, error = _connect_as(NOBODY, str(folder), port, password)
    assert parent_ok, "nobody cannot reach the socket folder's parent: the test would prove nothing"
    assert not connected and "Permission denied" in error, error
    # Over TCP with the password the same server takes it: only the socket is closed to it.
    state = open_server.state()
    assert state is not None
    with psycopg.connect(state.url(), connect_timeout=5) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
