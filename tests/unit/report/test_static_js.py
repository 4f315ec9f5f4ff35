"""The Data view's JavaScript is linted as JavaScript: ESLint (pinned by package.json and
package-lock.json, installed by ``scripts/setup.sh --dev``) over the static files, any error a failure.

Without node, npm or the installed ESLint the test fails and says how to get them: a lint that
cannot run is not a lint that passed.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from era5etl.core.paths import PROJECT_ROOT
from era5etl.report.assets import STATIC_DIR

ESLINT = PROJECT_ROOT / "node_modules" / ".bin" / "eslint"


def _eslint(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    npx = shutil.which("npx")
    if npx is None or shutil.which("node") is None:
        pytest.fail("node and npm are needed to lint the Data view's JavaScript: apt-get install nodejs npm")
    if not ESLINT.exists():
        pytest.fail(f"ESLint is not installed in {PROJECT_ROOT / 'node_modules'}: run scripts/setup.sh --dev "
                    "(npm ci from package-lock.json)")
    return subprocess.run([npx, "--no-install", "eslint", "--max-warnings", "0", *args], cwd=PROJECT_ROOT,
                          input=stdin, capture_output=True, text=True, timeout=120, check=False)


def test_static_javascript_passes_eslint() -> None:
    files = sorted(STATIC_DIR.glob("*.js"))
    assert [f.name for f in files] == ["atlas.js", "climate.js", "dataview.js"]
    done = _eslint(*(str(f.relative_to(PROJECT_ROOT)) for f in files))
    assert done.returncode == 0, f"ESLint found problems:\n{done.stdout}{done.stderr}"


def test_eslint_catches_a_slip() -> None:
    """The same configuration refuses an undefined name and a loose comparison: the lint is live."""
    bad = '(function () {\n  "use strict";\n  if (undefinedThing == 1) { window.x = 1; }\n})();\n'
    done = _eslint("--stdin", "--stdin-filename", str((STATIC_DIR / "slip.js").relative_to(PROJECT_ROOT)), stdin=bad)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no-undef" in done.stdout and "eqeqeq" in done.stdout
