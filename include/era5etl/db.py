"""Database access: where the database is, connections, the schema from sql/, and the local TimescaleDB.

When ``ERA5_DATABASE_URL`` is set that server is used and nothing is provisioned. Otherwise the
project runs its own PostgreSQL 17 + TimescaleDB: Debian 13 packages installed into a
``debootstrap --variant=minbase trixie`` root under ``.local/`` (TimescaleDB is not packaged for
the host's Debian 12), started with chroot on loopback with a port derived from the checkout's
path, so two checkouts on one machine never share a server by accident.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
import shutil
import socket
import subprocess
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
from psycopg import sql

log = logging.getLogger(__name__)

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SQL_DIR = PROJECT_ROOT / "sql"
PG_BIN = "/usr/lib/postgresql/17/bin"
DATA_DIR_IN_ROOT = "/var/lib/era5/pgdata"
LOG_IN_ROOT = "/var/lib/era5/postgresql.log"
DEBIAN_MIRROR = os.environ.get("ERA5_DEBIAN_MIRROR", "http://deb.debian.org/debian")

# Bulk-load settings: durability stays on (fsync, full_page_writes, synchronous_commit); what
# changes is how often checkpoints force full-page images and how much memory index builds get.
SERVER_SETTINGS: dict[str, str] = {
    "listen_addresses": "'127.0.0.1'",
    "unix_socket_directories": "'/tmp'",
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


class DatabaseError(RuntimeError):
    """The database cannot be reached or provisioned; the message says which and how to fix it."""


def redact(url: str) -> str:
    """The URL with its password replaced, for logs and error messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def with_database(url: str, dbname: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path="/" + dbname))


@contextlib.contextmanager
def connect(url: str, *, autocommit: bool = False) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
    try:
        conn = psycopg.connect(url, autocommit=autocommit, connect_timeout=10, application_name="era5etl")
    except psycopg.OperationalError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DatabaseError(f"cannot connect to the database at {redact(url)}: {first}") from None
    try:
        yield conn
    finally:
        conn.close()


def table_ident(table: str) -> sql.Identifier:
    """A table name as given, optionally schema-qualified (``schema.table``)."""
    if not table or len(table) > 63 * 2 + 1:
        raise ValueError(f"table name {table!r} is empty or too long")
    return sql.Identifier(*table.split(".", 1))


def split_table(table: str) -> tuple[str | None, str]:
    """(schema or None, name) of a table name as given; None means the search path's first schema."""
    parts = table.split(".", 1)
    return (parts[0], parts[1]) if len(parts) == 2 else (None, parts[0])


def _render(path: Path, **idents: sql.Composable) -> sql.SQL | sql.Composed:
    # A schema file that takes identifiers uses {name} placeholders for them (values are never
    # formatted in); one that takes none is run as written, so its braces (JSON defaults) stay literal.
    text = sql.SQL(path.read_text())  # a file of ours, never user input
    return text.format(**idents) if idents else text


def ensure_schema(url: str, table: str = "weather", chunk_interval: str = "1 day") -> None:
    """Create the extension, the pipeline's own tables, and the hypertable ``table`` if missing."""
    ident = table_ident(table)
    with connect(url, autocommit=True) as conn:
        # Two first runs at once would both try CREATE; a session lock keeps them in line.
        conn.execute("SELECT pg_advisory_lock(hashtext('era5etl.schema'))")
        try:
            conn.execute(_render(SQL_DIR / "001_extension.sql"))
            conn.execute(_render(SQL_DIR / "002_pipeline_tables.sql"))
            conn.execute(_render(SQL_DIR / "003_cds_jobs.sql"))
            conn.execute(_render(SQL_DIR / "004_validation.sql"))
            conn.execute(_render(SQL_DIR / "010_weather_hypertable.sql", table=ident))
            conn.execute(
                "SELECT create_hypertable(%s::regclass, by_range('time', %s::interval),"
                " create_default_indexes => false, if_not_exists => true)",
                (ident.as_string(conn), chunk_interval),
            )
        finally:
            conn.execute("SELECT pg_advisory_unlock(hashtext('era5etl.schema'))")


# --- the local server ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LocalState:
    port: int
    password: str

    def url(self, dbname: str = "era5") -> str:
        return f"postgresql://postgres:{quote(self.password, safe='')}@127.0.0.1:{self.port}/{dbname}"


