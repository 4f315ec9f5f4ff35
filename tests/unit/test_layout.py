"""The layout rules a newcomer relies on, checked by parsing the code (no import, nothing runs).

A name that starts with one underscore is private to the module that defines it: what another
module uses gets a public name, so the underscore tells whoever changes a module that no other
module calls it. Ruff's PLC2701 does not see imports within one package, hence this scan.
Run it alone with `python -m pytest tests/unit/test_layout.py`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Where the product's and the tools' modules live, each with the folder its dotted names start in.
SOURCES = {
    "include": ROOT / "include",
    "tools": ROOT / "tools",
}
# The top-level packages whose private names are checked (an outside library's are its own concern).
PACKAGES = ("era5etl", "localcds", "era5bench")


@dataclass(frozen=True)
class Use:
    """One use of another module's private name."""

    path: Path
    line: int
    module: str
    name: str

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}: {self.module}.{self.name}"


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def module_name(path: Path, base: Path) -> str:
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(base: Path) -> Iterator[tuple[Path, str]]:
    for package in PACKAGES:
        folder = base / package
        if folder.is_dir():
            for path in sorted(folder.rglob("*.py")):
                yield path, module_name(path, base)


def known_modules() -> set[str]:
    return {name for base in SOURCES.values() for _, name in modules(base)}


def ours(module: str) -> bool:
    return module.split(".")[0] in PACKAGES


def absolute(node: ast.ImportFrom, here: str, is_package: bool) -> str:
    """The dotted module a `from ... import` reads from, relative imports resolved."""
    if not node.level:
        return node.module or ""
    parts = here.split(".")
    package = parts if is_package else parts[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def dotted(node: ast.expr) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"]; None for anything but names and attributes."""
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    names.append(node.id)
    return names[::-1]


def private_uses(path: Path, here: str, known: set[str]) -> Iterator[Use]:
    """Every `from X import _name` and `X._name` in one file where X is another of our modules."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    aliases: dict[str, str] = {}  # a local name -> the module of ours it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom):
            source = absolute(node, here, is_package)
            for alias in node.names:
                if f"{source}.{alias.name}" in known:
                    aliases[alias.asname or alias.name] = f"{source}.{alias.name}"
                if ours(source) and source != here and is_private(alias.name):
                    yield Use(path, node.lineno, source, alias.name)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and is_private(node.attr)):
            continue
        chain = dotted(node.value)
        if not chain or chain[0] not in aliases:
            continue
        target = ".".join([aliases[chain[0]], *chain[1:]])
        if target in known and target != here and ours(target):
            yield Use(path, node.lineno, target, node.attr)


def scan(base: Path, known: set[str]) -> list[Use]:
    return [use for path, here in modules(base) for use in private_uses(path, here, known)]


def scan_tests(known: set[str]) -> list[Use]:
    tests = ROOT / "tests"
    return [
        use
        for path in sorted(tests.rglob("*.py"))
        for use in private_uses(path, module_name(path, ROOT), known)
    ]


def report(uses: list[Use]) -> str:
    lines = "\n".join(f"  {use}" for use in uses)
    return f"{len(uses)} use(s) of another module's private name; give the name a public one:\n{lines}"


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_no_private_name_crosses_modules(source: str) -> None:
    uses = scan(SOURCES[source], known_modules())
    assert not uses, report(uses)


def test_tests_use_public_names() -> None:
    uses = scan_tests(known_modules())
    assert not uses, report(uses)


def test_the_scan_finds_each_kind_of_use(tmp_path: Path) -> None:
    """The check can fail: a module that reaches into another's private names is reported."""
    package = tmp_path / "era5etl"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "a.py").write_text("_hidden = 1\nshown = 2\n__all__ = ['shown']\n")
    (package / "sub" / "b.py").write_text(
        "from era5etl.sub.a import _hidden, shown, __all__\n"
        "from . import a\n"
        "from .a import _hidden as again\n"
        "import era5etl.sub.a\n"
        "import era5etl.sub.a as alias\n"
        "x = a._hidden + era5etl.sub.a._hidden + alias._hidden + a.shown\n"
        "def _own():\n    return _own\n"
    )
    known = {name for _, name in modules(tmp_path)}
    found = sorted((use.line, use.module, use.name) for use in scan(tmp_path, known))
    assert found == [
        (1, "era5etl.sub.a", "_hidden"),
        (3, "era5etl.sub.a", "_hidden"),
        (6, "era5etl.sub.a", "_hidden"),
        (6, "era5etl.sub.a", "_hidden"),
        (6, "era5etl.sub.a", "_hidden"),
    ]


