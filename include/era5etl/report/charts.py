"""The page's SVG charts: load rate per hypertable chunk and per month, drawn as inline SVG text."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date

from era5etl.report.fmt import chunk_label, count, duration, esc, short, when
from era5etl.report.model import Chunk, LoadRun, month_text

CHART_W, CHART_H = 760, 250
PAD_L, PAD_R, PAD_T, PAD_B = 64, 16, 26, 42


def nice_ticks(top: float, count: int = 4) -> list[float]:
    """Round axis ticks from 0 that cover ``top``: steps of 1, 2, 2.5 or 5 times a power of ten."""
    if not top > 0:
        return [0.0, 1.0]
    raw = top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(math.ceil(top / step - 1e-9) + 1)]


def _axes(ticks: Sequence[float], y_label: str) -> list[str]:
    plot_h = CHART_H - PAD_T - PAD_B
    out = []
    for t in ticks:
        y = PAD_T + plot_h * (1 - t / ticks[-1])
        out.append(f'<line x1="{PAD_L}" x2="{CHART_W - PAD_R}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
                   f'<text x="{PAD_L - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">{esc(short(t))}</text>')
    out.append(f'<text x="14" y="{PAD_T + plot_h / 2:.1f}" transform="rotate(-90 14 {PAD_T + plot_h / 2:.1f})"'
               f' text-anchor="middle" class="axis">{esc(y_label)}</text>')
    out.append(f'<line x1="{PAD_L}" x2="{CHART_W - PAD_R}" y1="{PAD_T + plot_h}" y2="{PAD_T + plot_h}" class="base"/>')
    return out


def _svg(body: Sequence[str], label: str, css_class: str) -> str:
    return (f'<svg class="chart {css_class}" viewBox="0 0 {CHART_W} {CHART_H}" role="img" aria-label="{esc(label)}"'
            f' xmlns="http://www.w3.org/2000/svg"><title>{esc(label)}</title>{"".join(body)}</svg>')


def chunk_chart(chunks: Sequence[Chunk], month_rate: float | None = None, month: str = "") -> str:
    """Bars of rows/s per hypertable chunk, with the month's overall rate as a dashed line."""
    if not chunks:
        return f'<p class="empty">No chunk figures recorded for {esc(month) or "this month"}.</p>'
    top = max([c.rows_per_s for c in chunks] + [month_rate or 0.0])
    ticks = nice_ticks(top)
    plot_w, plot_h = CHART_W - PAD_L - PAD_R, CHART_H - PAD_T - PAD_B
    band = plot_w / len(chunks)
    every = max(1, math.ceil(len(chunks) / 12))
    body = _axes(ticks, "rows/s")
    for i, c in enumerate(chunks):
        h = plot_h * c.rows_per_s / ticks[-1]
        x = PAD_L + i * band + band * 0.125
        parts = []
        if c.copy_seconds is not None:
            parts.append(f"COPY {duration(c.copy_seconds)}")
        if c.index_seconds is not None:
            parts.append(f"index {duration(c.index_seconds)}")
        tip = (f"chunk {chunk_label(c.start, long=True)}: {count(c.rows)} rows in {duration(c.seconds)}"
               f" = {short(c.rows_per_s)} rows/s" + (f" ({', '.join(parts)})" if parts else ""))
        body.append(f'<rect class="bar" x="{x:.1f}" y="{PAD_T + plot_h - h:.1f}" width="{band * 0.75:.1f}"'
                    f' height="{max(h, 0.5):.1f}" data-rate="{c.rows_per_s:.0f}"><title>{esc(tip)}</title></rect>')
        if i % every == 0:
            body.append(f'<text x="{x + band * 0.375:.1f}" y="{PAD_T + plot_h + 16}" text-anchor="middle"'
                        f' class="tick">{esc(chunk_label(c.start))}</text>')
    if month_rate:
        y = PAD_T + plot_h * (1 - month_rate / ticks[-1])
        body.append(f'<line class="avg" x1="{PAD_L}" x2="{CHART_W - PAD_R}" y1="{y:.1f}" y2="{y:.1f}">'
                    f'<title>whole load: {esc(short(month_rate))} rows/s</title></line>'
                    # The key sits in the top margin, where no bar can hide it.
                    f'<line class="avg" x1="{CHART_W - PAD_R - 190}" x2="{CHART_W - PAD_R - 166}" y1="10" y2="10"/>'
                    f'<text class="avg-label" x="{CHART_W - PAD_R}" y="14" text-anchor="end">'
                    f'whole load {esc(short(month_rate))} rows/s</text>')
    body.append(f'<text x="{PAD_L + plot_w / 2:.1f}" y="{CHART_H - 6}" text-anchor="middle" class="axis">'
                f'chunk start (month-day, UTC)</text>')
    return _svg(body, f"Load rate per chunk, {month}", "chunks")


