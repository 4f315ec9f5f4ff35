"""Print what requirements.txt installs except the package itself, one requirement a line: the package's
line (``.[extras]``) expanded into the dependencies pyproject.toml declares, with those extras, and any
other requirement line as written. The Dockerfile installs this list (with constraints.txt) before it
copies the code, so an edit of the code reuses the dependency layer; scripts/setup.sh installs it beside
the editable package. requirements.txt stays the one place that says which extras a deployment has,
pyproject.toml the one that names the dependencies, constraints.txt the one that pins them.

    python scripts/dependencies.py > deps.txt
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

# The package itself in requirements.txt: this folder, with its extras.
PROJECT_LINE = re.compile(r"^\.(?:\[(?P<extras>[^\]]*)\])?$")


def expand(requirements: str, project: dict[str, object]) -> list[str]:
    """requirements.txt's lines with the package's line replaced by its dependencies; options (-c, -r,
    --index-url, ...) are left out: the caller passes constraints.txt itself."""
    declared = project.get("optional-dependencies", {})
    assert isinstance(declared, dict)
    out: list[str] = []
    for raw in requirements.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        match = PROJECT_LINE.match(line)
        if match is None:
            out.append(line)
            continue
        extras = [e.strip() for e in (match.group("extras") or "").split(",") if e.strip()]
        unknown = [e for e in extras if e not in declared]
        if unknown:
            raise SystemExit(f"requirements.txt names unknown extra(s) {', '.join(unknown)}; "
                             f"pyproject.toml has {', '.join(declared)}")
        dependencies = project["dependencies"]
        assert isinstance(dependencies, list)
        out += [*dependencies, *(r for e in extras for r in declared[e])]
    return out


def main(argv: list[str]) -> int:
    if argv:
        print("usage: python scripts/dependencies.py (the extras are requirements.txt's)", file=sys.stderr)
        return 2
    here = Path(__file__).resolve().parent
    # Beside it in the image (/opt/era5etl), one folder up in a checkout (scripts/).
    root = next(p for p in (here, here.parent) if (p / "pyproject.toml").exists())
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    for requirement in expand((root / "requirements.txt").read_text(), project):
        print(requirement)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
