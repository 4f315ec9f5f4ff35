"""The sustained end-to-end load (``--sustained N``): ``load.load`` from global day files on disk into a
fresh hypertable with the product's indexes, in a child process so its peak RSS is the loader's own.

Progress is recorded each time the loader asks the staged download for its next block (the previous
block has been handed to COPY by then) and at each chunk's commit; rates per tenth of the rows come
from those points.
"""

from __future__ import annotations

import json
import math
import resource
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from era5bench.blog import BlogTiming, blog_path
from era5bench.common import BenchError, log
from era5bench.downloads import CACHE_DIR, FIRST_DAY, cached_download, day_request
from era5bench.tables import checkpoint, cleanup, count_rows, create_table, drop_table, table_facts

if TYPE_CHECKING:  # the stager pulls in xarray, which the CLI's other commands never need
    from era5etl.stage import Block, StagedDownload


def sustained_plan(total_rows: int, area: Sequence[float] | None = None, cache_dir: Path = CACHE_DIR
                   ) -> list[tuple[Path, str | None]]:
    """Day files (each a distinct day) holding at least ``total_rows`` rows in whole hours, and where to
    stop in the last one (an ISO end time, or None for the whole day)."""
    from localcds.synth import parse_request

    points = len(parse_request(day_request([FIRST_DAY], area)).latitudes) * len(
        parse_request(day_request([FIRST_DAY], area)).longitudes)
    hours = max(1, math.ceil(total_rows / points))
    plan: list[tuple[Path, str | None]] = []
    for k in range(math.ceil(hours / 24)):
        day = FIRST_DAY + timedelta(days=k)
        left = hours - 24 * k
        end = (datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(hours=left)).isoformat() \
            if left < 24 else None
        plan.append((cached_download(day_request([day], area), cache_dir), end))
    return plan


class _Progress:
    """(rows written, seconds) points: at each block the loader asks for, at each commit, at each file's end."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.block_rows = 0
        self.chunk_rows = 0
        self.points: list[tuple[int, float]] = [(0, 0.0)]
        self.lock = threading.Lock()

    def mark(self, rows: int | None = None) -> None:
        with self.lock:
            if rows is not None:
                self.block_rows += rows
            self.points.append((self.block_rows, time.perf_counter() - self.t0))

    def chunk(self, rows: int) -> None:
        with self.lock:
            self.chunk_rows += rows
            # A loader that stops reading through blocks() still leaves its commits as measured points.
            self.block_rows = max(self.block_rows, self.chunk_rows)
        self.mark()


class _TimedStaged:
    """The staged download as load() sees it, noting when each block has been consumed."""

    def __init__(self, staged: StagedDownload, progress: _Progress) -> None:
        self._staged = staged
        self._progress = progress

    def __getattr__(self, name: str) -> Any:
        return getattr(self._staged, name)

    def blocks(self, start: datetime | None = None, end: datetime | None = None, hours: int = 1, levels: int = 0
               ) -> Iterator[Block]:
        return self._timed(self._staged.blocks(start, end, hours, levels))

    def _timed(self, inner: Iterator[Block]) -> Iterator[Block]:
        pending = 0
        for block in inner:
            if pending:
                self._progress.mark(pending)  # asked for the next one: the previous one is written
            pending = block.rows
            yield block
        if pending:
            self._progress.mark(pending)


def sustained_child() -> None:
    """Run in a fresh interpreter: reads a JSON spec on stdin, loads, prints a JSON result as its last line."""
    import psutil

    from era5etl.load import ChunkResult, load
    from era5etl.stage import open_download

    spec = json.loads(sys.stdin.read())
    proc = psutil.Process()
    peak = [proc.memory_info().rss]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(spec.get("sample_s", 0.1)):
            peak[0] = max(peak[0], proc.memory_info().rss)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    progress = _Progress()
    chunks: list[dict[str, Any]] = []
    opens: list[float] = []
    total = 0

    def on_chunk(c: ChunkResult) -> None:
        progress.chunk(c.rows)
        chunks.append({**asdict(c), "rows_per_s": round(c.rows_per_s)})
        log(f"bench sustained: chunk {c.start[:10]} {c.rows:,} rows in {c.seconds:.1f} s "
            f"({c.rows_per_s:,.0f} rows/s); {progress.block_rows:,} rows so far")

    # The day files are opened as one download split in parts by days, as a month over the CDS cost
    # limit arrives, so one load() sees every chunk and runs its writers side by side throughout.
    paths = [Path(p) for p, _ in spec["files"]]
    last_end = spec["files"][-1][1]
    t = time.perf_counter()
    with open_download(paths) as staged:
        opens.append(time.perf_counter() - t)
        timed = cast("StagedDownload", _TimedStaged(staged, progress))
        result = load(spec["url"], spec["table"], timed, on_chunk=on_chunk,
                      end=datetime.fromisoformat(last_end) if last_end else None)
    total += result.rows
    progress.mark()
    seconds = time.perf_counter() - progress.t0
    done.set()
    sampler.join()
    peak[0] = max(peak[0], proc.memory_info().rss)
    print(json.dumps({
        "rows": total, "seconds": seconds, "points": progress.points, "chunks": chunks, "open_seconds": opens,
        "vm_hwm_mb": _vm_hwm_mb(), "psutil_peak_rss_mb": peak[0] / 2**20,
    }))


def _vm_hwm_mb() -> float:
    """This process's own peak RSS. ru_maxrss can be more: Linux keeps the peak of the memory image a
    process had before exec, here a fork of the bench, which may hold the comparison's rows."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def tenths(points: Sequence[tuple[int, float]], total: int) -> list[dict[str, float]]:
    """Rows per second over each tenth of the rows. The time a boundary was crossed is interpolated
    between the two measured points around it (a block apart: about a million rows)."""
    rows = np.array([p[0] for p in points], dtype=np.float64)
    secs = np.array([p[1] for p in points], dtype=np.float64)
    out = []
    prev_t = 0.0
    for k in range(1, 11):
        b = total * k / 10
        if k == 10:
            t = float(secs[-1])
        else:
            i = int(np.searchsorted(rows, b, "left"))
            r0, r1, t0, t1 = rows[i - 1], rows[i], secs[i - 1], secs[i]
            t = float(t0 + (t1 - t0) * (b - r0) / (r1 - r0)) if r1 > r0 else float(t1)
        dt = t - prev_t
        out.append({"tenth": k, "end_s": round(t, 3), "rows_per_s": round(total / 10 / dt) if dt > 0 else 0})
        prev_t = t
    return out


