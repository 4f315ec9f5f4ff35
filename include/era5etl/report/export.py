"""The dashboard as JSON: plain types for the plugin's ``api/dashboard`` route."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from era5etl.report.docs import docs_href
from era5etl.report.model import Dashboard, MonthView, month_text


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def to_json(d: Dashboard, base: str = "") -> dict[str, Any]:
    """The dashboard as plain JSON types; ``base`` prefixes the Data Docs links (the plugin's root)."""

    def month_json(m: MonthView) -> dict[str, Any]:
        v = m.validation
        docs = docs_href(base, d.table, m.month, d.area, v.path) if v.path and d.table and d.area else None
        return {
            "month": m.label, "state": m.state, "grid": m.grid, "rows": m.rows, "expected_rows": m.expected_rows,
            "expver": list(m.expver), "run_id": m.run_id, "error": m.error, "updated_at": _iso(m.updated_at),
            "validation": {"status": v.status, "failed": list(v.failed), "validated_at": _iso(v.validated_at),
                           "path": v.path, "docs_url": docs},
            "tasks": {t: {"rows": f.rows, "bytes": f.bytes, "seconds": f.seconds, "rows_per_s": f.rows_per_s,
                          "bytes_per_s": f.bytes_per_s, "peak_rss_mb": f.peak_rss_mb, "run_id": f.run_id,
                          "recorded_at": _iso(f.recorded_at)} for t, f in m.tasks.items()},
        }

    return {
        "table": d.table, "area": d.area,
        "selected_month": month_text(d.selected) if d.selected else None,
        "generated_at": _iso(d.generated_at),
        "targets": [{"table": t.table, "area": t.area, "months": t.months, "updated_at": _iso(t.updated_at)}
                    for t in d.targets],
        "months": [month_json(m) for m in d.months],
        "chunks": [{"start": c.start, "rows": c.rows, "seconds": c.seconds, "rows_per_s": c.rows_per_s,
                    "copy_seconds": c.copy_seconds, "index_seconds": c.index_seconds} for c in d.chunks],
        "load_runs": [{"month": month_text(r.month), "rows": r.rows, "seconds": r.seconds, "rows_per_s": r.rows_per_s,
                       "recorded_at": _iso(r.recorded_at), "run_id": r.run_id} for r in d.load_runs],
        "staging": d.staging.as_dict() if d.staging is not None else None,
    }
