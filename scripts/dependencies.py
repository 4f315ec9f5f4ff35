"""Print the pipeline's dependencies as pyproject.toml declares them, one requirement a line, with the
extras named on the command line: what the Dockerfile installs (with constraints.txt) before it copies
the code, so that an edit of the code reuses the dependency layer. pyproject.toml stays the one place
that names them, constraints.txt the one place that pins them.

    python scripts/dependencies.py celery statsd fab > deps.txt
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path


def main(argv: list[str]) -> int:
    here = Path(__file__).resolve().parent
    # Beside it in the image (/opt/era5etl), one folder up in a checkout (scripts/).
    path = next(p for p in (here / "pyproject.toml", here.parent / "pyproject.toml") if p.exists())
    project = tomllib.loads(path.read_text())["project"]
    extras = project.get("optional-dependencies", {})
    unknown = [e for e in argv if e not in extras]
    if unknown:
        print(f"unknown extra(s) {', '.join(unknown)}; pyproject.toml has {', '.join(extras)}", file=sys.stderr)
        return 2
    for requirement in [*project["dependencies"], *(r for e in argv for r in extras[e])]:
        print(requirement)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
