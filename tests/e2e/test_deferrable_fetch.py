"""A CDS job that sits in the queue is waited out on a real triggerer, with no worker holding the task.

`airflow dags test` normally runs a deferred task's trigger inline, in its own process. Here it is
told to leave triggers alone (one flag of Airflow's in-process runner, set from the command line
below), exactly as a scheduler does: the task stays 'deferred' in the metadata database until a
separate `airflow triggerer` process, started by the test, fires the trigger. The local CDS holds
the job in its queue until the test has seen the task deferred and the triggerer polling the job
several times -- however slow the machine -- and then lets it run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.paths import PROJECT_ROOT
from era5etl.core.variables import VARIABLES
from era5etl.db import airflow_database_url, connect
from era5etl.fetch import MonthRequest, staged_download
from localcds.server import LocalCDS

pytestmark = pytest.mark.e2e

BIN = Path(sys.executable).parent
LOGICAL_DATE = "2024-11-01"  # `dags test` clears the runs of its date: one no other test uses
MONTH, AREA = Month(2023, 8), Area.parse("46/7/46/7")
HOLD_LIMIT = 120.0  # the job leaves the queue when the test releases it, or after this
POLLS_WHILE_DEFERRED = 3  # looks at the job, all from the triggerer, before it is released
# Airflow's in-process runner, with its inline triggerer switched off (run_triggerer=False).
DAGS_TEST_WITHOUT_INLINE_TRIGGERS = (
    "import sys, airflow.sdk.definitions.dag as d; run = d._run_task; "
    "d._run_task = lambda **kw: run(**{**kw, 'run_triggerer': False}); "
    "from airflow.__main__ import main; sys.argv[0] = 'airflow'; sys.exit(main())"
)


@dataclass(frozen=True)
class Sample:
    at: float
    ti_state: str | None
    triggerer_id: int | None
    trigger_kwargs: str | None
    job_status: str | None  # the fetch's job at the CDS


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a process this test started, by its id: SIGTERM (the triggerer cleans up), then SIGKILL."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _sample(meta: str, cds: LocalCDS, began: float) -> Sample:
    with connect(meta) as conn:
        row = conn.execute(
            "SELECT ti.state, t.triggerer_id, t.kwargs FROM task_instance ti"
            " JOIN dag_run dr ON dr.dag_id = ti.dag_id AND dr.run_id = ti.run_id"
            " LEFT JOIN trigger t ON t.id = ti.trigger_id"
            " WHERE ti.dag_id = 'era5_monthly' AND ti.task_id = 'fetch' AND dr.logical_date = %s"
            " ORDER BY dr.id DESC LIMIT 1", (LOGICAL_DATE,),
        ).fetchone()
    jobs = [j.status for j in list(cds.jobs.values())]
    state, triggerer_id, kwargs = row if row else (None, None, None)
    return Sample(round(time.monotonic() - began, 2), state, triggerer_id, kwargs and str(kwargs),
                  jobs[-1] if jobs else None)


def _status_looks(cds: LocalCDS) -> int:
    """GETs of the fetch's job at the CDS so far."""
    job_ids = list(cds.jobs)
    return sum(1 for c in list(cds.calls) if c.method == "GET" and job_ids and c.path.endswith(job_ids[-1]))


