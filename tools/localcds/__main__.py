"""``python -m localcds``: run the local CDS in the foreground for the real ``cdsapi`` client.

It prints the two settings a client needs, ``CDSAPI_URL`` and ``CDSAPI_KEY``; the key it accepts is
``--key`` (default ``era5etl-local-key``), any other is refused as the real service refuses it.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from localcds.server import DEFAULT_KEY, serve


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m localcds", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=8765, help="port to listen on (default 8765)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--key", default=DEFAULT_KEY,
                        help=f"the API key the server accepts, CDSAPI_KEY for clients (default {DEFAULT_KEY})")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="where jobs' files are written (default: a temporary folder, removed on exit)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    serve(args.port, host=args.host, key=args.key, workdir=args.workdir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
