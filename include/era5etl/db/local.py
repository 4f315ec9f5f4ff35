"""The checkout's own PostgreSQL 17 + TimescaleDB Community server.

Each checkout runs its own server: a hard-linked copy of the machine's server image
(``db.image``: Debian 13 root, TimescaleDB built from source) under ``<ERA5_HOME>/server`` with its
own data directory, started with chroot on 127.0.0.1 on a port derived from the checkout's path, so
two checkouts never share a server by accident. Copying the image by hard links takes seconds and
no space; nothing in it is written in place (the server writes only its data directory and log).

Connections: the pipeline's URL is TCP on 127.0.0.1 with the superuser's SCRAM password (kept in
``<ERA5_HOME>/server.json``, mode 0600). The Unix socket, which the cluster trusts (initdb's
``--auth-local``: ``trust`` on clusters made before, SCRAM since), is in a directory only the server's
OS user may enter (``/var/lib/era5/socket`` in the root, mode 0700, the socket itself 0700): in the
shared ``/tmp`` it let any user of the machine connect as the superuser. A server still listening
in the old place is restarted once by ``up``.

The licence is TimescaleDB's ``timescaledb.license``: ``timescale`` (Community: the columnstore,
continuous aggregates) by default, ``apache`` with ``ERA5_TIMESCALEDB_LICENSE=apache`` to run the
Apache-licensed feature set on the same binaries. TimescaleDB reads it only from the server's
configuration or command line, so it is passed at start, and a server running under the other
licence is restarted.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
import shutil
import subprocess
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg
from psycopg import sql

from era5etl import settings
from era5etl.core.files import open_private, write_json
from era5etl.core.ports import port_free
from era5etl.db.errors import DatabaseError
from era5etl.db.image import POSTGRES_MAJOR, STAMP, Progress, ensure_image, image_stamp, swap_in
from era5etl.db.reader import ROLE, ensure_reader

log = logging.getLogger(__name__)

PG_BIN = f"/usr/lib/postgresql/{POSTGRES_MAJOR}/bin"
DATA_DIR_IN_ROOT = "/var/lib/era5/pgdata"
LOG_IN_ROOT = "/var/lib/era5/postgresql.log"
# The Unix socket's directory: the server's OS user's alone (0700), never a shared /tmp.
SOCKET_DIR_IN_ROOT = "/var/lib/era5/socket"
SOCKET_SETTINGS: dict[str, str] = {"unix_socket_directories": SOCKET_DIR_IN_ROOT, "unix_socket_permissions": "0700"}
# pgBackRest (db.backup): its configuration, and where the host's repository folder appears inside the
# root. The folder is bind-mounted there in a mount namespace of the server's own (unshare), so the
# mount exists only for the server and pgBackRest's processes: the host never sees it, and removing a
# root can never reach into a repository.
BACKUP_CONF_IN_ROOT = "/var/lib/era5/pgbackrest.conf"
BACKUP_REPO_IN_ROOT = "/var/lib/era5/backup-repo"
STANZA = "era5"

# Bulk-load settings: durability stays on (fsync, full_page_writes, synchronous_commit); what
# changes is how often checkpoints force full-page images and how much memory index builds get.
SERVER_SETTINGS: dict[str, str] = {
    "listen_addresses": "'127.0.0.1'",
    **{k: f"'{v}'" for k, v in SOCKET_SETTINGS.items()},
    "shared_preload_libraries": "'timescaledb'",
    "timescaledb.telemetry_level": "off",
    # /dev/shm inside the root is a plain directory, not a tmpfs; mmap keeps DSM in the data dir.
    "dynamic_shared_memory_type": "mmap",
    "max_connections": "200",
    "shared_buffers": "2GB",
    "work_mem": "64MB",
    "maintenance_work_mem": "1GB",
    "max_wal_size": "16GB",
    "min_wal_size": "2GB",
    "checkpoint_timeout": "30min",
    "checkpoint_completion_target": "0.9",
    "wal_buffers": "64MB",
    "wal_compression": "lz4",
    # TimescaleDB takes a lock per chunk touched; a month of daily chunks across tables needs more.
    "max_locks_per_transaction": "512",
    "fsync": "on",
    "full_page_writes": "on",
    "synchronous_commit": "on",
}


@dataclass(frozen=True)
class LocalState:
    port: int
    password: str
    reader_password: str | None = None  # the read-only role's (db.reader), made by `db up`

    def url(self, dbname: str = "era5") -> str:
        return f"postgresql://postgres:{quote(self.password, safe='')}@127.0.0.1:{self.port}/{dbname}"

    def reader_url(self, dbname: str = "era5") -> str:
        return f"postgresql://{ROLE}:{quote(self.reader_password or '', safe='')}@127.0.0.1:{self.port}/{dbname}"

    def as_dict(self) -> dict[str, object]:
        return {"port": self.port, "password": self.password, "reader_password": self.reader_password}


class LocalTimescale:
    """The checkout's server, under ``home`` (default ``<project>/.local``)."""

    def __init__(self, home: Path | None = None, licence: str | None = None,
                 backup_repository: Path | None = None) -> None:
        configured = settings.load()
        self.home = (home or configured.home).resolve()
        self.root = self.home / "server"
        self.state_file = self.home / "server.json"
        self.licence = licence or configured.timescaledb_license
        repository = backup_repository or configured.backup_repository
        self.backup_repository = repository.resolve() if repository else None

    # paths inside the root as the host sees them
    def _host(self, path_in_root: str) -> Path:
        return self.root / path_in_root.lstrip("/")

    @property
    def installed(self) -> bool:
        return (self.root / STAMP).is_file()

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        self.home.mkdir(parents=True, exist_ok=True)
        with open(self.home / ".provision.lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def up(self, progress: Progress | None = None) -> str:
        """Install, initialise and start as needed; return the URL of the ``era5`` database."""
        if os.geteuid() != 0:
            raise DatabaseError(
                "the local TimescaleDB needs root (debootstrap and chroot); run as root or set "
                "ERA5_DATABASE_URL to a PostgreSQL server with TimescaleDB"
            )
        with self._lock():
            if not self.installed:
                self._install(progress)
            else:
                self._refresh(progress)
            state = self._init_cluster()
            if self.running(state) and self.server_licence(state) != self.licence:
                log.info("restarting the local server with timescaledb.license=%s", self.licence)
                self.down()
            if self.running(state) and self.socket_directory(state) != SOCKET_DIR_IN_ROOT:
                log.info("restarting the local server: its socket moves to %s (mode 0700)", SOCKET_DIR_IN_ROOT)
                self.down()
            archiving = "on" if self.backup_repository else "off"
            if self.running(state) and self._server_setting("archive_mode", state) != archiving:
                log.info("restarting the local server with archive_mode=%s (ERA5_BACKUP_REPOSITORY)", archiving)
                self.down()
            if not self.running(state):
                self._start(state)
            self._create_databases(state)
        return state.url()

    def down(self) -> bool:
        """Stop the server; True if it was running."""
        state = self.state()
        if state is None or not self.running(state):
            return False
        self._pg(["pg_ctl", "-D", DATA_DIR_IN_ROOT, "-m", "fast", "-w", "stop"])
        return True

    def replace_data_directory(self) -> Path | None:
        """For a restore: the server stopped, its data directory moved aside (the path returned, None
        when there was none) and an empty one made in its place, the server's user's alone."""
        with self._lock():
            self.down()
            pgdata = self._host(DATA_DIR_IN_ROOT)
            aside = None
            if pgdata.exists():
                aside = pgdata.with_name(f"pgdata.before-restore-{time.strftime('%Y%m%dT%H%M%S')}")
                pgdata.rename(aside)
            pgdata.mkdir(mode=0o700)
            os.chown(pgdata, *self._ids())
            return aside

    def start_restored(self) -> None:
        """Start a restored data directory as it is, to replay its WAL (``db.backup.restore``); ``up``
        once it is promoted finishes the provisioning."""
        state = self.state()
        if state is None:
            raise DatabaseError(f"the local server in {self.home} was never set up")
        with self._lock():
            self._start(state)

    def state(self) -> LocalState | None:
        if not self.state_file.exists():
            return None
        raw = json.loads(self.state_file.read_text())
        reader = raw.get("reader_password")
        return LocalState(port=int(raw["port"]), password=str(raw["password"]),
                          reader_password=str(reader) if reader else None)

    def running(self, state: LocalState | None = None) -> bool:
        state = state or self.state()
        if state is None or not self.installed:
            return False
        result = self._pg(["pg_isready", "-h", "127.0.0.1", "-p", str(state.port), "-q"], check=False)
        return result.returncode == 0 and self._owns_port(state)

    def _server_setting(self, name: str, state: LocalState | None) -> str | None:
        """A setting of the running server (``current_setting``, NULL when it has none), or None when
        the server is not running."""
        state = state or self.state()
        if state is None:
            return None
        try:
            with psycopg.connect(state.url("postgres"), connect_timeout=5) as conn:
                row = conn.execute("SELECT current_setting(%s, true)", (name,)).fetchone()
        except psycopg.OperationalError:
            return None
        return str(row[0]) if row and row[0] else None

    def server_licence(self, state: LocalState | None = None) -> str | None:
        """The licence the running server was started with, or None when it is not running."""
        return self._server_setting("timescaledb.license", state)

    def socket_directory(self, state: LocalState | None = None) -> str | None:
        """Where the running server's Unix socket is (inside the root), or None when it is not running."""
        return self._server_setting("unix_socket_directories", state)

    @property
    def socket_path(self) -> Path:
        """The directory of the server's Unix socket as the host sees it (``.s.PGSQL.<port>`` in it)."""
        return self._host(SOCKET_DIR_IN_ROOT)

    def describe(self) -> dict[str, object]:
        """What ``db status`` says: versions, licence, where it lives."""
        state = self.state()
        running = self.running(state)
        info: dict[str, object] = {"url": state.url() if state else None, "running": running, "managed": True,
                                   "home": str(self.home), "image": image_stamp(self.root).get("image")}
        if running and state is not None:
            info.update(server_versions(state.url()))
        return info

    def _owns_port(self, state: LocalState) -> bool:
        pid_file = self._host(f"{DATA_DIR_IN_ROOT}/postmaster.pid")
        if not pid_file.exists():
            return False
        lines = pid_file.read_text().splitlines()
        return len(lines) > 3 and lines[3].strip() == str(state.port)

    # --- steps -----------------------------------------------------------------------------------

    def _install(self, progress: Progress | None) -> None:
        image = ensure_image(progress)
        staging = self.root.with_name(self.root.name + ".partial")
        if staging.exists():
            shutil.rmtree(staging)
        _copy_image(image, staging)
        staging.rename(self.root)

    def _refresh(self, progress: Progress | None) -> None:
        """A copy made from an older image (its stamp differs: PostGIS added since) is copied again
        from the image, the server stopped first; the cluster (``/var/lib/era5``: data, socket, log)
        moves over to the new copy as it is."""
        image = ensure_image(progress)
        if image_stamp(self.root) == image_stamp(image):
            return
        (progress or log.info)(f"refreshing the local server's root {self.root} from the image {image}")
        self.down()
        staging = self.root.with_name(self.root.name + ".partial")
        if staging.exists():
            shutil.rmtree(staging)
        _copy_image(image, staging)
        cluster = Path(DATA_DIR_IN_ROOT).parent.relative_to("/")
        if (self.root / cluster).exists():
            shutil.rmtree(staging / cluster, ignore_errors=True)
            (self.root / cluster).rename(staging / cluster)
        swap_in(staging, self.root)

    def _ids(self) -> tuple[int, int]:
        for line in self._host("/etc/passwd").read_text().splitlines():
            fields = line.split(":")
            if fields[0] == "postgres":
                return int(fields[2]), int(fields[3])
        raise DatabaseError(f"no postgres user in {self.root}/etc/passwd; remove {self.root} and retry")

    def _pg(self, argv: list[str], check: bool = True, repository: bool = False) -> subprocess.CompletedProcess[str]:
        return self.in_root([f"{PG_BIN}/{argv[0]}", *argv[1:]], check=check, repository=repository)

    def in_root(self, argv: list[str], check: bool = True,
                repository: bool = False) -> subprocess.CompletedProcess[str]:
        """``argv`` run inside the root as the server's user. With ``repository`` (the server's start,
        pgBackRest's commands) and a backup repository set, in a mount namespace of its own where the
        repository is bound at BACKUP_REPO_IN_ROOT: a server started so keeps the namespace, and its
        archive_command with it. The other commands (``pg_isready`` at every ``up``) need no mount."""
        uid, gid = self._ids()
        cmd = ["chroot", f"--userspec={uid}:{gid}", str(self.root), *argv]
        if repository and self.backup_repository is not None:
            self._prepare_repository(uid, gid)
            bind = 'if [ -d "$1" ]; then mount --bind "$0" "$1" || exit 125; fi; shift; exec "$@"'
            cmd = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", bind,
                   str(self.backup_repository), str(self._host(BACKUP_REPO_IN_ROOT)), *cmd]
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "HOME": "/var/lib/era5",
               "PGPASSFILE": "/var/lib/era5/.pgpass"}
        return _run(cmd, check=check, env=env)

    def _prepare_repository(self, uid: int, gid: int) -> None:
        assert self.backup_repository is not None
        self.backup_repository.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chown(self.backup_repository, uid, gid)
        mount_point = self._host(BACKUP_REPO_IN_ROOT)
        if mount_point.parent.is_dir():
            mount_point.mkdir(exist_ok=True)

    def _init_cluster(self) -> LocalState:
        state = self.state()
        pgdata = self._host(DATA_DIR_IN_ROOT)
        if state is not None and (pgdata / "PG_VERSION").exists():
            return state
        uid, gid = self._ids()
        if pgdata.exists():
            shutil.rmtree(pgdata)
        pgdata.parent.mkdir(parents=True, exist_ok=True)
        os.chown(pgdata.parent, uid, gid)
        password = secrets.token_urlsafe(18)
        pwfile = pgdata.parent / "pwfile"
        with open_private(pwfile) as fh:  # 0600 from birth; the server's user reads it once
            fh.write(password + "\n")
        os.chown(pwfile, uid, gid)
        try:
            self._pg(
                [
                    "initdb", "-D", DATA_DIR_IN_ROOT, "-U", "postgres", "--auth-local=scram-sha-256",
                    "--auth-host=scram-sha-256", "--pwfile=/var/lib/era5/pwfile", "-E", "UTF8",
                    "--locale=C.UTF-8",
                ]
            )
        finally:
            pwfile.unlink(missing_ok=True)
        state = LocalState(port=choose_port(self.home), password=password)
        conf = "".join(f"{k} = {v}\n" for k, v in SERVER_SETTINGS.items()) + f"port = {state.port}\n"
        (pgdata / "postgresql.auto.conf").write_text(conf)
        write_json(self.state_file, state.as_dict(), private=True)
        return state

    def _start(self, state: LocalState) -> None:
        if not port_free(state.port):
            raise DatabaseError(
                f"port {state.port} of the local TimescaleDB ({self.home}) is taken by another program; "
                f"stop it, or edit the port in {self.state_file} and "
                f"{self._host(DATA_DIR_IN_ROOT)}/postgresql.auto.conf"
            )
        locks = [self._host(f"{DATA_DIR_IN_ROOT}/postmaster.pid"), *self.socket_path.glob(".s.PGSQL.*.lock")]
        for lock in locks:
            if pid_file_is_stale(lock, self.root):
                log.info("removing %s: its process is gone or another root's", lock)
                lock.unlink()
        # The socket's directory, made (or put right) at every start: the server's user's alone.
        uid, gid = self._ids()
        self.socket_path.mkdir(parents=True, exist_ok=True)
        os.chown(self.socket_path, uid, gid)
        self.socket_path.chmod(0o700)
        # On the command line as well as in postgresql.auto.conf: a cluster made with the socket in
        # /tmp keeps that in its file, and the command line wins. No JIT, for clusters old and new: a
        # read over many chunks passes jit_above_cost and compiles a function per chunk's expressions,
        # seconds for nothing (docs/benchmarks.md, "JIT over many chunks").
        options = " ".join([f"-c timescaledb.license={self.licence}", "-c jit=off",
                            *(f"-c {k}={v}" for k, v in SOCKET_SETTINGS.items()), *self._archive_options(state)])
        result = self._pg(
            ["pg_ctl", "-D", DATA_DIR_IN_ROOT, "-l", LOG_IN_ROOT, "-w", "-t", "120", "-o", options, "start"],
            check=False, repository=True
        )
        if result.returncode != 0:
            tail = "\n".join(self._host(LOG_IN_ROOT).read_text(errors="replace").splitlines()[-15:])
            raise DatabaseError(f"the local TimescaleDB did not start:\n{result.stderr}\n{tail}")

    def _archive_options(self, state: LocalState) -> list[str]:
        """The server's WAL archiving: on, through pgBackRest, when a backup repository is set (written
        afresh at each start: the port is in it); off otherwise."""
        if self.backup_repository is None:
            return ["-c archive_mode=off"]
        uid, gid = self._ids()
        conf = self._host(BACKUP_CONF_IN_ROOT)
        for folder in ("pgbackrest/log", "pgbackrest/lock", "pgbackrest/spool"):
            path = self._host(f"/var/lib/era5/{folder}")
            path.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chown(path, uid, gid)
        lines = [
            "[global]", f"repo1-path={BACKUP_REPO_IN_ROOT}",
            f"repo1-retention-full={settings.load().backup_retention_full}",
            # zstd at level 3: chosen against gz and lz4 by `era5bench backup-drill` (docs/benchmarks.md)
            "compress-type=zst", "compress-level=3", "process-max=2", "start-fast=y",
            "log-path=/var/lib/era5/pgbackrest/log", "lock-path=/var/lib/era5/pgbackrest/lock",
            "spool-path=/var/lib/era5/pgbackrest/spool", "log-level-console=warn", "log-level-file=info",
            f"[{STANZA}]", f"pg1-path={DATA_DIR_IN_ROOT}", f"pg1-socket-path={SOCKET_DIR_IN_ROOT}",
            f"pg1-port={state.port}", "pg1-user=postgres", "",
        ]
        for path, text in ((conf, "\n".join(lines)), (self._host("/var/lib/era5/.pgpass"),
                                                       f"*:*:*:postgres:{state.password}\n")):
            with open_private(path) as fh:
                fh.write(text)
            os.chown(path, uid, gid)
        command = f"pgbackrest --config={BACKUP_CONF_IN_ROOT} --stanza={STANZA} archive-push %p"
        return ["-c archive_mode=on", f"-c 'archive_command={command}'"]

    def _create_databases(self, state: LocalState) -> None:
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = psycopg.connect(state.url("postgres"), autocommit=True, connect_timeout=5)
                break
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        with conn:
            existing = {r[0] for r in conn.execute("SELECT datname FROM pg_database")}
            for name in ("era5", "airflow"):
                if name not in existing:
                    conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        self._ensure_reader(state)

    def _ensure_reader(self, state: LocalState) -> None:
        """The read-only role of the HTTP reads (db.reader), its password kept in server.json (0600)."""
        if state.reader_password is None:
            state = LocalState(state.port, state.password, secrets.token_urlsafe(18))
        with psycopg.connect(state.url("era5"), autocommit=True, connect_timeout=5) as conn:
            # Made once: later tables are readable through the default privileges, so a role in place
            # (with the password kept) is not granted again at every start.
            made = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ROLE,)).fetchone() is not None
            if made and self.state() == state:
                return
            ensure_reader(conn, str(state.reader_password))
        if self.state() != state:
            write_json(self.state_file, state.as_dict(), private=True)