def run_sustained(url: str, total_rows: int, *, area: Sequence[float] | None = None, run_id: str | None = None,
                  cache_dir: Path = CACHE_DIR, keep_table: bool = False, blog_hours: int = 1) -> dict[str, Any]:
    """The product's load of ``total_rows`` rows (whole hours of distinct days) in a child process,
    plus the blog's path on the first hours of the same first file."""
    run_id = run_id or uuid.uuid4().hex[:8]
    plan = sustained_plan(total_rows, area, cache_dir)
    table = f"bench_{run_id}_sustained"
    blog_table = f"bench_{run_id}_blog"
    out: dict[str, Any] = {"requested_rows": total_rows, "files": [str(p) for p, _ in plan], "table": table}
    try:
        # The blog's path on the same data, first: the table it writes is dropped before the long load.
        create_table(url, blog_table, "hypertable", blog_table)
        checkpoint(url)
        timing = BlogTiming()
        blog_path(url, blog_table, [plan[0][0]], hours=blog_hours, timing=timing)
        held = count_rows(url, blog_table)
        if held != timing.rows:
            raise BenchError(f"the blog's path wrote {timing.rows} rows but the table holds {held}")
        drop_table(url, blog_table)
        out["blog"] = {"rows": timing.rows, "seconds": round(timing.seconds, 3),
                       "copy_seconds": round(timing.copy_seconds, 3),
                       "open_seconds": round(timing.open_seconds, 3),
                       "rows_per_s": round(timing.rows / timing.seconds) if timing.seconds > 0 else 0,
                       "copy_rows_per_s": round(timing.rows / timing.copy_seconds) if timing.copy_seconds > 0 else 0}
        log(f"bench sustained: blog's path on the first {blog_hours} h of {plan[0][0].name}: "
            f"{out['blog']['rows_per_s']:,} rows/s (its write_row COPY alone {out['blog']['copy_rows_per_s']:,})")

        create_table(url, table, "hypertable", table, bare=True)
        checkpoint(url)
        spec = {"url": url, "table": table, "files": [[str(p), e] for p, e in plan]}
        log(f"bench sustained: loading {len(plan)} day file(s) into {table} ...")
        proc = subprocess.run([sys.executable, "-c",
                               "from era5bench.sustained import sustained_child; sustained_child()"],
                              input=json.dumps(spec), stdout=subprocess.PIPE, text=True,
                              check=False)
        if proc.returncode != 0:
            raise BenchError(f"the sustained load failed (exit {proc.returncode}); its messages are above")
        child = json.loads(proc.stdout.strip().splitlines()[-1])
        held = count_rows(url, table)
        if held != child["rows"]:
            raise BenchError(f"the sustained load says {child['rows']} rows but {table} holds {held}")
        per_tenth = tenths(child["points"], child["rows"])
        first, last = per_tenth[0]["rows_per_s"], per_tenth[-1]["rows_per_s"]
        gaps = np.diff([p[0] for p in child["points"]])
        out.update({
            "rows": child["rows"], "seconds": round(child["seconds"], 3),
            "rows_per_s": round(child["rows"] / child["seconds"]),
            "tenths": per_tenth, "last_tenth_vs_first_tenth": round(last / first, 4) if first else None,
            "progress_points": len(child["points"]), "max_rows_between_points": int(gaps.max()) if gaps.size else 0,
            "chunks": child["chunks"], "open_seconds": [round(s, 3) for s in child["open_seconds"]],
            "client_peak_rss_mb": round(child["vm_hwm_mb"], 1),
            "psutil_peak_rss_mb": round(child["psutil_peak_rss_mb"], 1),
            **table_facts(url, table),
        })
    finally:
        cleanup(url, [blog_table] if keep_table else [blog_table, table])
    return out
