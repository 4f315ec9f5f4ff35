"""One month, step by step: fetch, stage, load (the hourly rows and their daily and monthly rollups),
validate, compress. Each step is one function; in Airflow each is a task but compress, which runs
inside the validate task.

Every step records its figures in the metrics table and moves the month's ledger row, and a step
that fails marks the month failed with its error before raising, so the ledger never claims more
than the table holds.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from era5etl import settings
from era5etl.core.files import require_writable
from era5etl.db import DatabaseError, connect, discard_new, ensure_schema
from era5etl.db.columns import ensure_columns
from era5etl.fetch import Credentials, Download, fetch, retention, staged_download
from era5etl.fetch.jobs import PgJobStore
from era5etl.fetch.manifest import removal as fetch_removal
from era5etl.fetch.request import needs_previous_hour
from era5etl.load import ChunkResult, LoadResult, columnstore, load
from era5etl.load.years import YearCopy, copy_years, worth_copying
from era5etl.pipeline.errors import PipelineError
from era5etl.pipeline.job import MonthJob
from era5etl.read import rollup_check
from era5etl.settings import CompressionMode
from era5etl.stage import StagedDownload, StageError, open_download, scratch_dir
from era5etl.track import ledger, liveness, metrics
from era5etl.track.metrics import StepFigures
from era5etl.validate import Validation, validate_month
from era5etl.validate.month import validation_dir

log = logging.getLogger(__name__)


def mark(url: str, job: MonthJob, state: str, **fields: Any) -> None:
    """The ledger's row of the job's month moved to ``state``; ``fields`` as ``ledger.set_state`` takes them."""
    ledger.set_state(url, table=job.table, month=job.month, area=str(job.area), grid=str(job.grid),
                     state=state, run_id=job.run_id, **fields)


class RollupMismatch(PipelineError):
    """The month's rollups, just refreshed, do not match its hourly rows."""

    def __init__(self, table: str, month: str, mismatches: list[str]) -> None:
        self.mismatches = mismatches
        super().__init__(f"the rollups of {table} for {month} do not match its hourly rows: " + "; ".join(mismatches))


class DownloadRemoved(PipelineError):
    """A stage or load of a month whose download was removed once the month was validated: the rows
    are the validated ones and nothing was changed; only a fetch brings the download back. Raised
    before the ledger is touched, so the month keeps its state (a retry could not help: the task
    fails at once)."""


class ValidationFailed(PipelineError):
    def __init__(self, validation: Validation) -> None:
        self.validation = validation
        found = f"{validation.observed_rows:,}" if validation.observed_rows is not None else "?"
        kept = f"; GX result and Data Docs in {validation.folder}" if validation.folder else ""
        super().__init__(
            f"validation failed: {', '.join(validation.failed)} "
            f"(expected {validation.expected_rows:,} rows, found {found}){kept}"
        )


@contextmanager
def _step(url: str, job: MonthJob, task: str, state: str) -> Iterator[StepFigures]:
    """Mark the month ``state``, time the body, record its figures; on error mark the month failed."""
    mark(url, job, state, dataset=job.dataset.name,
         # ERA5-Land's are its hours x land points, known once the month is staged (stage_step)
         expected_rows=None if job.dataset.land_only else job.expected_rows,
         levels=list(job.levels) or None)
    try:
        with metrics.timed(task) as figures:
            yield figures
    except Exception as exc:
        mark(url, job, "failed", error=f"{task}: {exc}")
        raise
    metrics.record(url, run_id=job.run_id, month=job.month, table=job.table, area=str(job.area),
                   figures=figures)


def prepare(url: str, job: MonthJob) -> list[str]:
    """The table ready for the job: created if missing, a column added for each asked-for variable it
    lacks (logged and returned: a load never ignores a variable it was asked for)."""
    return _prepare(url, job)[1]


def _prepare(url: str, job: MonthJob) -> tuple[bool, list[str]]:
    """:func:`prepare`, and whether it made the table."""
    created = ensure_schema(url, job.table, f"{int(job.chunk_interval.total_seconds())} seconds",
                            dataset=job.dataset, created_by=f"run {job.run_id}", points=job.area.points(job.grid))
    return created, ensure_columns(url, job.table, job.load_variables)


