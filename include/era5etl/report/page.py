"""The HTML page: calendar of months by ledger state, months table, chart figures and the CSS.

Self-contained HTML with inline SVG charts and no script or external asset: the API server may have
no internet access. The tabs lead to the Data view (``report.datapage``), which shares the CSS.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from urllib.parse import urlencode

from era5etl.core.expver import PRELIMINARY
from era5etl.report.charts import chunk_chart, month_rate_chart
from era5etl.report.docs import docs_href
from era5etl.report.fmt import byte_rate, count, duration, esc, short, when
from era5etl.report.model import Dashboard, MonthView, Target, TaskFigures, month_text
from era5etl.track.ledger import STATES

TASKS = ("fetch", "stage", "load", "validate")

# Background and text colour per ledger state: in-flight states in blues/amber, done in greens,
# failure in red, so a year of months reads at a glance and the text on each stays legible.
STATE_COLOURS: dict[str, tuple[str, str]] = {
    "pending": ("#e2e8f0", "#1e293b"),
    "fetching": ("#bfdbfe", "#1e3a8a"),
    "staged": ("#c7d2fe", "#312e81"),
    "loading": ("#fde68a", "#78350f"),
    "loaded": ("#86efac", "#14532d"),
    "validating": ("#4ade80", "#14532d"),
    "validated": ("#15803d", "#ffffff"),
    "failed": ("#dc2626", "#ffffff"),
}
UNKNOWN_COLOURS = ("#f1f5f9", "#64748b")
MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

CSS = """
:root { color-scheme: light; }
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #0f172a;
       background: #ffffff; margin: 0; padding: 16px 20px 32px; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 24px 0 8px; }
