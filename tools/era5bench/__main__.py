"""``python -m era5bench``: the benchmark's command line (docs/benchmarks.md)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from era5bench.cli import build_parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["airflow-overhead"]:  # a command of its own: a backfill on a running Airflow
        from era5bench import airflow_overhead

        logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        return airflow_overhead.main(argv[1:])
    if argv[:1] == ["api-call"]:  # a warm call of the Python API beside its SQL
        from era5bench import api_call

        return api_call.main(argv[1:])
    if argv[:1] == ["atlas"]:  # the atlas on a global table of monthly means with a planted climate
        from era5bench import atlas

        return atlas.main(argv[1:])
    if argv[:1] == ["backup-drill"]:  # pgBackRest's full and incremental backups and a point-in-time restore
        from era5bench import backup

        return backup.main(argv[1:])
    if argv[:1] == ["backfill"]:  # a backfill through the one-command stack, as a user runs it
        from era5bench import backfill

        return backfill.main(argv[1:])
    if argv[:1] == ["cold-climate"]:  # climate --place in a new process each time, as a user starts it
        from era5bench import cold

        return cold.main(argv[1:])
    if argv[:1] == ["daily-chunks"]:  # a place's daily series from the daily rollup in yearly and decade chunks
        from era5bench import daily_chunks

        return daily_chunks.main(argv[1:])
    if argv[:1] == ["load-file"]:  # the product's load-file on a global day and on decades, timed
        from era5bench import loadfile

        return loadfile.main(argv[1:])
    if argv[:1] == ["place"]:  # a place at global breadth in each layout, and the global projection
        from era5bench import place

        return place.main(argv[1:])
    if argv[:1] == ["region"]:  # series --region Chile on a loaded table of its box
        from era5bench import region

        return region.main(argv[1:])
    if argv[:1] == ["relayout"]:  # table relayout on the 441-point area, killed mid-way and run again
        from era5bench import relayout

        return relayout.main(argv[1:])
    if argv[:1] == ["stage"]:  # the stager alone, both formats, no database
        from era5bench import stager

        return stager.main(argv[1:])
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