# A function a reader can hold at once: the longest in include/ is split into named steps past this.
MAX_FUNCTION_LINES = 80


def long_functions(base: Path, most: int = MAX_FUNCTION_LINES) -> list[str]:
    """Every function (methods and nested ones too) longer than ``most`` lines, docstring included."""
    found = []
    for path, _ in modules(base):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > most:
                    found.append(f"{path.relative_to(base)}:{node.lineno}: {node.name} ({lines} lines)")
    return found


def test_no_function_in_the_product_is_over_80_lines() -> None:
    found = long_functions(SOURCES["include"])
    assert not found, f"split into named steps (at most {MAX_FUNCTION_LINES} lines each):\n  " + "\n  ".join(found)


def test_the_length_check_counts_a_functions_lines(tmp_path: Path) -> None:
    (tmp_path / "era5etl").mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(80))
    (tmp_path / "era5etl" / "long.py").write_text(f"def long():\n{body}\n\ndef short():\n    return 1\n")
    assert long_functions(tmp_path) == ["era5etl/long.py:1: long (81 lines)"]
    assert long_functions(tmp_path, most=81) == []


# Packages whose every module has a test file named after it, so whoever changes `load/writer.py`
# finds its tests in `tests/unit/load/test_writer.py` or `tests/integration/load/test_writer.py`.
MIRRORED = ("load", "stage", "fetch", "read")
# A package's `__init__.py` only re-exports; its names are tested where they are defined.
UNTESTED = {"__init__"}
# Test folders beside tests/{unit,integration}/<package> that also hold a package's tests: the climate
# reads share one table loaded once for the folder (tests/integration/climate/conftest.py).
ALSO_IN = {"read": ("climate",)}


def untested_modules(include: Path, tests: Path, packages: tuple[str, ...] = MIRRORED) -> list[str]:
    """Each module of ``packages`` with no ``test_<module>.py`` in unit/<package> or integration/<package>."""
    missing = []
    for package in packages:
        for path in sorted((include / "era5etl" / package).glob("*.py")):
            if path.stem in UNTESTED:
                continue
            name = f"test_{path.stem}.py"
            folders = [tests / kind / package for kind in ("unit", "integration")]
            folders += [tests / "integration" / other for other in ALSO_IN.get(package, ())]
            if not any((folder / name).is_file() for folder in folders):
                missing.append(f"era5etl/{package}/{path.name}")
    return missing


@pytest.mark.parametrize("package", MIRRORED)
def test_each_module_has_a_test_file_named_after_it(package: str) -> None:
    missing = untested_modules(SOURCES["include"], ROOT / "tests", (package,))
    assert not missing, "add tests/{unit,integration}/<package>/test_<module>.py for:\n  " + "\n  ".join(missing)


def test_the_mirror_check_finds_a_module_without_tests(tmp_path: Path) -> None:
    source = tmp_path / "include" / "era5etl" / "load"
    source.mkdir(parents=True)
    for name in ("__init__.py", "writer.py", "loader.py", "locks.py"):
        (source / name).write_text("")
    for kind, name in (("unit", "test_writer.py"), ("integration", "test_loader.py"), ("unit", "test_lock.py")):
        (tmp_path / "tests" / kind / "load").mkdir(parents=True, exist_ok=True)
        (tmp_path / "tests" / kind / "load" / name).write_text("")
    assert untested_modules(tmp_path / "include", tmp_path / "tests", ("load",)) == ["era5etl/load/locks.py"]