def _discard_first(url: str, job: MonthJob) -> None:
    """After a failed first run of a table this run made: drop the table and its rollups, unless another
    month of it is in the ledger (a run beside this one) or the database is gone (logged: `table drop`)."""
    try:
        if ledger.other_months(url, job.table, job.month, str(job.area)):
            return
        discard_new(url, job.table)
    except (DatabaseError, psycopg.Error) as exc:
        log.warning("the new table %s could not be dropped after its failed first run (%s): "
                    "`python -m era5etl table drop %s --yes` removes it", job.table, exc, job.table)


def fetch_step(url: str, job: MonthJob, credentials: Credentials, *, wait: bool = True) -> Download:
    """Fetch the month into staging; every CDS job is recorded in era5_cds_jobs (re-attached on a rerun).

    ``wait=False`` makes one pass that does not wait on the CDS queue: while jobs are queued it
    raises ``FetchPending``, a BaseException (like Airflow's TaskDeferred) that the step's failure
    bookkeeping lets through, so the month stays 'fetching' and no figures are recorded yet. That
    is how the deferrable operator hands the wait to the triggerer.
    """
    require_writable(job.staging_dir, "ERA5_STAGING_DIR")  # before the ledger hears of the month
    with _step(url, job, "fetch", "fetching") as fig:
        download = fetch(job.request, job.staging_dir, credentials, store=PgJobStore(url), wait=wait)
        fig.bytes = download.bytes
        # Queue and transfer time apart from the step's own: the figures the CDS, not we, decides.
        fig.detail = {"request_hash": download.request_hash, "reused": download.reused,
                      "files": [str(p) for p in download.paths], "parts": download.parts,
                      "submissions": download.submissions, "fetch_seconds": round(download.seconds, 3),
                      "queue_seconds": round(download.queue_seconds, 3),
                      "download_seconds": round(download.download_seconds, 3)}
        if download.removed is not None:  # a rerun after validation removed the month's download
            fig.detail.update(removed_at=download.removed.at.isoformat(), note=download.removed.message(job.month))
    return download


def _staged_paths(job: MonthJob, task: str) -> list[Path] | None:
    """The month's download files, looked up once before ``task`` touches the ledger; None when there is
    no complete download (the step then fails, marking the month); :class:`DownloadRemoved` when it
    was removed after its validation (nothing is touched)."""
    folder = job.request.folder(job.staging_dir)
    found = staged_download(folder)
    if found is not None:
        return found.paths
    removed = fetch_removal(folder)
    if removed is not None:
        state = ("the month's rows are the validated ones" if removed.after == "validated" else
                 "the month stays failed")
        raise DownloadRemoved(
            f"the download of {job.month} was removed after validation on {removed.at:%Y-%m-%d} ({removed.after}; "
            f"ERA5_KEEP_DOWNLOADS); no complete download for {task} to read, and nothing was changed: {state}. "
            "To reload the month, clear its fetch task with its downstream tasks (the UI's Clear with "
            "'Downstream'), or run `python -m era5etl run-month`: the fetch gets it again")
    return None


def _require_paths(job: MonthJob, paths: list[Path] | None) -> list[Path]:
    if paths is None:
        raise PipelineError(f"no complete download for {job.month} (request {job.request.hash}) in "
                            f"{job.staging_dir}; run the fetch step first")
    return paths


