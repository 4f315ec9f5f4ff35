"""What a load reports (load.results): rates that never divide by zero, each chunk's record as the CLI
prints it, and the load's error on the "something failed" branch of the error tree (exit 1)."""

from __future__ import annotations

import json

from era5etl.core.errors import BadInput, Failure
from era5etl.load.errors import LoadError
from era5etl.load.results import ChunkResult, LoadResult


def test_rates_are_rows_a_second_and_zero_for_no_time() -> None:
    assert ChunkResult("2024-01-01", rows=1000, deleted=0, bytes=1, seconds=4.0).rows_per_s == 250.0
    assert ChunkResult("2024-01-01", rows=1000, deleted=0, bytes=1, seconds=0.0).rows_per_s == 0.0
    assert LoadResult(rows=30, seconds=0.5).rows_per_s == 60.0
    assert LoadResult().rows_per_s == 0.0


def test_each_chunks_record_holds_its_fields_and_a_rounded_rate() -> None:
    chunk = ChunkResult("2024-01-01T00:00:00+00:00", rows=7, deleted=2, bytes=300, seconds=3.0,
                        replaced="delete", rollup_rows=1)
    (record,) = LoadResult(rows=7, chunks=[chunk]).chunk_rates()
    assert record["rows_per_s"] == 2  # 7 / 3 rounded
    assert (record["start"], record["deleted"], record["replaced"], record["rollup_rows"]) == \
        ("2024-01-01T00:00:00+00:00", 2, "delete", 1)
    json.dumps(record)  # the CLI prints it as JSON


def test_a_load_error_is_a_failure_not_bad_input() -> None:
    err = LoadError("chunk 2024-01-01: connection lost")
    assert isinstance(err, Failure) and isinstance(err, RuntimeError)
    assert not isinstance(err, BadInput)
