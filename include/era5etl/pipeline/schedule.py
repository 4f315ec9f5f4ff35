"""When a month can be loaded, and when its preliminary data (ERA5T) should be replaced by final ERA5.

The CDS publishes ERA5T about five days behind real time, so a month's run waits until the month's
end plus ``ERA5_PUBLICATION_DELAY`` (days, default 6: a day of margin). Those data carry expver
"0005"; final ERA5 ("0001") replaces them two to three months later. The ledger records which a
month holds, so :func:`months_to_finalize` finds the months still holding ERA5T once final data
should exist (``ERA5_FINAL_AFTER_MONTHS`` calendar months after the month's end, default 3, the rule
of the local CDS), and :func:`reload_month` loads them again from a fresh download.

Pure functions first (unit-tested without a database), then the ledger and CLI parts. This module
does not import Airflow; the data libraries load only when a month is reloaded.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from era5etl.core.errors import InputError
from era5etl.core.expver import PRELIMINARY
from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month

if TYPE_CHECKING:
    from era5etl.fetch import Credentials
    from era5etl.pipeline import MonthJob
    from era5etl.settings import Settings

DEFAULT_PUBLICATION_DELAY = timedelta(days=6)
DEFAULT_FINAL_AFTER_MONTHS = 3
# Months a pipeline is not working on: one in the middle of a run is left to that run.
_AT_REST = ("loaded", "validated", "failed")


# -------------------------------------------------------------------------------------------------
# Settings


def publication_delay(env: Mapping[str, str] | None = None) -> timedelta:
    """ERA5_PUBLICATION_DELAY: days after a month's end before all its hours are published (default 6)."""
    raw = (os.environ if env is None else env).get("ERA5_PUBLICATION_DELAY", "").strip()
    if not raw:
        return DEFAULT_PUBLICATION_DELAY
    try:
        days = float(raw.removesuffix("d"))
    except ValueError:
        raise InputError(f"ERA5_PUBLICATION_DELAY={raw!r} is not a number of days") from None
    if not 0 <= days < 366:
        raise InputError(f"ERA5_PUBLICATION_DELAY={raw!r} must be between 0 and 365 days")
    return timedelta(days=days)


def final_after_months(env: Mapping[str, str] | None = None) -> int:
    """ERA5_FINAL_AFTER_MONTHS: calendar months after a month's end until final ERA5 covers it (default 3)."""
    raw = (os.environ if env is None else env).get("ERA5_FINAL_AFTER_MONTHS", "").strip()
    if not raw:
        return DEFAULT_FINAL_AFTER_MONTHS
    if not raw.isdigit() or not 0 < int(raw) <= 24:
        raise InputError(f"ERA5_FINAL_AFTER_MONTHS={raw!r} must be a whole number of months, 1..24")
    return int(raw)


def env_int(name: str, default: int, env: Mapping[str, str] | None = None, minimum: int = 1) -> int:
    """A whole-number setting (pool slots, max active runs, retries); a bad value is an error, not a default."""
    raw = (os.environ if env is None else env).get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < minimum:
        raise InputError(f"{name}={raw!r} must be a whole number >= {minimum}")
    return int(raw)


# -------------------------------------------------------------------------------------------------
# Publication


def run_month(month_param: str | None, interval_start: datetime | None) -> Month | None:
    """The month a run loads: the ``month`` param when given, else its data interval's start."""
    if month_param:
        return Month.parse(month_param)
    if interval_start is None:
        return None
    return Month.of(interval_start.astimezone(UTC))


def publication_target(month: Month, delay: timedelta | None = None) -> datetime:
    """The moment every hour of ``month`` is published (as ERA5T at least)."""
    return month.end + (publication_delay() if delay is None else delay)


def publication_target_iso(month_param: str | None, interval_start: datetime | None) -> str:
    """For the DAG's wait task (a template macro): the run's target as ISO text.

    A run without a month (no param, no interval) gets the epoch: nothing to wait for, and the
    next task says what is missing.
    """
    month = run_month(month_param, interval_start)
    target = publication_target(month) if month else datetime(1970, 1, 1, tzinfo=UTC)
    return target.isoformat()


# -------------------------------------------------------------------------------------------------
# ERA5T -> final


def final_expected_at(month: Month, after_months: int | None = None) -> datetime:
    """When final ERA5 should cover ``month``: ``after_months`` calendar months after its end."""
    n = final_after_months() if after_months is None else after_months
    return month.next().plus(n).start


@dataclass(frozen=True)
class Finalize:
    """A ledger month holding ERA5T although final ERA5 should exist by now."""

    table: str
    month: str
    area: str
    grid: str
    expver: list[str]
    state: str

    def conf(self, revision: str) -> dict[str, str]:
        """The ``era5_monthly`` run conf that reloads it."""
        return {"month": self.month, "area": self.area, "grid": self.grid, "table": self.table,
                "revision": revision}


def select_to_finalize(rows: Iterable[Mapping[str, Any]], now: datetime,
                       after_months: int | None = None) -> list[Finalize]:
    """The ledger rows (as :func:`era5etl.track.ledger.months` returns them) to reload as final ERA5.

    A month is picked when any of its hours is ERA5T, no run is working on it, and final data
    should exist. A month whose reload still got ERA5T stays in the ledger as ERA5T and is picked
    again next time.
    """
    n = final_after_months() if after_months is None else after_months
    picked = []
    for row in rows:
        expver = list(row.get("expver") or [])
        if PRELIMINARY not in expver or row["state"] not in _AT_REST:
            continue
        month = Month.parse(str(row["month"]))
        if final_expected_at(month, n) <= now:
            picked.append(Finalize(str(row["table_name"]), str(month), str(row["area"]), str(row["grid"]),
                                   expver, str(row["state"])))
    return picked