def check_download(staged: StagedDownload, job: MonthJob) -> None:
    """The download must be exactly the month that was asked for, or nothing is loaded."""
    have = {v.cds_name for v in staged.variables}
    missing = [v.cds_name for v in job.variables if v.cds_name not in have]
    if missing:
        raise PipelineError(f"requested variable(s) missing from the download {staged.paths[0]}: "
                            + ", ".join(missing))
    # The row times: the month's hours, or a monthly mean's one time (by hour of day 24) at its start.
    first = np.datetime64(job.month.start.replace(tzinfo=None), "h")
    want = first + np.arange(job.dataset.times_in(job.month)).astype("timedelta64[h]")
    got = staged.valid_time.astype("datetime64[h]")
    if needs_previous_hour(job.request):
        # ERA5-Land: the previous day's 23 UTC was fetched too, for the first hour's amounts; it is not a
        # row (the load starts at the month's start), but it must be there.
        before = want[0] - np.timedelta64(1, "h")
        if not len(got) or got[0] != before:
            raise PipelineError(f"the download lacks {before}, the hour before {job.month} fetched so its first "
                                "hour has its accumulations (ERA5-Land's running totals from 00 UTC)")
        got = got[1:]
    if len(got) != len(want) or not np.array_equal(got, want):
        raise PipelineError(
            f"the download holds {len(got)} time steps ({got.min() if len(got) else '-'} .. "
            f"{got.max() if len(got) else '-'}), not the {len(want)} row times of {job.month} ({job.dataset.name})"
        )
    if staged.location_id is None:
        raise PipelineError(f"the download's grid is off the global {job.dataset.grid.step:g} degree lattice; "
                            f"request grid {job.grid} on the lattice so every point has a location_id")
    if staged.levels != job.levels:
        raise PipelineError(f"the download holds levels {', '.join(map(str, staged.levels)) or 'none'}, not the "
                            f"{', '.join(map(str, job.levels)) or 'none'} asked for")
    per_level = staged.points // max(1, len(staged.levels))
    if job.dataset.land_only:  # its land points only: at most the area's, at least one (staging refuses none)
        if per_level > job.area.points(job.grid):
            raise PipelineError(f"the download holds {per_level} land points, more than the "
                                f"{job.area.points(job.grid)} grid points of the area {job.area} on grid {job.grid}")
    elif per_level != job.area.points(job.grid):
        raise PipelineError(
            f"the download holds {per_level} grid points, the area {job.area} on grid {job.grid} "
            f"has {job.area.points(job.grid)}"
        )


def stage_step(url: str, job: MonthJob) -> dict[str, Any]:
    found = _staged_paths(job, "stage")
    with _step(url, job, "stage", "staged") as fig:
        paths = _require_paths(job, found)
        with open_download(paths, variables=job.load_variables, dataset=job.dataset,
                           tmp_dir=scratch_dir(job.staging_dir)) as staged:
            check_download(staged, job)
            # The month's rows: not ERA5-Land's previous hour, fetched for the first hour's amounts only.
            hours = int(np.count_nonzero(staged.valid_time >= np.datetime64(job.month.start.replace(tzinfo=None))))
            fig.rows = hours * staged.points
            fig.bytes = sum(p.stat().st_size for p in paths)
            report: dict[str, Any] = {
                "rows": fig.rows,
                "points": staged.points,
                "dataset": job.dataset.name,
                "levels": list(staged.levels),
                "hours": len(staged.valid_time),
                "variables": [v.cds_name for v in staged.variables],
                "ignored": staged.ignored,
                "missing_columns": staged.missing_columns,
                "expver": staged.expver,
                "notes": staged.notes,
            }
            fig.detail = report
            for said in (*staged.notes, *(f"not loaded: {what}" for what in staged.ignored)):
                log.info("%s %s: %s", job.month, job.table, said)
    mark(url, job, "staged", expver=report["expver"], rows=None,
         request_hash=job.request.hash, expected_rows=report["rows"] if job.dataset.land_only else None)
    if job.dataset.land_only:
        # What the month's validation expects: its hours x the land points of the staged download's mask.
        ledger.record_land_points(url, table=job.table, month=job.month, area=str(job.area),
                                  points=report["points"])
    return report


def load_step(url: str, job: MonthJob, on_chunk: Callable[[ChunkResult], None] | None = None) -> LoadResult:
    found = _staged_paths(job, "load")
    # The month's lock, held while 'loading': a run that dies mid-load is seen as gone (track.liveness).
    # The next state is written before the lock goes, so no reader ever finds 'loading' unheld and alive.
    with liveness.hold(url, job.table, job.month, str(job.area)):
        with _step(url, job, "load", "loading") as fig:
            paths = _require_paths(job, found)
            with open_download(paths, variables=job.load_variables, dataset=job.dataset,
                               tmp_dir=scratch_dir(job.staging_dir)) as staged:
                check_download(staged, job)
                result = load(url, job.table, staged, start=job.month.start, end=job.month.end,
                              on_chunk=on_chunk, dataset=job.dataset)
            fig.rows, fig.bytes = result.rows, result.bytes
            fig.detail = {"deleted": result.deleted, "chunks": result.chunk_rates(),
                          "rollups": {"daily_rows": result.daily_rows, "monthly_rows": result.monthly_rows,
                                      "seconds": result.rollup_seconds}}
        mark(url, job, "loaded", rows=result.rows)
    return result


