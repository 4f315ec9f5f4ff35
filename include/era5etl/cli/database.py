"""Commands on the database and Airflow's view of this checkout: ``db up|down|status``, ``airflow-env``."""

# Imports inside functions: `era5etl --help` and each command load only what that command runs (start-
# up time).

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from era5etl import settings
from era5etl.cli.backup import cmd_backup, restore_time
from era5etl.cli.common import emit
from era5etl.cli.progress import status_lines
from era5etl.core.errors import InputError
from era5etl.core.paths import PROJECT_ROOT
from era5etl.db import LocalTimescale, redact
from era5etl.db.backup import KINDS

# The actions cmd_backup answers (cli.backup).
BACKUP_ACTIONS = ("backup", "backups", "restore")


def add_parsers(sub: Any) -> None:
    db = sub.add_parser("db", help="the database: start (up), stop (down), show it (status), back it up and "
                                   "restore it (backup, backups, restore)")
    db.add_argument("action", choices=["up", "down", "status", *BACKUP_ACTIONS],
                    help="up: build (once per machine), start and print the URL; down: stop; status: versions, "
                         "licence; backup: a pgBackRest backup into ERA5_BACKUP_REPOSITORY; backups: list them; "
                         "restore: the server as it was at --to (default: the end of the archived WAL)")
    db.add_argument("--type", choices=KINDS, default="incr",
                    help="backup: full, differential (since the last full) or incremental (since the last "
                         "backup); the first is full whatever is asked (default: incr)")
    db.add_argument("--to", type=restore_time, metavar="TIME",
                    help="restore: an ISO 8601 moment with its offset (2026-12-02T01:30:00Z); the WAL is replayed "
                         "to it")
    db.add_argument("--yes", action="store_true", help="restore: really take the server back in time")
    db.add_argument("--json", action="store_true", help="print one JSON object and nothing else (its url holds the "
                                                        "password, for a program to connect with)")
    db.set_defaults(func=cmd_db)
    ae = sub.add_parser("airflow-env", help="print shell exports that point Airflow at this checkout")
    ae.set_defaults(func=cmd_airflow_env)


def cmd_db(args: argparse.Namespace) -> int:
    given = settings.load().database_url
    if given and args.action in BACKUP_ACTIONS:
        raise InputError("ERA5_DATABASE_URL is set: back that server up with its own tools (pgBackRest's guide "
                         "in docs/operating.md, Backups); db backup works on the local server")
    if given:
        if args.action == "down":
            print("ERA5_DATABASE_URL is set: the database is not ours to stop", file=sys.stderr)
            return 2
        if not args.json:
            print(redact(given))
        emit({"url": given, "running": True, "managed": False}, args.json)
        return 0
    if args.action in BACKUP_ACTIONS:
        return cmd_backup(args)
    server = LocalTimescale()
    if args.action == "up":
        with status_lines("db up: the local TimescaleDB") as say:
            url = server.up(progress=say)
        if not args.json:
            print(redact(url))  # for a person: the password masked; --json keeps it for a program
        emit({"url": url, "running": True, "managed": True, "home": str(server.home)}, args.json)
    elif args.action == "down":
        stopped = server.down()
        if not args.json:
            print("stopped" if stopped else "not running")
        emit({"stopped": stopped}, args.json)
    else:
        info = server.describe()
        if not args.json:
            versions = (f" PostgreSQL {info['postgresql']}, TimescaleDB {info['timescaledb']} "
                        f"(licence {info['licence']})" if info["running"] else "")
            shown = redact(str(info["url"])) if info["url"] else "(not provisioned)"
            print(f"{shown} {'running' if info['running'] else 'stopped'}{versions}")
        emit(info, args.json)
    return 0


# What a task's end waits for before the next task of its month can start (measured in a backfill of
# small months, docs/benchmarks.md "A decade's backfill"): Airflow's defaults are sized for tasks of
# minutes, and here four tasks a month each took longer to hand over than to run.
LATENCY = {
    # The task supervisor notices its task process has exited only at its next wake-up when the
    # process closed its sockets just before exiting (a race it loses about one task in three): it then
    # sleeps out this interval, 5 s by default, holding the executor's worker. Heartbeats to the
    # api-server come this often too (one small request a second per running task).
    "AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL": "1",
    # The scheduler sleeps this long when a loop found nothing to do (1 s by default), so a finished
    # task's successor waited half of it on average. An idle stack's scheduler then uses 2-3% of a core
    # instead of 1.6% (docs/benchmarks.md).
    "AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME": "0.5",
}


def airflow_environment() -> dict[str, str]:
    """Airflow's settings for this checkout: home in .local/, metadata in the local server's ``airflow`` db,
    LocalExecutor sized to the cores."""
    from era5etl.db import airflow_database_url

    meta = airflow_database_url().replace("postgresql://", "postgresql+psycopg2://", 1)
    return {
        "AIRFLOW_HOME": str(PROJECT_ROOT / ".local" / "airflow"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(PROJECT_ROOT / "dags"),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(PROJECT_ROOT / "plugins"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        # LocalExecutor starts this many workers: Airflow's default of 32 on this 2-core machine cost
        # memory and scheduling for nothing; tasks wait on the CDS deferred, not in a worker.
        "AIRFLOW__CORE__PARALLELISM": str(2 * (os.cpu_count() or 1)),
        **LATENCY,
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": meta,
        "GX_ANALYTICS_ENABLED": "False",
    }


def cmd_airflow_env(args: argparse.Namespace) -> int:
    import shlex

    for key, value in airflow_environment().items():
        print(f"export {key}={shlex.quote(value)}")
    return 0
