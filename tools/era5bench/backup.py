"""``python -m era5bench backup-drill``: the restore drill of docs/benchmarks.md, on a server of its own.

It starts a local server under ``--home`` with a pgBackRest repository (``--repository``), loads the
441 points of 50/5/45/10 over ``--years`` with ``load-file`` (and the rollups), takes a full backup,
notes the moment, loads the year after, takes an incremental backup, and restores the server to the
noted moment into a fresh data directory. It prints the cluster's bytes, each backup's time and
stored bytes, the WAL archived, the restore's time (files, then the WAL replayed to the moment), per
GB of cluster, and whether every row of the table and its rollups came back (the fingerprints of
``era5bench relayout``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from era5bench.common import log
from era5bench.downloads import SYNTH_NOW
from era5bench.loadfile import AREA_AREA, decades_download, parse_years, run
from era5bench.relayout import fingerprint
from era5etl.core.paths import PROJECT_ROOT

TABLE = "bench_backup"
GB = 1e9


def _folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _load(years: tuple[int, int], table: str) -> dict[str, Any]:
    path = decades_download(area=AREA_AREA, years=years, name="area")
    return run(path, table)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m era5bench backup-drill", description=__doc__.split("\n\n")[0])
    p.add_argument("--years", default="2000-2004", type=parse_years,  # the year after is loaded too
                   help="the span loaded before the full backup (default %(default)s); the year after is loaded "
                        "between the two backups")
    p.add_argument("--home", type=Path, default=PROJECT_ROOT / ".local" / "bench" / "backup-drill",
                   help="the drill's server (removed first)")
    p.add_argument("--repository", type=Path, help="the pgBackRest repository (default: HOME/repo; removed first)")
    p.add_argument("--compressions", action="store_true",
                   help="first, a full backup of the loaded table with each of pgBackRest's gz, lz4 and zst (level 3) "
                        "into a trial repository of its own, timed and sized")
    p.add_argument("--json", action="store_true", help="end with one JSON object")
    args = p.parse_args(argv)
    if args.years[1] + 1 >= SYNTH_NOW.year:
        p.error(f"--years must end by {SYNTH_NOW.year - 2}: the year after is loaded too, and the synthetic CDS "
                f"publishes up to {SYNTH_NOW.date()}")
    home = args.home.resolve()
    repository = (args.repository or home / "repo").resolve()
    # Every process of the drill (this one's reads, load-file's children) talks to the drill's server.
    os.environ.pop("ERA5_DATABASE_URL", None)
    os.environ.update({"ERA5_HOME": str(home / "server-home"), "ERA5_BACKUP_REPOSITORY": str(repository)})
    from era5etl.db import backup
    from era5etl.db.local import LocalTimescale

    server = LocalTimescale()
    server.down()
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(repository, ignore_errors=True)
    url = server.up(progress=log)
    first, last = args.years
    loaded = _load((first, last), TABLE)
    log(f"drill: loaded {loaded.get('rows', 0):,} rows of {first}-{last}")
    trials = _compressions(server) if args.compressions else {}
    full = backup.backup("full", server)
    time.sleep(2.0)  # the moment is a second after the backup's end at least (pgBackRest's stop times are seconds)
    moment = _now(url)
    kept = fingerprint(url, TABLE)
    time.sleep(1.0)
    extra = _load((last + 1, last + 1), f"{TABLE}_later")
    incr = backup.backup("incr", server)
    wal = _folder_bytes(repository / "archive")
    began = time.perf_counter()
    backup.restore(moment, server)
    restore_s = time.perf_counter() - began
    back = fingerprint(url, TABLE)
    gone = _missing(url, f"{TABLE}_later")
    figures = {
        "cluster_bytes": full.size, "years": f"{first}-{last}", "rows": loaded.get("rows"),
        "full_s": (full.stopped - full.started).total_seconds(), "full_stored_bytes": full.stored,
        "incr_s": (incr.stopped - incr.started).total_seconds(), "incr_stored_bytes": incr.stored,
        "incr_cluster_bytes": incr.size, "later_rows": extra.get("rows"), "wal_archived_bytes": wal,
        "restore_s": round(restore_s, 1), "rows_back": back == kept, "later_table_gone": gone,
        "compressions": trials,
    }
    gb = full.size / GB
    full_s = (full.stopped - full.started).total_seconds()
    print(f"cluster {gb:.2f} GB ({loaded.get('rows', 0):,} rows of {first}-{last} and rollups)")
    print(f"full backup: {full_s:.0f} s ({full_s / gb:.1f} s/GB), stored "
          f"{full.stored / GB:.2f} GB ({full.size / max(full.stored, 1):.1f}x smaller)")
    incr_s = (incr.stopped - incr.started).total_seconds()
    print(f"incremental after {extra.get('rows', 0):,} more rows: {incr_s:.0f} s, stored {incr.stored / GB:.2f} GB; "
          f"WAL archived {wal / GB:.2f} GB")
    print(f"restore to the moment between: {restore_s:.0f} s ({restore_s / gb:.1f} s/GB); every row back: "
          f"{back == kept}; the later table gone: {gone}")
    for kind, (seconds, stored) in trials.items():
        print(f"a full backup with compress-type={kind}: {seconds:.1f} s, stored {stored / GB:.3f} GB "
              f"({full.size / max(stored, 1):.1f}x smaller)")
    if args.json:
        print(json.dumps(figures))
    server.down()
    return 0 if back == kept and gone else 1


def _compressions(server: Any) -> dict[str, tuple[float, int]]:
    """A full backup with each compression into ``<repository>/trial-<kind>`` (no WAL checked: the
    archive goes to the main repository), its seconds and stored bytes; the trial removed after."""
    from era5etl.db import backup
    from era5etl.db.local import BACKUP_REPO_IN_ROOT

    out = {}
    for kind in ("gz", "lz4", "zst"):
        trial = [f"--repo1-path={BACKUP_REPO_IN_ROOT}/trial-{kind}"]
        backup.pgbackrest(server, *trial, "stanza-create")
        began = time.perf_counter()
        backup.pgbackrest(server, *trial, f"--compress-type={kind}", "--no-archive-check", "--type=full", "backup")
        seconds = time.perf_counter() - began
        out[kind] = (round(seconds, 1), _folder_bytes(server.backup_repository / f"trial-{kind}" / "backup"))
        shutil.rmtree(server.backup_repository / f"trial-{kind}")
    return out


def _now(url: str) -> Any:
    from era5etl.db import connect

    with connect(url) as conn:
        row = conn.execute("SELECT now()").fetchone()
    assert row is not None
    return row[0]


def _missing(url: str, table: str) -> bool:
    from era5etl.db import connect

    with connect(url) as conn:
        row = conn.execute("SELECT to_regclass(%s) IS NULL", (table,)).fetchone()
    return bool(row and row[0])