.sub { color: #475569; margin: 0 0 12px; }
a { color: #1d4ed8; }
nav.tabs { display: flex; gap: 4px; border-bottom: 1px solid #e2e8f0; margin: 4px 0 12px; }
nav.tabs a { padding: 5px 14px; text-decoration: none; color: #334155; border: 1px solid transparent;
             border-bottom: none; border-radius: 6px 6px 0 0; margin-bottom: -1px; }
nav.tabs a.on { color: #0f172a; font-weight: 600; border-color: #e2e8f0; background: #fff; }
nav.targets a { display: inline-block; padding: 3px 10px; margin: 0 4px 4px 0; border: 1px solid #cbd5e1;
                border-radius: 14px; text-decoration: none; color: #0f172a; font-size: 13px; }
nav.targets a.on { background: #0f172a; color: #fff; border-color: #0f172a; }
.legend span { display: inline-block; padding: 2px 8px; margin: 0 4px 4px 0; border-radius: 4px; font-size: 12px; }
table.cal { border-collapse: separate; border-spacing: 4px; }
table.cal th { font-weight: 600; color: #475569; font-size: 12px; }
table.cal th.year { text-align: right; padding-right: 6px; }
.cell { display: block; width: 86px; height: 56px; border-radius: 6px; text-decoration: none; box-sizing: border-box;
        padding: 4px 6px; font-size: 11px; line-height: 1.3; overflow: hidden; white-space: nowrap; }
.cell b, .cell span { display: block; } .cell b { font-size: 12px; }
.cell.none { background: #f8fafc; border: 1px dashed #e2e8f0; color: #94a3b8; }
.cell.sel { outline: 3px solid #f97316; outline-offset: 1px; }
table.months { border-collapse: collapse; width: 100%; font-size: 13px; }
table.months th, table.months td { border-bottom: 1px solid #e2e8f0; padding: 5px 8px; text-align: left;
                                   vertical-align: top; }
table.months th { background: #f8fafc; font-weight: 600; }
table.months td.nowrap { white-space: nowrap; }
table.months td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.months tr.sel td { background: #fff7ed; }
.badge { display: inline-block; padding: 1px 7px; border-radius: 10px; font-size: 12px; white-space: nowrap; }
.ok { color: #15803d; font-weight: 600; } .bad { color: #b91c1c; font-weight: 600; } .muted { color: #64748b; }
.err { color: #b91c1c; font-size: 12px; max-width: 340px; }
.small { font-size: 12px; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
.charts figure { margin: 0; flex: 1 1 560px; max-width: 900px; border: 1px solid #e2e8f0; border-radius: 8px;
                 padding: 8px 8px 4px; }
figcaption { font-weight: 600; margin: 0 0 4px 4px; }
svg.chart { width: 100%; height: auto; display: block; }
svg .grid { stroke: #e2e8f0; } svg .base { stroke: #94a3b8; }
svg .tick { font-size: 11px; fill: #475569; } svg .axis { font-size: 12px; fill: #334155; }
svg .bar { fill: #2563eb; } svg .bar:hover { fill: #1e40af; }
svg .avg { stroke: #f97316; stroke-width: 1.5; stroke-dasharray: 6 4; }
svg .avg-label { font-size: 12px; fill: #c2410c; }
svg .line { fill: none; stroke: #2563eb; stroke-width: 2; }
svg .pt { fill: #2563eb; } svg .pt.old { fill: #fff; stroke: #94a3b8; stroke-width: 1.5; }
svg .pt.sel { fill: #f97316; }
.scroll { overflow-x: auto; }
.empty { color: #64748b; font-style: italic; }
footer { margin-top: 24px; color: #94a3b8; font-size: 12px; }
"""


def _colours(state: str) -> tuple[str, str]:
    return STATE_COLOURS.get(state, UNKNOWN_COLOURS)


def query(base: str, **params: str | None) -> str:
    encoded = urlencode({k: v for k, v in params.items() if v})
    return base + "?" + encoded if encoded else base


def tabs(current: str, months_href: str, data_href: str) -> str:
    """The two views of the page: the months the ledger knows, and the loaded data read back."""
    items = []
    for key, label, href in (("months", "Months", months_href), ("data", "Data", data_href)):
        on = ' class="on" aria-current="page"' if key == current else ""
        items.append(f'<a{on} data-tab="{key}" href="{esc(href)}">{label}</a>')
    return f'<nav class="tabs">{"".join(items)}</nav>'


def targets_nav(targets: Sequence[Target], table: str | None, area: str | None, href: str) -> str:
    """Links to every (table, area) the ledger knows, the shown one marked; none when there is one."""
    if len(targets) <= 1:
        return ""
    links = []
    for t in targets[:30]:
        on = ' class="on"' if (t.table, t.area) == (table, area) else ""
        links.append(f'<a{on} href="{esc(query(href, table=t.table, area=t.area))}">{esc(t.table)} · {esc(t.area)}'
                     f' <span class="muted">({t.months})</span></a>')
    return f'<nav class="targets">{"".join(links)}</nav>'


def _legend(d: Dashboard) -> str:
    counts = {s: 0 for s in STATES}
    for m in d.months:
        counts[m.state] = counts.get(m.state, 0) + 1
    items = []
    for state, n in counts.items():
        bg, fg = _colours(state)
        items.append(f'<span data-state="{esc(state)}" style="background:{bg};color:{fg}">{esc(state)} {n}</span>')
    return f'<div class="legend">{"".join(items)}</div>'


def _cell_tip(m: MonthView) -> str:
    parts = [f"{m.label}: {m.state}", f"rows {count(m.rows)} of {count(m.expected_rows)} expected"]
    if m.expver:
        parts.append("expver " + "+".join(m.expver))
    v = m.validation
    if v.status != "none":
        parts.append(f"validation {v.status}" + (f" ({', '.join(v.failed)})" if v.failed else ""))
    if m.error:
        parts.append(m.error)
    parts.append(f"updated {when(m.updated_at)}")
    return "\n".join(parts)


def calendar(d: Dashboard, base: str) -> str:
    """Years down, months across, each cell coloured by the month's ledger state."""
    if not d.months:
        return '<p class="empty">The ledger holds no months for this table and area yet.</p>'
    by_month = {m.month: m for m in d.months}
    head = "".join(f"<th>{n}</th>" for n in MONTH_NAMES)
    rows = []
    for year in range(min(by_month).year, max(by_month).year + 1):
        cells = []
        for number in range(1, 13):
            key = date(year, number, 1)
            m = by_month.get(key)
            if m is None:
                cells.append(f'<td><span class="cell none" data-month="{month_text(key)}" data-state="">'
                             f'<b>{MONTH_NAMES[number - 1]}</b></span></td>')
                continue
            bg, fg = _colours(m.state)
            sel = " sel" if m.month == d.selected else ""
            figures = short(m.rows) if m.rows is not None else ""
            if m.rows is not None and m.expected_rows:
                figures += f" / {short(m.expected_rows)}"
            href = query(base, table=d.table, area=d.area, month=m.label)
            cells.append(
                f'<td><a class="cell{sel}" data-month="{m.label}" data-state="{esc(m.state)}" href="{esc(href)}"'
                f' style="background:{bg};color:{fg}" title="{esc(_cell_tip(m))}"><b>{MONTH_NAMES[number - 1]}</b>'
                f"<span>{esc(m.state)}</span><span>{esc(figures)}</span></a></td>")
        rows.append(f'<tr><th class="year">{year}</th>{"".join(cells)}</tr>')
    return (f'<div class="scroll"><table class="cal"><thead><tr><th></th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _task_cell(f: TaskFigures | None) -> str:
    if f is None:
        return '<td class="num muted">–</td>'
    if f.rows > 0 and f.rows_per_s is not None:
        rate = f"{short(f.rows_per_s)} rows/s"
    elif f.bytes_per_s is not None:
        rate = byte_rate(f.bytes_per_s)
    else:
        rate = "–"
    tip = (f"{f.task}: {count(f.rows)} rows, {short(f.bytes)}B in {duration(f.seconds)}; peak RSS "
           f"{short(f.peak_rss_mb)} MB; run {f.run_id or '–'} at {when(f.recorded_at)}")
    return (f'<td class="num" data-task="{esc(f.task)}" title="{esc(tip)}">{esc(rate)}<br>'
            f'<span class="muted small">{esc(duration(f.seconds))}</span></td>')


def _validation_cell(d: Dashboard, m: MonthView, base: str) -> str:
    v = m.validation
    if v.status == "passed":
        text = '<span class="ok">passed</span>'
    elif v.status == "failed":
        failed = ", ".join(v.failed)
        text = '<span class="bad">failed</span>' + (f'<div class="err">{esc(failed)}</div>' if failed else "")
    else:
        text = '<span class="muted">not validated</span>'
    if v.validated_at is not None:
        text += f'<div class="muted small">{esc(when(v.validated_at))}</div>'
    if v.path and d.table and d.area:
        text += f' <a class="docs" href="{esc(docs_href(base, d.table, m.month, d.area, v.path))}">Data Docs</a>'
    return f"<td>{text}</td>"


def months_table(d: Dashboard, base: str) -> str:
    if not d.months:
        return ""
    head = ("<tr><th>Month</th><th>State</th><th>Rows</th><th>Expected</th><th>expver</th><th>Validation</th>"
            + "".join(f"<th>{t}</th>" for t in TASKS) + "<th>Updated</th></tr>")
    body = []
    for m in reversed(d.months):
        bg, fg = _colours(m.state)
        rows_class = "num" if m.rows is None or m.rows == m.expected_rows else "num bad"
        preliminary = (' <span class="badge" style="background:#fef3c7;color:#92400e" title="preliminary ERA5T data,'
                       ' replaced by final data about three months later">ERA5T</span>'
                       if PRELIMINARY in m.expver else "")
        error = f'<div class="err" title="{esc(m.error)}">{esc(m.error[:160])}</div>' if m.error else ""
        sel = ' class="sel"' if m.month == d.selected else ""
        href = query(base, table=d.table, area=d.area, month=m.label)
        body.append(
            f'<tr{sel} data-month="{m.label}"><td class="nowrap"><a href="{esc(href)}">{m.label}</a></td>'
            f'<td><span class="badge" style="background:{bg};color:{fg}">{esc(m.state)}</span>{error}</td>'
            f'<td class="{rows_class}">{count(m.rows)}</td><td class="num">{count(m.expected_rows)}</td>'
            f"<td>{esc('+'.join(m.expver) or '–')}{preliminary}</td>"
            f"{_validation_cell(d, m, base)}"
            + "".join(_task_cell(m.tasks.get(t)) for t in TASKS)
            + f'<td class="small nowrap">{esc(when(m.updated_at))}<div class="muted">{esc(m.run_id or "")}</div>'
            "</td></tr>")
    return (f'<div class="scroll"><table class="months"><thead>{head}</thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def staging_line(d: Dashboard) -> str:
    """What staging holds (every table's downloads: staging is by request), so a backfill's disk shows."""
    s = d.staging
    if s is None:
        return ""
    held = ", ".join(s.months[:12]) + (", …" if len(s.months) > 12 else "")
    tip = f"{s.root}: {count(s.bytes)} bytes; {s.released} removed download(s) with their manifest kept"
    return (f'<p class="sub" id="staging" data-bytes="{s.bytes}" data-files="{s.files}" title="{esc(tip)}">'
            f"staging holds <b>{esc(short(s.bytes))}B</b> in {s.files} download file{'' if s.files == 1 else 's'}"
            f" · {len(s.months)} month{'' if len(s.months) == 1 else 's'} held"
            + (f" ({esc(held)})" if s.months else "") + "</p>")


def render_page(d: Dashboard, base: str = "", json_href: str | None = None) -> str:
    """The whole page. ``base`` is the URL the page is served at (links are built on it)."""
    title = "ERA5 months"
    if d.table is None:
        sub = "No months in the ledger yet: run the era5_monthly DAG or <code>era5etl run-month</code>."
    else:
        grids = sorted({m.grid for m in d.months if m.grid})
        total = sum(m.rows or 0 for m in d.months)
        sub = (f"table <b>{esc(d.table)}</b>, area <b>{esc(d.area or '–')}</b> (N/W/S/E)"
               + (f", grid {esc(', '.join(grids))}°" if grids else "")
               + f" · {len(d.months)} month{'' if len(d.months) == 1 else 's'}, {count(total)} rows")
    selected = d.month(d.selected)
    label = selected.label if selected else (month_text(d.selected) if d.selected else "")
    load = selected.tasks.get("load") if selected else None
    chunks = chunk_chart(d.chunks, load.rows_per_s if load else None, label)
    json_link = f' · <a href="{esc(json_href)}">JSON</a>' if json_href else ""
    generated = f"generated {when(d.generated_at)}" if d.generated_at else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(title)}{" · " + esc(d.table) if d.table else ""}</title><style>{CSS}</style></head>
<body>
<h1>{esc(title)}</h1>
{tabs("months", query(base, table=d.table, area=d.area), query(base + "data", table=d.table, area=d.area))}
<p class="sub">{sub}</p>
{staging_line(d)}
{targets_nav(d.targets, d.table, d.area, base)}
<section id="calendar"><h2>Months by ledger state</h2>{_legend(d) if d.months else ""}{calendar(d, base)}</section>
<section id="charts"><h2>Load rate</h2><div class="charts">
<figure><figcaption>Per chunk, {esc(label or "–")}</figcaption>{chunks}</figure>
<figure><figcaption>Per month</figcaption>{month_rate_chart(d.load_runs, d.selected)}</figure>
</div></section>
<section id="months"><h2>Months</h2>{months_table(d, base)}</section>
<footer>{esc(generated)}{json_link}</footer>
</body></html>
"""
