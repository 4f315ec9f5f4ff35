"""Validation Data Docs: which folder and file a month's validation path stands for, and its URL on the page."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from urllib.parse import quote

from era5etl.core.grid import area_slug
from era5etl.report.model import month_text


def docs_root(path: str) -> tuple[Path, str]:
    """The folder to serve for a validation path, and the Data Docs entry page within it.

    The validator records the result folder (``result.json`` and ``docs/index.html`` inside); a
    path to the Data Docs folder, its ``index.html`` or the ``result.json`` is accepted too.
    """
    p = Path(path)
    if p.suffix == ".html":
        return p.parent, p.name
    if p.suffix == ".json":
        return p.parent, "docs/index.html"
    if not (p / "docs").is_dir() and (p / "index.html").is_file():
        return p, "index.html"
    return p, "docs/index.html"


def docs_file(path: str, relative: str) -> Path | None:
    """The file ``relative`` under a validation path's folder, or None if missing or outside it."""
    root, entry = docs_root(path)
    relative = relative or entry
    if relative.endswith("/"):
        relative += "index.html"
    base = root.resolve()
    target = (base / relative).resolve()
    # Links in the served pages are user-controlled URLs; nothing above the folder may be reached.
    if not target.is_relative_to(base) or not target.is_file():
        return None
    return target


def docs_href(base: str, table: str, month: date, area: str, path: str) -> str:
    """Where the plugin serves a month's Data Docs (its route mirrors this layout)."""
    _, entry = docs_root(path)
    return f"{base}docs/{quote(table, safe='')}/{month_text(month)}/{quote(area_slug(area), safe='')}/{entry}"
