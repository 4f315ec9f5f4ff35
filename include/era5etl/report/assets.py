"""The Data view's static files: its own script and styles (``report/static/``) and uPlot, which
``scripts/setup.sh`` installs from the npm registry into ``node_modules`` (pinned by package.json and
package-lock.json). The plugin serves them by name behind its login, so the page loads nothing from
elsewhere: the API server may have no internet access.
"""

from __future__ import annotations

from pathlib import Path

from era5etl.core.paths import PROJECT_ROOT

STATIC_DIR = Path(__file__).resolve().parent / "static"
UPLOT_DIR = PROJECT_ROOT / "node_modules" / "uplot" / "dist"
# Every file the plugin serves, by the name the page asks for: nothing else under either folder.
FILES: dict[str, Path] = {
    "dataview.js": STATIC_DIR / "dataview.js",
    "dataview.css": STATIC_DIR / "dataview.css",
    "climate.js": STATIC_DIR / "climate.js",
    "atlas.js": STATIC_DIR / "atlas.js",
    "uPlot.iife.min.js": UPLOT_DIR / "uPlot.iife.min.js",
    "uPlot.min.css": UPLOT_DIR / "uPlot.min.css",
}


def static_file(name: str) -> Path | None:
    """The file served as ``static/<name>``, or None when there is none by that name (or it is not
    installed)."""
    path = FILES.get(name)
    return path if path is not None and path.is_file() else None


def static_missing(name: str) -> str:
    """Why ``static/<name>`` is not served: no such file, or uPlot not installed yet."""
    if name in FILES and FILES[name].parent == UPLOT_DIR:
        return f"{name} is not installed: run scripts/setup.sh (npm ci installs uPlot into {UPLOT_DIR.parent.parent})"
    return f"no static file {name!r}"