def server_versions(url: str) -> dict[str, str | None]:
    """PostgreSQL and TimescaleDB versions and TimescaleDB's licence, as the server reports them."""
    with psycopg.connect(url, connect_timeout=5) as conn:
        row = conn.execute(
            "SELECT current_setting('server_version'), current_setting('timescaledb.license', true),"
            " (SELECT default_version FROM pg_available_extensions WHERE name = 'timescaledb')").fetchone()
    assert row is not None
    return {"postgresql": row[0], "licence": row[1], "timescaledb": row[2]}


def _run(
    cmd: list[str], check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if check and result.returncode != 0:
        raise DatabaseError(
            f"command failed ({result.returncode}): {' '.join(cmd)}\n{result.stdout[-2000:]}{result.stderr[-2000:]}"
        )
    return result




def _copy_image(image: Path, target: Path) -> None:
    # Hard links: seconds and no space for a 2 GB root. A home on another file system gets a copy.
    result = subprocess.run(["cp", "-a", "--link", str(image), str(target)], capture_output=True, text=True,
                            check=False)
    if result.returncode != 0:
        shutil.rmtree(target, ignore_errors=True)
        log.info("hard links from %s failed (%s); copying the image instead", image, result.stderr.strip())
        _run(["cp", "-a", str(image), str(target)])


def choose_port(home: Path) -> int:
    # Stable per checkout, so restarts keep the same URL; a second checkout hashes elsewhere.
    base = 54330 + zlib.crc32(str(home).encode()) % 2000
    for port in range(base, base + 200):
        if port_free(port):
            return port
    raise DatabaseError(f"no free port in {base}..{base + 199} for the local TimescaleDB")


def pid_file_is_stale(pid_file: Path, root: Path) -> bool:
    """Whether a server's lock file (``postmaster.pid``, a socket's ``.lock``) names no process of
    ``root``. PostgreSQL refuses to start while the PID in one is alive; a server that died (the
    machine's processes killed) leaves the file, and chroots share the host's PIDs, so another
    checkout's server can hold that PID later."""
    try:
        pid = int(pid_file.read_text().splitlines()[0])
    except (FileNotFoundError, IndexError, ValueError):
        return False
    try:
        return Path(os.readlink(f"/proc/{pid}/root")).resolve() != root.resolve()
    except FileNotFoundError:
        return True
    except PermissionError:  # not ours to judge
        return False

