"""The documentation: README.md as the front door, docs/ as a MkDocs (Material) site built ``--strict``.

The build is the real ``mkdocs build --strict`` of ``mkdocs.yml``, into a temporary folder: with the
validation settings there, a link to a missing page, a link to an anchor no heading makes, a page
left out of the nav and a nav entry without a page all fail it. The README is not part of the site
(GitHub shows it), so its links are checked here against the files and the built pages' anchors.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from era5etl.core.paths import PROJECT_ROOT

DOCS = PROJECT_ROOT / "docs"
README = PROJECT_ROOT / "README.md"
# The front door stays a front door: what it is, the two commands, a picture, where to read on.
README_MAX_LINES = 200
# Material for MkDocs 9.7+ prints a banner about its end of life on every build; it is not a warning
# of the build's, and the variable is the theme's own switch for it.
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def build(project: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=project, env=ENV, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = build(PROJECT_ROOT, out)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}{done.stderr}"
    return out


def nav_pages(nav: list[object]) -> list[str]:
    pages: list[str] = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += nav_pages(value) if isinstance(value, list) else [str(value)]
    return pages


def page_ids(site: Path, page: str) -> set[str]:
    """The element ids of a built page (``x.md`` is ``x/index.html``, ``index.md`` is ``index.html``)."""
    stem = page.removesuffix(".md")
    html = site / ("index.html" if stem == "index" else f"{stem}/index.html")
    return set(re.findall(r'\bid="([^"]+)"', html.read_text()))


def test_the_site_builds_strict_with_every_page_in_the_nav(site: Path) -> None:
    config = yaml.safe_load((PROJECT_ROOT / "mkdocs.yml").read_text())
    assert config["theme"]["name"] == "material" and "search" in config["plugins"]
    pages = nav_pages(config["nav"])
    assert sorted(pages) == sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert len(pages) == len(set(pages)), "a page is in the nav twice"
    for page in pages:
        assert page_ids(site, page), f"{page} was not built"
    assert (site / "search" / "search_index.json").stat().st_size > 0


def test_a_broken_link_an_anchor_or_a_page_missing_from_the_nav_fails_the_build(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(PROJECT_ROOT / "mkdocs.yml", project)
    shutil.copytree(DOCS, project / "docs")
    with (project / "docs" / "index.md").open("a") as f:
        f.write("\n[gone](no-such-page.md) [elsewhere](operating.md#no-such-heading)\n")
    (project / "docs" / "orphan.md").write_text("# Not in the nav\n")
    done = build(project, tmp_path / "site")
    assert done.returncode != 0
    said = done.stdout + done.stderr
    assert "'no-such-page.md'" in said and "'#no-such-heading'" in said and "orphan.md" in said, said


def test_the_readme_is_a_front_door_whose_links_resolve(site: Path) -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= README_MAX_LINES
    assert "scripts/demo.sh" in text and "scripts/test.sh" in text
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [link for link in links if not re.match(r"[a-z]+://", link)]
    assert any(link.startswith("docs/img/") for link in local), "the front door lost its picture"
    for link in local:
        path, _, anchor = link.partition("#")
        assert (PROJECT_ROOT / path).exists(), f"README links to {path}, which does not exist"
        if anchor:
            assert anchor in page_ids(site, str(Path(path).relative_to("docs"))), f"README: no anchor {link}"
    linked = {str(Path(link.partition("#")[0]).relative_to("docs")) for link in local if link.endswith(".md")
              or ".md#" in link}
    config = yaml.safe_load((PROJECT_ROOT / "mkdocs.yml").read_text())
    assert set(nav_pages(config["nav"])) <= linked, "a page of the site is not reachable from the README"


def demo_output(text: str) -> str:
    block = re.search(r"What `scripts/demo.sh` printed.*?\n```\n(.*?)\n```", text, re.S)
    assert block is not None
    return block.group(1)


def test_the_readme_quotes_the_demo_output_the_install_page_quotes() -> None:
    assert demo_output(README.read_text()) == demo_output((DOCS / "install.md").read_text())


def test_the_docs_name_the_timescaledb_image_the_compose_file_runs() -> None:
    images = set(re.findall(r"timescale/timescaledb:[\w.-]+", (PROJECT_ROOT / "docker-compose.yaml").read_text()))
    assert len(images) == 1
    named = {page.name: set(re.findall(r"timescale/timescaledb:[\w.-]+", page.read_text()))
             for page in [README, *DOCS.rglob("*.md")]}
    assert named["compose.md"] == images
    assert all(found <= images for found in named.values()), named