def validate_step(url: str, job: MonthJob) -> Validation:
    """Prove the loaded month: Great Expectations over the per-day profile, and the rollups the load
    wrote checked against its hourly rows (``read.rollup_check``); a mismatch fails the month naming
    what differs (its reads would not be the table's). Then ``compress_step`` finishes it (in
    Airflow, within the same task: it does not earn a task process of its own)."""
    require_writable(validation_dir(), "ERA5_VALIDATION_DIR")
    # The month's lock, held while 'validating' (and until 'validated' is written): a run killed
    # mid-validation is seen as gone (track.liveness).
    with liveness.hold(url, job.table, job.month, str(job.area)):
        with _step(url, job, "validate", "validating") as fig:
            validation = validate_month(url, job.table, job.month, job.area, job.grid, run_id=job.run_id,
                                        dataset=job.dataset, levels=job.levels)
            fig.rows, fig.bytes = validation.observed_rows or 0, validation.bytes
            fig.detail = validation.summary()
            ledger.record_validation(url, table=job.table, month=job.month, area=str(job.area),
                                     failed=validation.failed,
                                     path=str(validation.folder) if validation.folder else None)
            if not validation.success:
                # _step records figures only for a step that returns; a failed verdict is a measured run too.
                fig.seconds = validation.seconds
                metrics.record(url, run_id=job.run_id, month=job.month, table=job.table, area=str(job.area),
                               figures=fig)
                retention.release(job, "failed")  # the verdict is final (no retry reads it): ERA5_KEEP_DOWNLOADS
                raise ValidationFailed(validation)
            # Monthly means are months already (no rollups); a table on levels is checked level by level.
            if _rollups_on() and not job.dataset.monthly:
                checked = rollup_check.check(url, job.table, job.month, job.area, job.grid, job.dataset, job.levels)
                fig.detail = {**fig.detail, "rollups": checked.as_dict()}
                if not checked.ok:
                    raise RollupMismatch(job.table, str(job.month), checked.mismatches)
                log.info("%s rollups of %s: %s daily and %s monthly rows checked against %s hourly rows", job.month,
                         job.table, f"{checked.daily_rows:,}", f"{checked.monthly_rows:,}", f"{checked.hourly_rows:,}")
        mark(url, job, "validated", rows=validation.observed_rows)
    retention.release(job, "validated")  # staging stays bounded: the download goes once the ledger says so
    return validation


def _rollups_on() -> bool:
    return settings.load().rollups


def compress_step(url: str, job: MonthJob, mode: CompressionMode | None = None) -> columnstore.Compression:
    """Compress the validated month's chunks when the licence allows; otherwise say why and carry on.

    The ledger stays 'validated' either way: compression changes how the rows are stored, not which
    rows the month holds. A compression that fails leaves the month validated and uncompressed, and
    the task failed so that it is rerun.
    """
    with metrics.timed("compress") as fig:
        result = columnstore.compress_month(url, job.table, job.month.start, job.month.end,
                                            mode if mode is not None else columnstore.mode_from_env())
        fig.rows, fig.bytes = result.rows, result.bytes
        fig.detail = result.as_dict()
    metrics.record(url, run_id=job.run_id, month=job.month, table=job.table, area=str(job.area), figures=fig)
    if result.state == "compressed":
        log.info("%s in the columnstore: %d chunk(s), %s bytes, %s bytes a row (ratio %s to the raw values)",
                 job.month, len(result.chunks), f"{result.bytes:,}",
                 f"{result.bytes_per_row:.2f}" if result.bytes_per_row else "-",
                 f"{result.ratio:.2f}" if result.ratio else "-")
    else:
        log.info("%s not compressed (%s): %s", job.month, result.state, result.reason)
    return result


def years_step(url: str, job: MonthJob) -> YearCopy | None:
    """After the month is validated and finished: its year copied place-major when this month made it
    whole and the copy pays (``load.years.worth_copying``; ``ERA5_YEAR_COPIES=off`` never), with a
    ``years`` metrics row; None when nothing was copied."""
    year = job.month.start.year
    if settings.load().year_copies == "off":
        return None
    with connect(url, autocommit=True) as conn:
        if not worth_copying(conn, job.table, year):
            return None
    with metrics.timed("years") as fig:
        done = copy_years(url, job.table, [year])[0]
        fig.rows, fig.detail = done.rows, done.as_dict()
    metrics.record(url, run_id=job.run_id, month=job.month, table=job.table, area=str(job.area), figures=fig)
    log.info("%s: year %d copied place-major into the copy of years, %s rows in %.1f s", job.table, year,
             f"{done.rows:,}", done.seconds)
    return done


