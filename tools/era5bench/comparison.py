"""Running the comparison: every method, table kind and batch size, repeated and interleaved, each run
into a fresh table whose row count is checked; and its table of rates.

Every method loads the same rows: one synthetic CDS download (``localcds.synth``, the local CDS
server's generator) of a region over ``--days`` days, sized to about ``--rows`` rows, cached under
``.local/bench/``. Each run writes into a fresh table (dropped and recreated before every run, with a
CHECKPOINT first so one run does not pay for the previous run's dirty pages), then the table's
``count(*)`` must equal the rows the method says it wrote. Repeats are interleaved (every method once,
then every method again) so that drift on a shared machine spreads over all methods instead of landing
on whichever ran last.
"""

from __future__ import annotations

import statistics
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from era5bench.common import BenchError, log
from era5bench.methods import BLOG, BY_NAME, Context
from era5bench.tables import checkpoint, cleanup, count_rows, create_table
from era5etl.db import ensure_schema

KINDS = ("plain", "hypertable")


@dataclass
class Result:
    method: str
    label: str
    kind: str
    batch: int | None
    rows: int = 0
    seconds: list[float] = field(default_factory=list)

    @property
    def rates(self) -> list[float]:
        return [self.rows / s for s in self.seconds if s > 0]

    @property
    def median(self) -> float:
        return statistics.median(self.rates) if self.rates else 0.0

    @property
    def min(self) -> float:
        return min(self.rates, default=0.0)

    @property
    def max(self) -> float:
        return max(self.rates, default=0.0)

    def as_dict(self) -> dict[str, Any]:
        return {"method": self.method, "label": self.label, "table": self.kind, "batch": self.batch,
                "rows": self.rows, "seconds": [round(s, 4) for s in self.seconds],
                "median_rows_per_s": round(self.median), "min_rows_per_s": round(self.min),
                "max_rows_per_s": round(self.max)}


def run_comparison(url: str, ctx: Context, *, methods: Sequence[str] = tuple(BY_NAME),
                   batch_sizes: Sequence[int] = (1000, 10_000, 100_000), kinds: Sequence[str] = KINDS,
                   repeat: int = 3, run_id: str | None = None, flush: bool = True,
                   keep_tables: bool = False) -> list[Result]:
    """Every (method, table kind, batch size) ``repeat`` times, interleaved; each into a fresh table whose
    row count afterwards must be what the method wrote."""
    run_id = run_id or uuid.uuid4().hex[:8]
    template = f"bench_{run_id}_template"
    names = {k: f"bench_{run_id}_{k}" for k in kinds}
    results: list[Result] = []
    for name in methods:
        m = BY_NAME[name]
        for kind in kinds:
            if kind not in m.kinds:
                continue
            for b in (batch_sizes if m.batched else [None]):
                results.append(Result(m.name, m.label, kind, b))
    ensure_schema(url, template)
    try:
        for r in range(repeat):
            for res in results:
                table = names[res.kind]
                create_table(url, table, res.kind, template, bare=BY_NAME[res.method].bare)
                if flush:
                    checkpoint(url)
                began = time.perf_counter()
                rows = BY_NAME[res.method].fn(ctx, table, res.batch)
                seconds = time.perf_counter() - began
                held = count_rows(url, table)
                if held != rows:
                    raise BenchError(f"{res.method} into the {res.kind} table says it wrote {rows} rows but the "
                                     f"table holds {held}")
                if res.seconds and rows != res.rows:
                    raise BenchError(f"{res.method}: {rows} rows this time, {res.rows} before")
                res.rows = rows
                res.seconds.append(seconds)
                log(f"bench [{r + 1}/{repeat}] {res.method:<21} {res.kind:<10} {_batch(res.batch):>7}: "
                    f"{rows:>9,} rows {seconds:8.3f} s {rows / seconds if seconds > 0 else 0:>12,.0f} rows/s")
    finally:
        if not keep_tables:
            cleanup(url, [*names.values(), template])
    return results


def _batch(b: int | None) -> str:
    return "-" if b is None else f"{b:,}"


def blog_rate(results: Sequence[Result], kind: str) -> float | None:
    for r in results:
        if r.method == BLOG and r.kind == kind and r.median > 0:
            return r.median
    return None


def format_table(results: Sequence[Result]) -> str:
    head = (f"{'method':<36} {'table':<10} {'batch':>7} {'rows':>9} {'median rows/s':>14} {'min':>12} "
            f"{'max':>12} {'x blog':>7}")
    lines = [head, "-" * len(head)]
    for r in results:
        base = blog_rate(results, r.kind)
        ratio = f"{r.median / base:7.2f}" if base else f"{'-':>7}"
        lines.append(f"{r.label:<36} {r.kind:<10} {_batch(r.batch):>7} {r.rows:>9,} {r.median:>14,.0f} "
                     f"{r.min:>12,.0f} {r.max:>12,.0f} {ratio}")
    return "\n".join(lines)