def revision_for(now: datetime) -> str:
    """The revision of a finalize reload: dated, so a reload that still got ERA5T is not reused later."""
    return f"final-{now.astimezone(UTC):%Y%m%d}"


def months_to_finalize(url: str, now: datetime | None = None, after_months: int | None = None,
                       table: str | None = None) -> list[Finalize]:
    from era5etl.track import ledger

    return select_to_finalize(ledger.months(url, table), now or datetime.now(UTC), after_months)


def supersede_jobs(url: str, job: MonthJob) -> int:
    """Mark the finished CDS jobs of the month's request expired, so its next fetch submits afresh.

    The job store is keyed by each part's CDS request, which a revision does not change: without
    this a refetch would re-attach to the ERA5T job and download its (preliminary) result again.
    Jobs still queued or running are left alone (a retried reload re-attaches to them). Returns
    how many jobs were marked.
    """
    from era5etl.db import connect
    from era5etl.fetch import FetchOptions, plan

    hashes = [p.hash for p in plan(job.request, FetchOptions.from_env().cost_limit)]
    with connect(url) as conn, conn.transaction():
        cur = conn.execute(
            "UPDATE era5_cds_jobs SET state = 'expired', error = %s, updated_at = now()"
            " WHERE request_hash = ANY(%s) AND state IN ('successful', 'downloaded')",
            (f"superseded by reload {job.revision or '(no revision)'}", hashes),
        )
        return cur.rowcount


def reload_job(item: Finalize, revision: str, settings: Settings, run_id: str) -> MonthJob:
    from era5etl.core.variables import parse_list
    from era5etl.pipeline import MonthJob

    # The ledger does not record the variables a month was loaded with: the configured ones are used.
    return MonthJob(month=Month.parse(item.month), area=Area.parse(item.area), grid=Grid.parse(item.grid),
                    variables=tuple(parse_list(list(settings.variables))), table=item.table, run_id=run_id,
                    staging_dir=settings.staging_dir, chunk_interval=settings.chunk_interval,
                    revision=revision)


def reload_month(url: str, item: Finalize, credentials: Credentials, *, revision: str,
                 settings: Settings | None = None, run_id: str | None = None) -> dict[str, Any]:
    """Fetch the month again (a new staging folder, new CDS jobs) and replace its rows."""
    from era5etl.pipeline import run_month as run_pipeline
    from era5etl.settings import Settings

    settings = settings or Settings.from_env()
    job = reload_job(item, revision, settings, run_id or f"finalize__{datetime.now(UTC):%Y%m%dT%H%M%S}")
    superseded = supersede_jobs(url, job)
    summary = run_pipeline(url, job, credentials)
    return {**summary, "revision": revision, "request_hash": job.request.hash, "superseded_jobs": superseded,
            "final": PRELIMINARY not in summary["expver"]}


# -------------------------------------------------------------------------------------------------
# CLI: python -m era5etl finalize


def add_parser(sub: Any) -> None:
    p = sub.add_parser("finalize", help="list months still holding ERA5T that final ERA5 covers; --run reloads them")
    p.add_argument("--table", help="only this hypertable")
    p.add_argument("--as-of", help="YYYY-MM-DD to judge by instead of today")
    p.add_argument("--run", action="store_true", help="reload each month from a fresh download")
    p.add_argument("--json", action="store_true", help="end with one JSON object of the months")
    p.set_defaults(func=_cmd)


def _cmd(args: argparse.Namespace) -> int:
    from era5etl.db import database_url
    from era5etl.fetch import Credentials

    if args.as_of:
        try:
            now = datetime.strptime(args.as_of, "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError:
            raise InputError(f"--as-of {args.as_of!r} is not of the form YYYY-MM-DD") from None
    else:
        now = datetime.now(UTC)
    url = database_url()
    found = months_to_finalize(url, now, table=args.table)
    revision = revision_for(now)
    out: dict[str, Any] = {"as_of": now.date().isoformat(), "final_after_months": final_after_months(),
                           "months": [asdict(f) for f in found], "revision": revision}
    if not args.json:
        print(f"{len(found)} month(s) hold ERA5T that final ERA5 should cover by {now:%Y-%m-%d}")
        for f in found:
            print(f"  {f.table} {f.month} {f.area} grid {f.grid}: expver {','.join(f.expver)} ({f.state})")
    failures = 0
    if args.run:
        reloads = []
        for f in found:
            summary = reload_month(url, f, Credentials.from_env(), revision=revision)
            failures += not summary["success"]
            reloads.append({k: summary[k] for k in ("month", "area", "table", "rows", "expver", "success", "final",
                                                    "request_hash", "superseded_jobs")})
            if not args.json:
                state = "final" if summary["final"] else "still ERA5T"
                print(f"  reloaded {f.table} {f.month} {f.area}: {summary['rows']:,} rows, expver "
                      f"{','.join(summary['expver'])} ({state}), validation "
                      f"{'passed' if summary['success'] else 'FAILED'}")
        out["reloaded"] = reloads
    if args.json:
        print(json.dumps(out, default=str))
    return 1 if failures else 0