def run_month(url: str, job: MonthJob, credentials: Credentials, *,
              on_step: Callable[[str, str], None] | None = None,
              on_chunk: Callable[[ChunkResult], None] | None = None) -> dict[str, Any]:
    """All steps in order, as the DAG runs them; returns the figures of each. ``on_step(task,
    "start"|"done")`` and ``on_chunk`` (each chunk the load commits) let a caller show progress."""
    began = time.perf_counter()
    # Both folders checked first: a read-only validation folder found after the load costs the load.
    require_writable(job.staging_dir, "ERA5_STAGING_DIR")
    require_writable(validation_dir(), "ERA5_VALIDATION_DIR")
    created, added = _prepare(url, job)
    steps: list[dict[str, Any]] = []  # each step's figures, appended as it finishes
    try:
        return _steps(url, job, credentials, began, added, steps, on_step, on_chunk)
    except BaseException:
        # A failed first run leaves no table behind (the ledger keeps the month, failed); once the
        # load finished the rows stay, for the failed validation's Data Docs to describe.
        if created and "load" not in {s["task"] for s in steps}:
            _discard_first(url, job)
        raise


def _steps(url: str, job: MonthJob, credentials: Credentials, began: float, added: list[str],
           steps: list[dict[str, Any]], on_step: Callable[[str, str], None] | None,
           on_chunk: Callable[[ChunkResult], None] | None) -> dict[str, Any]:

    def timed(task: str, fn: Callable[[], Any]) -> Any:
        if on_step:
            on_step(task, "start")
        t0 = time.perf_counter()
        out = fn()
        steps.append({"task": task, "seconds": round(time.perf_counter() - t0, 3)})
        if on_step:
            on_step(task, "done")
        return out

    # One process runs every step: it holds the month's lock throughout, so a reader can tell a run
    # that died (killed, the server restarted) from one still working (track.liveness).
    with liveness.hold(url, job.table, job.month, str(job.area)):
        download: Download = timed("fetch", lambda: fetch_step(url, job, credentials))
        steps[-1].update(bytes=download.bytes, reused=download.reused,
                         note=download.removed.message(job.month) if download.removed else None)
        report: dict[str, Any] = timed("stage", lambda: stage_step(url, job))
        steps[-1].update(rows=report["rows"], rows_per_s=round(report["rows"] / max(steps[-1]["seconds"], 1e-9)))
        loaded: LoadResult = timed("load", lambda: load_step(url, job, on_chunk=on_chunk))
        steps[-1].update(rows=loaded.rows, bytes=loaded.bytes, rows_per_s=round(loaded.rows_per_s),
                         daily_rows=loaded.daily_rows, monthly_rows=loaded.monthly_rows,
                         rollup_seconds=round(sum(loaded.rollup_seconds.values()), 3))
        validation: Validation = timed("validate", lambda: validate_step(url, job))
        steps[-1].update(rows=validation.observed_rows, success=validation.success)
        packed: columnstore.Compression = timed("compress", lambda: compress_step(url, job))
        steps[-1].update(compression=packed.state, ratio=packed.as_dict()["ratio"])
        copied = years_step(url, job)  # most months copy nothing: a step only when a year was copied
        if copied is not None:
            steps.append({"task": "years", "seconds": copied.seconds, "rows": copied.rows, "year": copied.year})
    return {
        "month": str(job.month),
        "area": str(job.area),
        "table": job.table,
        "dataset": job.dataset.name,
        "levels": list(job.levels),
        "rows": loaded.rows,
        "expected_rows": validation.expected_rows,
        "seconds": round(time.perf_counter() - began, 3),
        "rows_per_s": round(loaded.rows_per_s),
        "success": validation.success,
        "expver": report["expver"],
        "variables": report["variables"],
        "added_columns": added,
        "notes": report["notes"],
        "ignored": report["ignored"],
        "compression": packed.as_dict(),
        "steps": steps,
    }


__all__ = ["MonthJob", "PipelineError", "RollupMismatch", "StageError", "ValidationFailed", "compress_step",
           "fetch_step", "load_step", "run_month", "stage_step", "validate_step", "years_step"]
