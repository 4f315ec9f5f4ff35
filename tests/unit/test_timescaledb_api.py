"""TimescaleDB's current public API only: the compression names deprecated in 2.18 (replaced by the
hypercore/columnstore ones) appear nowhere in the product, its SQL, its tools or its tests, and an
internal schema is used only where a comment beside it says why no public API does the job."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Deprecated in TimescaleDB 2.18 (docs: "ALTER TABLE (Compression)", compress_chunk(), ...), each with
# what replaced it.
DEPRECATED = {
    r"timescaledb\.compress\b": "timescaledb.enable_columnstore",
    r"timescaledb\.compress_segmentby": "timescaledb.segmentby",
    r"timescaledb\.compress_orderby": "timescaledb.orderby",
    r"\bcompress_chunk\s*\(": "convert_to_columnstore",
    r"\bdecompress_chunk\s*\(": "convert_to_rowstore",
    r"\badd_compression_policy\b": "add_columnstore_policy",
    r"\bremove_compression_policy\b": "remove_columnstore_policy",
    r"\bhypertable_compression_stats\b": "hypertable_columnstore_stats",
    r"\bchunk_compression_stats\b": "chunk_columnstore_stats",
    r"timescaledb_information\.compression_settings": "timescaledb_information.hypertable_columnstore_settings",
}
INTERNAL = re.compile(r"_timescaledb_(catalog|functions|internal)\.")
WHERE = ("include", "sql", "tools", "dags", "plugins", "tests", "scripts")
THIS = Path(__file__).resolve()


def _sources() -> list[Path]:
    return sorted(p for d in WHERE if (ROOT / d).exists() for p in (ROOT / d).rglob("*")
                  if p.suffix in (".py", ".sql", ".sh") and p.resolve() != THIS and "node_modules" not in p.parts)


def test_no_deprecated_compression_api_name_is_left() -> None:
    found = []
    for path in _sources():
        for n, line in enumerate(path.read_text().splitlines(), 1):
            for pattern, instead in DEPRECATED.items():
                if re.search(pattern, line):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()} (use {instead})")
    assert found == []


def test_an_internal_timescaledb_schema_is_used_only_with_the_reason_beside_it() -> None:
    unexplained = []
    for path in _sources():
        lines = path.read_text().splitlines()
        for n, line in enumerate(lines):
            if INTERNAL.search(line) and not line.lstrip().startswith(("#", "--")):
                context = " ".join(lines[max(0, n - 4):n + 1])
                if "Internal, and the only way" not in context:
                    unexplained.append(f"{path.relative_to(ROOT)}:{n + 1}: {line.strip()}")
    assert unexplained == []


def test_the_check_finds_a_deprecated_name() -> None:
    line = "ALTER TABLE t SET (timescaledb.compress, timescaledb.compress_orderby = 'time')"
    found = [p for p in DEPRECATED if re.search(p, line)]
    assert found == [r"timescaledb\.compress\b", r"timescaledb\.compress_orderby"]
    assert not [p for p in DEPRECATED if re.search(p, "ALTER TABLE t SET (timescaledb.enable_columnstore = true)")]
