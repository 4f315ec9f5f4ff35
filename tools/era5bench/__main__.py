"""``python -m era5bench``: the benchmark's command line (README, "Measured here")."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from era5bench.cli import build_parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
