"""``db backup|backups|restore``'s own checks, before pgBackRest is reached (the backups themselves:
tests/integration/db/test_backup.py)."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys

import pytest

from era5etl.cli.backup import restore_time


def test_a_restore_time_needs_its_offset() -> None:
    assert restore_time("2026-12-02T01:30:00Z") == dt.datetime(2026, 12, 2, 1, 30, tzinfo=dt.UTC)
    assert restore_time("2026-12-02 02:30+01:00") == dt.datetime(2026, 12, 2, 1, 30, tzinfo=dt.UTC)
    for bad in ("2026-12-02T01:30:00", "yesterday", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            restore_time(bad)


def _db(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("ERA5_BACKUP_REPOSITORY", "ERA5_DATABASE_URL")}
    return subprocess.run([sys.executable, "-m", "era5etl", "db", *args], capture_output=True, text=True,
                          env={**base, **env}, timeout=120)


def test_backups_without_a_repository_or_on_a_server_of_ones_own_are_refused_with_what_to_do() -> None:
    done = _db("backups")
    assert done.returncode == 2 and "set ERA5_BACKUP_REPOSITORY" in done.stderr, done.stderr
    done = _db("backup", ERA5_DATABASE_URL="postgresql://u:p@127.0.0.1:1/x")
    assert done.returncode == 2 and "its own tools" in done.stderr and "Traceback" not in done.stderr, done.stderr
    done = _db("restore", "--to", "2026-12-02T01:30:00")
    assert done.returncode == 2 and "has no offset" in done.stderr, done.stderr
    done = _db("restore", ERA5_BACKUP_REPOSITORY="/nonexistent/repo")
    assert done.returncode == 2 and "--yes" in done.stderr, done.stderr
    done = _db("restore", "--to", "2999-01-01T00:00:00Z", "--yes", ERA5_BACKUP_REPOSITORY="/nonexistent/repo")
    assert done.returncode == 2 and "is in the future" in done.stderr, done.stderr
