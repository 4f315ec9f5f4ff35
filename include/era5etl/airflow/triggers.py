"""The trigger the fetch task defers on: CDS jobs waited out on the triggerer, not in a worker slot.

A CDS job can sit in the queue for hours. A worker that polled it would hold an executor slot the
whole time; instead the fetch operator defers here, and the triggerer (one asyncio loop for many
triggers) looks at the jobs now and then. The trigger fires as soon as one job leaves the queue
(done, failed, or gone), so its part is downloaded and the freed slot reused while the rest wait.

Looks start at ``poll_base`` and grow 1.5x to ``poll_cap``; a fault that may heal (5xx, 429,
dropped connection) only stretches the next wait, to the service's Retry-After when it gives one.
The trigger never decides a failure itself: the resumed operator looks at the jobs again and
raises the precise error. It never fires before ``not_before`` (the deferral's time plus
``ERA5_CDS_DEFER_AFTER``): a trigger that fires within a scheduler loop of the deferral lets
Airflow 3.3 fail the resumed task on the deferring process's stale exit report (apache/airflow#72716;
see :mod:`era5etl.airflow.operators`). Its serialized arguments (stored in Airflow's database) are job ids
and figures, never the key: the key is read on the triggerer from the connection or environment.
"""

# Imports inside functions: the DAG files import this package at every parse, and the core (numpy,
# psycopg, the pipeline) loads only in a task or a trigger's thread (Airflow's best practice on top-
# level code).

from __future__ import annotations

import asyncio
import importlib
import time
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from era5etl.airflow.hooks import CDS_CONN_ID

WAITING = ("accepted", "running")


def _event(payload: dict[str, Any]) -> TriggerEvent:
    return TriggerEvent(payload)  # type: ignore[no-untyped-call]  # Airflow's own signature is untyped


class CdsJobTrigger(BaseTrigger):
    """Fires when any of ``job_ids`` leaves the CDS queue; with no jobs, after ``idle_seconds``."""

    def __init__(
        self,
        job_ids: list[str],
        *,
        conn_id: str = CDS_CONN_ID,
        poll_base: float = 1.0,
        poll_cap: float = 60.0,
        backoff_base: float = 2.0,
        backoff_cap: float = 60.0,
        max_hint: float = 300.0,
        http_timeout: float = 60.0,
        idle_seconds: float = 1.0,
        not_before: float = 0.0,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # Airflow's own signature is untyped
        self.job_ids = list(job_ids)
        self.conn_id = conn_id
        self.poll_base = poll_base
        self.poll_cap = poll_cap
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.max_hint = max_hint
        self.http_timeout = http_timeout
        self.idle_seconds = idle_seconds
        self.not_before = not_before  # epoch seconds; the event waits until then

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "job_ids": self.job_ids, "conn_id": self.conn_id, "poll_base": self.poll_base,
                "poll_cap": self.poll_cap, "backoff_base": self.backoff_base, "backoff_cap": self.backoff_cap,
                "max_hint": self.max_hint, "http_timeout": self.http_timeout, "idle_seconds": self.idle_seconds,
                "not_before": self.not_before,
            },
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        if not self.job_ids:
            # Every job slot of the credential is taken by other months: look again shortly.
            await asyncio.sleep(self.idle_seconds)
            await self._settle()
            yield _event({"status": "slot", "jobs": {}})
            return

        # The core pulls in numpy and psycopg: import it in a thread, not on the triggerer's loop.
        await asyncio.to_thread(importlib.import_module, "era5etl.fetch.watcher")
        from era5etl.fetch import FetchError, FetchOptions, JobWatcher, RetryLater

        options = FetchOptions(backoff_base=self.backoff_base, backoff_cap=self.backoff_cap,
                               max_hint=self.max_hint, poll_base=self.poll_base, poll_cap=self.poll_cap,
                               http_timeout=self.http_timeout)
        from era5etl.airflow.hooks import CdsHook

        credentials = await CdsHook(self.conn_id).aget_credentials()
        self.log.info("watching CDS jobs %s at %s", self.job_ids, credentials.url or "the URL of ~/.cdsapirc")
        watcher = JobWatcher(credentials, options)
        delay, failures = self.poll_base, 0
        try:
            while True:
                await asyncio.sleep(delay)
                try:
                    # The client is synchronous; a thread keeps the triggerer's loop free meanwhile.
                    states = await asyncio.to_thread(watcher.look, self.job_ids)
                except RetryLater as exc:
                    failures += 1
                    delay = min(options.backoff(failures, exc.hint), max(self.poll_cap, options.max_hint))
                    self.log.warning("CDS jobs %s: %s; looking again in %.2f s", self.job_ids, exc, delay)
                    continue
                except FetchError as exc:
                    await self._settle()
                    yield _event({"status": "error", "message": str(exc), "jobs": {}})
                    return
                failures = 0
                if any(state not in WAITING for state in states.values()):
                    await self._settle()
                    yield _event({"status": "ready", "jobs": states})
                    return
                self.log.info("CDS jobs still queued or running: %s", states)
                delay = min(delay * 1.5, self.poll_cap)
        finally:
            watcher.close()

    async def _settle(self) -> None:
        """Hold the event until ``not_before``: by then the scheduler has drained the deferring
        process's exit report, so it cannot be taken for the resumed attempt's."""
        left = self.not_before - time.time()
        if left > 0:
            self.log.info("holding the event %.1f s more: a trigger firing this soon after its deferral "
                          "races Airflow's scheduler (apache/airflow#72716)", left)
            await asyncio.sleep(left)
