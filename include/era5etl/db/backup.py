"""Physical backups of the local server with pgBackRest: full, differential and incremental backups,
WAL archived continuously, and a restore to any moment the archive covers (point-in-time recovery).

pgBackRest is Debian 13's package, installed in the server image (``db.image``); it runs inside the
server's root as the server's user, against a repository folder of the host's
(``ERA5_BACKUP_REPOSITORY``) that ``db.local`` binds into the root for the server and for these
commands only. TimescaleDB's documentation on physical backups: a restore needs the same PostgreSQL
major and TimescaleDB version as the backup (the same image), and the catalog, the continuous
aggregates and the background jobs come back with the cluster, because they are in it.

A restore never writes over the data directory it replaces: the old one is kept beside it
(``pgdata.before-restore-<time>``) until the operator removes it.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import dataclass
from typing import Any

import psycopg

from era5etl.core.errors import InputError
from era5etl.db.errors import DatabaseError
from era5etl.db.local import BACKUP_CONF_IN_ROOT, STANZA, LocalTimescale

KINDS = ("full", "diff", "incr")


class BackupError(DatabaseError):
    """A backup or restore could not be made; the message says why and what to do."""


@dataclass(frozen=True)
class Backup:
    label: str
    kind: str
    started: dt.datetime
    stopped: dt.datetime
    size: int  # the cluster's bytes at the backup
    stored: int  # bytes this backup added to the repository (compressed, deltas only)
    wal_start: str
    wal_stop: str

    def as_dict(self) -> dict[str, Any]:
        return {"label": self.label, "type": self.kind, "started": self.started.isoformat(),
                "stopped": self.stopped.isoformat(), "size_bytes": self.size, "stored_bytes": self.stored,
                "wal_start": self.wal_start, "wal_stop": self.wal_stop}


def _server(server: LocalTimescale | None) -> LocalTimescale:
    server = server or LocalTimescale()
    if server.backup_repository is None:
        raise InputError("no backup repository: set ERA5_BACKUP_REPOSITORY to a folder (best on another disk), "
                         "then `python -m era5etl db up` restarts the server archiving its WAL there")
    return server


def pgbackrest(server: LocalTimescale, *args: str) -> str:
    """``pgbackrest --stanza=era5 ARGS`` in the server's root; its output, or BackupError."""
    result = server.in_root(["pgbackrest", f"--config={BACKUP_CONF_IN_ROOT}", f"--stanza={STANZA}", *args],
                            check=False, repository=True)
    if result.returncode != 0:
        raise BackupError(f"pgbackrest {args[-1]} failed ({result.returncode}): "
                          f"{(result.stderr or result.stdout).strip()[-2000:]}")
    return result.stdout


def backup(kind: str = "incr", server: LocalTimescale | None = None) -> Backup:
    """A backup of the running server (``kind``: full, diff or incr; pgBackRest makes the first one
    full whatever is asked), then the expiry of what the retention no longer needs."""
    if kind not in KINDS:
        raise InputError(f"backup type {kind!r}: give one of {', '.join(KINDS)}")
    server = _server(server)
    server.up()  # running, archiving to this repository
    pgbackrest(server, "stanza-create")  # idempotent: checks the stanza against the cluster
    pgbackrest(server, f"--type={kind}", "backup")
    return backups(server)[-1]


def backups(server: LocalTimescale | None = None) -> list[Backup]:
    """The repository's backups, oldest first."""
    server = _server(server)
    if not (server.backup_repository and (server.backup_repository / "backup" / STANZA).is_dir()):
        return []
    raw = json.loads(pgbackrest(server, "--output=json", "info"))
    found = []
    for stanza in raw:
        for item in stanza.get("backup", []):
            found.append(Backup(
                label=item["label"], kind=item["type"],
                started=dt.datetime.fromtimestamp(item["timestamp"]["start"], dt.UTC),
                stopped=dt.datetime.fromtimestamp(item["timestamp"]["stop"], dt.UTC),
                size=int(item["info"]["size"]), stored=int(item["info"]["repository"]["delta"]),
                wal_start=item["archive"]["start"], wal_stop=item["archive"]["stop"]))
    return sorted(found, key=lambda b: b.started)


def restore(to: dt.datetime | None = None, server: LocalTimescale | None = None) -> dict[str, Any]:
    """The cluster as it was at ``to`` (the end of the archived WAL when None), into a fresh data
    directory: the server is stopped, its data directory moved aside, the backup before ``to``
    restored, the WAL replayed to ``to``, and the server promoted and started."""
    server = _server(server)
    if to is not None and to.tzinfo is None:
        raise InputError("give the restore time with its offset, e.g. 2026-12-02T01:30:00+00:00")
    if to is not None and to > dt.datetime.now(dt.UTC):
        raise InputError(f"{to.isoformat()} is in the future: the WAL reaches no further than now; leave --to "
                         "out to replay all of it")
    taken = backups(server)
    if not taken:
        raise BackupError(f"no backup in {server.backup_repository}: make one with `python -m era5etl db backup`")
    # pgBackRest takes the newest backup whose stop time (whole seconds) is before the target's whole
    # second: a moment within the second a backup ended is not yet after it.
    if to is not None and int(to.timestamp()) <= int(taken[0].stopped.timestamp()):
        raise InputError(f"{to.isoformat()} is not after the end of the oldest backup "
                         f"({taken[0].stopped.isoformat()}); nothing can restore it")
    state = server.state()
    if state is None:
        raise BackupError(f"the local server in {server.home} was never set up: nothing to restore into")
    aside = server.replace_data_directory()
    target = ["--type=time", f"--target={to.isoformat(sep=' ')}", "--target-action=promote"] if to else []
    try:
        pgbackrest(server, *target, "restore")
        server.start_restored()
        _wait_promoted(state.url("postgres"))
    except (BackupError, DatabaseError, psycopg.Error) as exc:
        kept = (f"; the data directory from before the restore is {aside}: stop the server and move it back to "
                "pgdata beside it to start as before") if aside else ""
        raise BackupError(f"the restore did not finish: {exc}{kept}") from None
    server.up()
    return {"restored_to": to.isoformat() if to else "end of the archived WAL",
            "replaced_data_directory": str(aside) if aside else None}


def _wait_promoted(url: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
                row = conn.execute("SELECT pg_is_in_recovery()").fetchone()
        except psycopg.OperationalError:  # "the database system is starting up": not consistent yet
            row = (True,)
        if row and not row[0]:
            return
        time.sleep(0.5)
    raise BackupError(f"the restored server was still recovering after {timeout:.0f} s; see its log")