def _month_index(m: date) -> int:
    return m.year * 12 + m.month - 1


def month_rate_chart(runs: Sequence[LoadRun], selected: date | None = None) -> str:
    """Load rows/s per month: the latest load of each month joined by a line, earlier loads hollow."""
    rated = [r for r in runs if r.rows_per_s is not None]
    if not rated:
        return '<p class="empty">No loads recorded yet.</p>'
    latest: dict[date, LoadRun] = {}
    for r in rated:  # ordered by month then time, so the last one per month wins
        latest[r.month] = r
    first, last = _month_index(min(latest)), _month_index(max(latest))
    span = max(last - first, 1)
    ticks = nice_ticks(max(r.rows_per_s or 0.0 for r in rated))
    plot_w, plot_h = CHART_W - PAD_L - PAD_R, CHART_H - PAD_T - PAD_B
    inner = plot_w - 24  # keep the end points off the frame

    def xy(r: LoadRun) -> tuple[float, float]:
        offset = (_month_index(r.month) - first) / span if last > first else 0.5
        return PAD_L + 12 + inner * offset, PAD_T + plot_h * (1 - (r.rows_per_s or 0.0) / ticks[-1])

    body = _axes(ticks, "rows/s")
    # Consecutive months are joined; a gap in the months breaks the line rather than hiding it.
    segment: list[str] = []
    previous: int | None = None
    for m in sorted(latest):
        if previous is not None and _month_index(m) != previous + 1 and len(segment) > 1:
            body.append(f'<polyline class="line" points="{" ".join(segment)}"/>')
        if previous is not None and _month_index(m) != previous + 1:
            segment = []
        x, y = xy(latest[m])
        segment.append(f"{x:.1f},{y:.1f}")
        previous = _month_index(m)
    if len(segment) > 1:
        body.append(f'<polyline class="line" points="{" ".join(segment)}"/>')
    for r in rated:
        x, y = xy(r)
        is_latest = latest[r.month] is r
        css = "pt" if is_latest else "pt old"
        if is_latest and r.month == selected:
            css += " sel"
        tip = (f"{month_text(r.month)}: {count(r.rows)} rows in {duration(r.seconds)} = {short(r.rows_per_s)} rows/s,"
               f" loaded {when(r.recorded_at)}" + ("" if is_latest else " (superseded)"))
        body.append(f'<circle class="{css}" cx="{x:.1f}" cy="{y:.1f}" r="{5 if "sel" in css else 3.5}"'
                    f' data-month="{month_text(r.month)}"><title>{esc(tip)}</title></circle>')
    # The axis is time, so labels go at even month steps whether or not those months were loaded.
    step = max(1, math.ceil((last - first + 1) / 8))
    for index in range(first, last + 1, step):
        x, _ = xy(LoadRun(date(index // 12, index % 12 + 1, 1), 0, 0.0, 0.0))
        body.append(f'<text x="{x:.1f}" y="{PAD_T + plot_h + 16}" text-anchor="middle" class="tick">'
                    f"{index // 12:04d}-{index % 12 + 1:02d}</text>")
    body.append(f'<text x="{PAD_L + plot_w / 2:.1f}" y="{CHART_H - 6}" text-anchor="middle" class="axis">'
                f'month loaded</text>')
    return _svg(body, "Load rate per month", "months")