class LocalTimescale:
    """The project's own PostgreSQL + TimescaleDB, under ``home`` (default ``<project>/.local``)."""

    def __init__(self, home: Path | None = None) -> None:
        self.home = (home or Path(os.environ.get("ERA5_HOME", PROJECT_ROOT / ".local"))).resolve()
        self.root = self.home / "trixie"
        self.state_file = self.home / "timescaledb.json"

    # paths inside the root as the host sees them
    def _host(self, path_in_root: str) -> Path:
        return self.root / path_in_root.lstrip("/")

    @property
    def installed(self) -> bool:
        return self._host(f"{PG_BIN}/postgres").exists() and self._host(
            "/usr/share/postgresql/17/extension/timescaledb.control"
        ).exists()

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        self.home.mkdir(parents=True, exist_ok=True)
        with open(self.home / ".provision.lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def up(self) -> str:
        """Install, initialise and start as needed; return the URL of the ``era5`` database."""
        if os.geteuid() != 0:
            raise DatabaseError(
                "the local TimescaleDB needs root (debootstrap and chroot); run as root or set "
                "ERA5_DATABASE_URL to a PostgreSQL server with TimescaleDB"
            )
        with self._lock():
            if not self.installed:
                self._install()
            state = self._init_cluster()
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

    def state(self) -> LocalState | None:
        if not self.state_file.exists():
            return None
        raw = json.loads(self.state_file.read_text())
        return LocalState(port=int(raw["port"]), password=str(raw["password"]))

    def running(self, state: LocalState | None = None) -> bool:
        state = state or self.state()
        if state is None or not self.installed:
            return False
        result = self._pg(["pg_isready", "-h", "127.0.0.1", "-p", str(state.port), "-q"], check=False)
        return result.returncode == 0 and self._owns_port(state)

    def _owns_port(self, state: LocalState) -> bool:
        pid_file = self._host(f"{DATA_DIR_IN_ROOT}/postmaster.pid")
        if not pid_file.exists():
            return False
        lines = pid_file.read_text().splitlines()
        return len(lines) > 3 and lines[3].strip() == str(state.port)

    # --- steps -----------------------------------------------------------------------------------

    def _install(self) -> None:
        log.info("installing PostgreSQL 17 + TimescaleDB from Debian 13 into %s (a few minutes, once)", self.root)
        if shutil.which("debootstrap") is None:
            _run(["apt-get", "update", "-q"])
            _run(["apt-get", "install", "-y", "-q", "debootstrap"])
        staging = self.root.with_name(self.root.name + ".partial")
        if staging.exists():
            shutil.rmtree(staging)
        if self.root.exists():
            shutil.rmtree(self.root)
        _run(["debootstrap", "--variant=minbase", "trixie", str(staging), DEBIAN_MIRROR])
        # Keep the cluster under our own data directory: no Debian-managed main cluster.
        (staging / "etc/postgresql-common/createcluster.conf").parent.mkdir(parents=True, exist_ok=True)
        (staging / "etc/postgresql-common/createcluster.conf").write_text("create_main_cluster = false\n")
        _run(
            [
                "chroot", str(staging), "/bin/sh", "-c",
                "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "
                "--no-install-recommends postgresql-17 postgresql-17-timescaledb && apt-get clean",
            ]
        )
        staging.rename(self.root)

    def _ids(self) -> tuple[int, int]:
        for line in self._host("/etc/passwd").read_text().splitlines():
            fields = line.split(":")
            if fields[0] == "postgres":
                return int(fields[2]), int(fields[3])
        raise DatabaseError(f"no postgres user in {self.root}/etc/passwd; remove {self.root} and retry")

    def _pg(self, argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        uid, gid = self._ids()
        cmd = ["chroot", f"--userspec={uid}:{gid}", str(self.root), f"{PG_BIN}/{argv[0]}", *argv[1:]]
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "HOME": "/var/lib/era5"}
        return _run(cmd, check=check, env=env)

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
        pwfile.write_text(password + "\n")
        os.chown(pwfile, uid, gid)
        try:
            self._pg(
                [
                    "initdb", "-D", DATA_DIR_IN_ROOT, "-U", "postgres", "--auth-local=trust",
                    "--auth-host=scram-sha-256", f"--pwfile={'/var/lib/era5/pwfile'}", "-E", "UTF8",
                    "--locale=C.UTF-8",
                ]
            )
        finally:
            pwfile.unlink(missing_ok=True)
        state = LocalState(port=_choose_port(self.home), password=password)
        conf = "".join(f"{k} = {v}\n" for k, v in SERVER_SETTINGS.items()) + f"port = {state.port}\n"
        (pgdata / "postgresql.auto.conf").write_text(conf)
        self.state_file.write_text(json.dumps({"port": state.port, "password": password}))
        self.state_file.chmod(0o600)
        return state

    def _start(self, state: LocalState) -> None:
        if not _port_free(state.port):
            raise DatabaseError(
                f"port {state.port} of the local TimescaleDB ({self.home}) is taken by another program; "
                f"stop it, or edit the port in {self.state_file} and "
                f"{self._host(DATA_DIR_IN_ROOT)}/postgresql.auto.conf"
            )
        result = self._pg(
            ["pg_ctl", "-D", DATA_DIR_IN_ROOT, "-l", LOG_IN_ROOT, "-w", "-t", "120", "start"], check=False
        )
        if result.returncode != 0:
            tail = "\n".join(self._host(LOG_IN_ROOT).read_text(errors="replace").splitlines()[-15:])
            raise DatabaseError(f"the local TimescaleDB did not start:\n{result.stderr}\n{tail}")

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


def _run(
    cmd: list[str], check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if check and result.returncode != 0:
        raise DatabaseError(
            f"command failed ({result.returncode}): {' '.join(cmd)}\n{result.stdout[-2000:]}{result.stderr[-2000:]}"
        )
    return result


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # As PostgreSQL binds: connections closed a moment ago (TIME_WAIT) must not count as "taken".
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _choose_port(home: Path) -> int:
    # Stable per checkout, so restarts keep the same URL; a second checkout hashes elsewhere.
    base = 54330 + zlib.crc32(str(home).encode()) % 2000
    for port in range(base, base + 200):
        if _port_free(port):
            return port
    raise DatabaseError(f"no free port in {base}..{base + 199} for the local TimescaleDB")


def database_url() -> str:
    """The pipeline's database: ``ERA5_DATABASE_URL``, else the local server (provisioned on demand)."""
    url = os.environ.get("ERA5_DATABASE_URL")
    if url:
        return url
    return LocalTimescale().up()


def airflow_database_url() -> str:
    """Airflow's metadata database on the same server, so LocalExecutor can run tasks in parallel."""
    return with_database(database_url(), "airflow")
