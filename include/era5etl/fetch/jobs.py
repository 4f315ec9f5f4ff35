"""Where every submitted CDS job is remembered: request hash -> job id, state, times.

The CDS forgets nothing a client forgets: a job submitted by a task that then died keeps running
there, and submitting the same request again only queues a second one. So a job id is written down
the moment the CDS hands it out, keyed by (service URL, hash of the exact request), and the next
attempt re-attaches to it. A ``submitting`` row marks a submission whose answer never arrived; the
fetcher then looks for the job among the user's recent ones before it submits again.

The same table answers "how many of this credential's jobs are in the CDS queue right now", which
is how the cap on concurrent requests holds across tasks and processes. The API key is never
stored: a service is named by its URL only.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, fields, replace
from datetime import date, datetime, timedelta
from typing import Any, Protocol

from era5etl.db import connect

# States in which a job holds one of the credential's slots in the CDS queue.
ACTIVE_STATES = ("submitting", "accepted", "running")
# A row not touched for this long no longer counts against the cap: its task is gone for good.
STALE_AFTER = timedelta(hours=24)


@dataclass
class JobRecord:
    api_url: str
    request_hash: str
    month_hash: str
    month: date
    part: int
    parts: int
    dataset: str
    request: dict[str, Any]
    state: str
    cost: float | None = None
    job_id: str | None = None
    submissions: int = 0
    previous_job_ids: list[str] = field(default_factory=list)
    error: str | None = None
    submitted_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    downloaded_at: datetime | None = None
    queue_seconds: float | None = None
    run_seconds: float | None = None
    download_seconds: float | None = None
    bytes: int | None = None
    checksum: str | None = None
    file: str | None = None
    updated_at: datetime | None = None


_COLUMNS = tuple(f.name for f in fields(JobRecord))


class JobStore(Protocol):
    """Persistence of submitted jobs; :class:`PgJobStore` in production, :class:`MemoryJobStore` in a pinch."""

    def get(self, api_url: str, request_hash: str) -> JobRecord | None: ...

    def put(self, record: JobRecord) -> None: ...

    def submission_slot(self, api_url: str, cap: int) -> contextlib.AbstractContextManager[bool]:
        """Hold the right to submit for ``api_url``; yields whether fewer than ``cap`` jobs are queued.

        Held while the submission and its recording happen, so two processes can neither both take
        the last slot nor both submit the same request.
        """
        ...

    def active(self, api_url: str) -> int: ...


class PgJobStore:
    """Jobs in the pipeline's database (table ``era5_cds_jobs``, sql/003_cds_jobs.sql)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def get(self, api_url: str, request_hash: str) -> JobRecord | None:
        with connect(self.url) as conn:
            row = conn.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM era5_cds_jobs WHERE api_url = %s AND request_hash = %s",
                (api_url, request_hash),
            ).fetchone()
        if row is None:
            return None
        values = dict(zip(_COLUMNS, row, strict=True))
        values["previous_job_ids"] = list(values["previous_job_ids"] or [])
        return JobRecord(**values)

    def put(self, record: JobRecord) -> None:
        values = {name: getattr(record, name) for name in _COLUMNS if name != "updated_at"}
        values["request"] = json.dumps(record.request, sort_keys=True)
        names = list(values)
        updates = ", ".join(f"{n} = EXCLUDED.{n}" for n in names if n not in ("api_url", "request_hash"))
        with connect(self.url) as conn, conn.transaction():
            conn.execute(
                f"INSERT INTO era5_cds_jobs ({', '.join(names)}, updated_at) "
                f"VALUES ({', '.join(['%s'] * len(names))}, now()) "
                f"ON CONFLICT (api_url, request_hash) DO UPDATE SET {updates}, updated_at = now()",
                tuple(values.values()),
            )

    def supersede(self, request_hashes: list[str], reason: str) -> int:
        """Mark the finished jobs of these requests expired, so the next fetch of each submits afresh
        (jobs still queued or running are left to the fetch that re-attaches to them). Returns how many."""
        with connect(self.url) as conn, conn.transaction():
            cur = conn.execute(
                "UPDATE era5_cds_jobs SET state = 'expired', error = %s, updated_at = now()"
                " WHERE request_hash = ANY(%s) AND state IN ('successful', 'downloaded')",
                (reason, request_hashes))
            return cur.rowcount

    def active(self, api_url: str) -> int:
        with connect(self.url) as conn:
            row = conn.execute(
                "SELECT count(*) FROM era5_cds_jobs WHERE api_url = %s AND state = ANY(%s)"
                " AND updated_at > now() - %s::interval",
                (api_url, list(ACTIVE_STATES), f"{int(STALE_AFTER.total_seconds())} seconds"),
            ).fetchone()
        return int(row[0]) if row else 0

    @contextlib.contextmanager
    def submission_slot(self, api_url: str, cap: int) -> Iterator[bool]:
        # A session advisory lock per service: cheap, released if the process dies.
        with connect(self.url, autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(hashtext('era5etl.cds.submit'), hashtext(%s))", (api_url,))
            try:
                yield self.active(api_url) < cap
            finally:
                conn.execute("SELECT pg_advisory_unlock(hashtext('era5etl.cds.submit'), hashtext(%s))",
                             (api_url,))


class MemoryJobStore:
    """Jobs in memory: for a process that has no database; forgets everything when it exits."""

    def __init__(self) -> None:
        self._rows: dict[tuple[str, str], JobRecord] = {}
        self._lock = threading.RLock()

    def get(self, api_url: str, request_hash: str) -> JobRecord | None:
        with self._lock:
            row = self._rows.get((api_url, request_hash))
            return None if row is None else replace(row)

    def put(self, record: JobRecord) -> None:
        with self._lock:
            self._rows[(record.api_url, record.request_hash)] = replace(record, updated_at=datetime.now().astimezone())

    def active(self, api_url: str) -> int:
        with self._lock:
            return sum(1 for (url, _), r in self._rows.items() if url == api_url and r.state in ACTIVE_STATES)

    @contextlib.contextmanager
    def submission_slot(self, api_url: str, cap: int) -> Iterator[bool]:
        with self._lock:
            yield self.active(api_url) < cap