# The data's path, read from the imports: no module may import, directly or through others, a module
# that imports it back (a circle makes every module of it load, and change, with the rest). Every
# import counts: at the top, inside functions and under TYPE_CHECKING.
def imports_of(path: Path, here: str, known: set[str]) -> set[str]:
    """The modules of ours that one file imports (``from a import b`` counts ``a.b`` when it is a module)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = absolute(node, here, is_package)
            found.update(f"{source}.{a.name}" if f"{source}.{a.name}" in known else source for a in node.names)
    return {name for name in found if name in known and name != here}


def import_graph(base: Path) -> dict[str, set[str]]:
    found = list(modules(base))
    known = {name for _, name in found}
    return {here: imports_of(path, here, known) for path, here in found}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circle_in_the_product() -> None:
    found = circles(import_graph(SOURCES["include"]))
    assert not found, "import circles (break each by moving what both sides share down the path):\n  " + "\n  ".join(
        " <-> ".join(c) for c in found)


def test_the_circle_check_finds_a_circle(tmp_path: Path) -> None:
    package = tmp_path / "era5etl"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from era5etl import b\n")
    (package / "b.py").write_text("def f():\n    from era5etl.c import x\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from era5etl.a import y\n")
    (package / "d.py").write_text("import era5etl.a\n")
    assert circles(import_graph(tmp_path)) == [["era5etl.a", "era5etl.b", "era5etl.c"]]
    (package / "c.py").write_text("x = 1\n")
    assert circles(import_graph(tmp_path)) == []


# The stages in the order the data flows (the tree design.md draws): a stage imports only stages before
# it. Load writes what read reads; load importing read would tie the writer to the readers' choices.
def test_load_imports_nothing_from_read() -> None:
    graph = import_graph(SOURCES["include"])
    wrong = sorted(f"{m} -> {d}" for m, ds in graph.items() if m.startswith("era5etl.load")
                   for d in ds if d.startswith("era5etl.read"))
    assert not wrong, "load imports read:\n  " + "\n  ".join(wrong)


# An import inside a function hides a dependency from whoever reads the module's top, and often a
# circle. Where one is meant (a heavy library loaded only by the function that needs it, the CLI's
# start-up, Airflow's DAG parsing), a comment says why: on the import's line, the line above it, or
# once for the module in a line starting with this marker.
LAZY_MARKER = "# Imports inside functions: "


def unexplained_inner_imports(base: Path) -> list[str]:
    found = []
    for path, _ in modules(base):
        text = path.read_text()
        lines = text.splitlines()
        if any(line.startswith(LAZY_MARKER) and len(line) > len(LAZY_MARKER) + 10 for line in lines):
            continue
        for node in ast.walk(ast.parse(text, filename=str(path))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for inner in ast.walk(node):
                if not isinstance(inner, ast.Import | ast.ImportFrom):
                    continue
                line = lines[inner.lineno - 1]
                above = lines[inner.lineno - 2].strip() if inner.lineno > 1 else ""
                if "#" not in line and not above.startswith("#"):
                    found.append(f"{path.relative_to(base)}:{inner.lineno}: {line.strip()}")
    return found


def test_every_import_inside_a_function_says_why() -> None:
    found = unexplained_inner_imports(SOURCES["include"])
    assert not found, ("move these imports to the module's top, or say why they are inside a function "
                       f"(a comment, or {LAZY_MARKER!r} for the module):\n  " + "\n  ".join(found))


def test_the_inner_import_check_finds_one_without_a_reason(tmp_path: Path) -> None:
    (tmp_path / "era5etl").mkdir()
    (tmp_path / "era5etl" / "a.py").write_text(
        "def f():\n    import json\n    # pandas is heavy\n    import pandas\n    import os  # only here\n")
    (tmp_path / "era5etl" / "b.py").write_text(LAZY_MARKER + "the CLI's start-up time.\ndef f():\n    import json\n")
    assert unexplained_inner_imports(tmp_path) == ["era5etl/a.py:2: import json"]


# A connection or cursor typed `Any` lets any call through unchecked; psycopg's types say what a
# function may do with it. The Airflow adapter's `conn` is Airflow's Connection, named apart.
UNTYPED_ALLOWED = ("era5etl/airflow/",)


def untyped_connections(base: Path) -> list[str]:
    """Every parameter named conn or cur annotated ``Any``, outside :data:`UNTYPED_ALLOWED`."""
    found = []
    for path, _ in modules(base):
        where = path.relative_to(base).as_posix()
        if where.startswith(UNTYPED_ALLOWED):
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.arg) and node.arg in ("conn", "cur") and isinstance(node.annotation, ast.Name) \
                    and node.annotation.id == "Any":
                found.append(f"{where}:{node.lineno}: {node.arg}: Any")
    return found


def test_connections_are_typed() -> None:
    found = untyped_connections(SOURCES["include"])
    assert not found, "type these as psycopg.Connection[...] or psycopg.Cursor[...]:\n  " + "\n  ".join(found)


def test_the_typing_check_finds_an_untyped_connection(tmp_path: Path) -> None:
    (tmp_path / "era5etl" / "airflow").mkdir(parents=True)
    (tmp_path / "era5etl" / "read.py").write_text("from typing import Any\ndef f(conn: Any, cur: int, x: Any): ...\n")
    (tmp_path / "era5etl" / "airflow" / "hooks.py").write_text("def f(conn: Any): ...\n")
    assert untyped_connections(tmp_path) == ["era5etl/read.py:2: conn: Any"]
