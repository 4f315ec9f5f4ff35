"""``db backup``, ``db backups`` and ``db restore``: pgBackRest's backups of the local server (db.backup)."""

# Imports inside functions: `era5etl --help` and each command load only what that command runs (start-
# up time).

from __future__ import annotations

import argparse
import datetime as dt

from era5etl.cli.common import emit, size_text
from era5etl.core.errors import InputError


def restore_time(text: str) -> dt.datetime:
    """``--to``: an ISO 8601 moment with its offset (``Z`` for UTC)."""
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time, e.g. 2026-12-02T01:30:00Z") from None
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} has no offset: add Z for UTC, or +HH:MM")
    return moment


def cmd_backup(args: argparse.Namespace) -> int:
    from era5etl.db import backup

    if args.action == "backup":
        made = backup.backup(args.type)
        if not args.json:
            print(f"{made.label} ({made.kind}): {size_text(made.size)} cluster, {size_text(made.stored)} "
                  f"stored, {(made.stopped - made.started).total_seconds():.0f} s")
        emit(made.as_dict(), args.json)
    elif args.action == "backups":
        taken = backup.backups()
        if not args.json:
            for b in taken:
                print(f"{b.label:36} {b.kind:4} {b.stopped:%Y-%m-%d %H:%M:%S}Z {size_text(b.size):>10} cluster "
                      f"{size_text(b.stored):>10} stored")
            if not taken:
                print("no backups yet: python -m era5etl db backup")
        emit({"backups": [b.as_dict() for b in taken]}, args.json)
    else:
        if not args.yes:
            raise InputError("db restore takes the server back to the backup's time (later writes are lost, the "
                             "data directory kept aside); add --yes to do it")
        done = backup.restore(args.to)
        if not args.json:
            aside = done["replaced_data_directory"]
            kept = (f"; the data directory before the restore is {aside} (remove it when you no longer need it)"
                    if aside else "")
            print(f"restored to {done['restored_to']}{kept}")
        emit(done, args.json)
    return 0