def test_a_queued_job_is_waited_out_on_the_triggerer_while_no_worker_holds_the_task(
    db_url: str, table: str, tmp_path: Path
) -> None:
    request = MonthRequest(MONTH, AREA, Grid(), VARIABLES)
    meta = airflow_database_url()
    samples: list[Sample] = []
    with LocalCDS() as cds:
        cds.inject("job", "queue", seconds=HOLD_LIMIT)
        env = {**os.environ, "CDSAPI_URL": cds.url, "CDSAPI_KEY": cds.key, "ERA5_STAGING_DIR": str(tmp_path),
               "ERA5_CDS_POLL_BASE": "0.2", "ERA5_CDS_POLL_CAP": "0.5", "PATH": f"{BIN}:{os.environ['PATH']}",
               # The operator watches the held job in its worker this long before it defers.
               "ERA5_CDS_DEFER_AFTER": "1"}
        conf = {"table": table, "area": str(AREA), "month": str(MONTH)}
        began = time.monotonic()
        with open(tmp_path / "triggerer.log", "wb") as trig_out, open(tmp_path / "dags-test.log", "wb") as run_out:
            triggerer = subprocess.Popen([str(BIN / "airflow"), "triggerer", "--skip-serve-logs"], env=env,
                                         stdout=trig_out, stderr=subprocess.STDOUT)
            try:
                run = subprocess.Popen(
                    [sys.executable, "-c", DAGS_TEST_WITHOUT_INLINE_TRIGGERS, "dags", "test", "era5_monthly",
                     LOGICAL_DATE, "-c", json.dumps(conf),
                     "--mark-success-pattern", "stage|load|validate"],
                    env=env, stdout=run_out, stderr=subprocess.STDOUT)
                try:
                    looks_at_deferral: int | None = None
                    released_at: float | None = None
                    while run.poll() is None:
                        assert time.monotonic() - began < 240, "the DAG run did not finish"
                        sample = _sample(meta, cds, began)
                        samples.append(sample)
                        if sample.ti_state == "deferred" and looks_at_deferral is None:
                            looks_at_deferral = _status_looks(cds)
                        if (released_at is None and looks_at_deferral is not None and sample.triggerer_id
                                and _status_looks(cds) - looks_at_deferral >= POLLS_WHILE_DEFERRED):
                            released_at = sample.at
                            cds.release(next(reversed(cds.jobs)))
                        time.sleep(0.2)
                finally:
                    _stop(run)
            finally:
                _stop(triggerer)
        log = (tmp_path / "dags-test.log").read_text(errors="replace")
        assert run.returncode == 0, log[-5000:]
        trigger_out = (tmp_path / "triggerer.log").read_text(errors="replace")
        key, api_url = cds.key, cds.url

    # While the job sat in the CDS queue the task was 'deferred' -- no worker process, no executor
    # slot -- and its trigger was held by the triggerer.
    assert released_at is not None, samples  # the triggerer polled the queued job, or the test stops here
    waiting = [s for s in samples if s.job_status == "accepted" and s.ti_state is not None]
    deferred = [s for s in waiting if s.ti_state == "deferred"]
    assert deferred, samples
    assert {s.ti_state for s in waiting if s.at >= deferred[0].at} == {"deferred"}, samples
    assert any(s.triggerer_id is not None for s in deferred), samples
    held = released_at - deferred[0].at
    assert _final_state(meta) == "success"
    assert "deferring, the worker slot is free" in log and "CDS jobs left the queue" in log

    # The triggerer wrote the trigger's own log: it, not the task, polled the job.
    run_id = _run_id(meta)
    trigger_logs = list((PROJECT_ROOT / ".local" / "airflow" / "logs" / "dag_id=era5_monthly" / f"run_id={run_id}"
                         / "task_id=fetch").glob("attempt=*.log.trigger.*.log"))
    assert trigger_logs
    trigger_log = "\n".join(p.read_text(errors="replace") for p in trigger_logs)
    assert "CDS jobs still queued or running" in trigger_log and "Trigger fired event" in trigger_log

    # The key went nowhere: not into the trigger's stored arguments, nor any log.
    kwargs = [s.trigger_kwargs for s in samples if s.trigger_kwargs]
    assert kwargs and all("job_ids" in k and key not in k for k in kwargs)
    for text in (log, trigger_out, trigger_log):
        assert key not in text

    # One job, waited out, not resubmitted; queue and transfer time recorded apart.
    with connect(db_url) as conn:
        jobs = conn.execute("SELECT submissions, state, queue_seconds FROM era5_cds_jobs"
                            " WHERE month_hash = %s AND api_url = %s", (request.hash, api_url)).fetchall()
        detail = conn.execute("SELECT detail FROM era5_metrics WHERE table_name = %s AND task = 'fetch'",
                              (table,)).fetchone()
        conn.execute("DELETE FROM era5_cds_jobs WHERE api_url = %s", (api_url,))
        conn.commit()
    assert len(jobs) == 1 and jobs[0][:2] == (1, "downloaded") and jobs[0][2] >= held
    assert detail is not None
    figures: dict[str, Any] = detail[0]
    assert figures["queue_seconds"] >= held and figures["download_seconds"] > 0
    assert figures["submissions"] == 1
    assert staged_download(request.folder(tmp_path)) is not None


def _final_state(meta: str) -> str | None:
    with connect(meta) as conn:
        row = conn.execute(
            "SELECT ti.state FROM task_instance ti JOIN dag_run dr ON dr.dag_id = ti.dag_id AND dr.run_id = ti.run_id"
            " WHERE ti.dag_id = 'era5_monthly' AND ti.task_id = 'fetch' AND dr.logical_date = %s"
            " ORDER BY dr.id DESC LIMIT 1", (LOGICAL_DATE,)).fetchone()
    return None if row is None else str(row[0])


def _run_id(meta: str) -> str:
    with connect(meta) as conn:
        row = conn.execute("SELECT run_id FROM dag_run WHERE dag_id = 'era5_monthly' AND logical_date = %s"
                           " ORDER BY id DESC LIMIT 1", (LOGICAL_DATE,)).fetchone()
    assert row is not None
    return str(row[0])
