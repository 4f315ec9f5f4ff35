"""The bench's arithmetic and CLI wiring, without a database."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from era5bench.cli import build_parser, cmd_bench
from era5bench.downloads import region_area
from era5bench.methods import BY_NAME, worker_ranges
from era5bench.report import DEFAULT_CHART
from era5bench.rows import Rows
from era5bench.sustained import tenths


def test_tenths_of_a_steady_load_are_equal_and_interpolated_between_points() -> None:
    # 1000 rows at 100 rows/s, measured every 30 rows: tenth boundaries fall between points.
    points = [(r, r / 100) for r in range(0, 1000, 30)] + [(1000, 10.0)]
    out = tenths(points, 1000)
    assert [t["tenth"] for t in out] == list(range(1, 11))
    assert all(t["rows_per_s"] == 100 for t in out)
    assert out[-1]["end_s"] == 10.0


def test_a_slower_last_tenth_shows_in_its_rate() -> None:
    # 900 rows in 9 s, then the last 100 rows take 2 s, the final commit adding no rows.
    points = [(0, 0.0), (900, 9.0), (1000, 10.5), (1000, 11.0)]
    out = tenths(points, 1000)
    assert out[0]["rows_per_s"] == 100
    assert out[-1]["rows_per_s"] == 50


def _rows(times: list[str]) -> Rows:
    n = len(times)
    return Rows(np.array(times, dtype="datetime64[us]"), np.arange(n, dtype=np.int32),
                np.zeros(n, np.float32), np.zeros(n, np.float32), {"temperature_2m": np.zeros(n, np.float32)})


def test_parallel_workers_get_whole_days_when_there_are_enough() -> None:
    rows = _rows(["2020-01-01T00", "2020-01-01T05", "2020-01-02T00", "2020-01-03T00", "2020-01-03T23"])
    assert rows.day_ranges() == [(0, 2), (2, 3), (3, 5)]
    assert worker_ranges(rows, 2) == [(0, 3), (3, 5)]
    # Fewer days than workers: rows are split evenly instead, nobody idles.
    one_day = _rows(["2020-01-01T00"] * 4)
    assert worker_ranges(one_day, 2) == [(0, 2), (2, 4)]


def test_region_area_holds_about_the_rows_asked_for() -> None:
    north, west, south, east = region_area(200_000, 4)
    points = (round((north - south) / 0.25) + 1) * (round((east - west) / 0.25) + 1)
    assert abs(points * 24 * 4 - 200_000) / 200_000 < 0.05


def _parser() -> argparse.ArgumentParser:
    return build_parser()


def test_the_parser_runs_bench_with_its_defaults() -> None:
    args = _parser().parse_args([])
    assert args.func is cmd_bench
    assert args.rows == 200_000 and args.repeat == 3 and args.batch_sizes == [1000, 10_000, 100_000]
    assert args.methods == list(BY_NAME) and args.tables == ["plain", "hypertable"]
    assert args.sustained is None and args.chart == DEFAULT_CHART

    args = _parser().parse_args(["--methods", "none", "--sustained", "100_000_000", "--batch-sizes",
                                 "500,5000", "--tables", "hypertable", "--json"])
    assert args.methods == [] and args.sustained == 100_000_000 and args.batch_sizes == [500, 5000]
    assert args.tables == ["hypertable"] and args.json


@pytest.mark.parametrize("argv", [["--methods", "copy"], ["--batch-sizes", "0"], ["--tables", "both"]])
def test_bad_arguments_are_refused(argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        _parser().parse_args(argv)
