"""``python -m era5bench.landload PATH TABLE``: what ``era5etl load-file`` does, for an ERA5-Land file
(``open_download(dataset=LAND)``, the loader, the finishing), printing load-file's JSON summary keys
the bench reads. For ``python -m era5bench load-file --shapes land-global-day`` until load-file itself
takes a dataset."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    import numpy as np

    from era5etl import settings
    from era5etl.core.datasets import LAND
    from era5etl.core.months import Month
    from era5etl.core.variables import load_variables
    from era5etl.db import database_url, ensure_schema, rollup_tables
    from era5etl.db.columns import ensure_columns
    from era5etl.load import columnstore, load
    from era5etl.load.columnstore import finish, span_bytes
    from era5etl.stage import open_download

    path, table = Path(argv[0]), argv[1]
    url = database_url()
    with open_download([path], dataset=LAND) as staged:
        ensure_schema(url, table)
        ensure_columns(url, table, load_variables(staged.variables, LAND))
        began = time.perf_counter()
        result = load(url, table, staged)
        months = [Month.parse(str(m)) for m in np.unique(staged.valid_time.astype("datetime64[M]"))]
        t_finish = time.perf_counter()
        finish(url, table, months[0].start, months[-1].end, columnstore.mode_from_env(), measure=False)
        finish_seconds = time.perf_counter() - t_finish
        stored = span_bytes(url, table, months[0].start, months[-1].end)
        rollup_bytes = sum(span_bytes(url, name, months[0].start, months[-1].end)
                           for name in rollup_tables(table).values()) if settings.load().rollups else 0
        print(json.dumps({
            "rows": result.rows, "seconds": round(result.seconds, 3), "bytes": stored,
            "finish_seconds": round(finish_seconds, 3), "land_points": staged.points,
            "stage_and_load_s": round(time.perf_counter() - began, 3),
            "rollups": {"daily_rows": result.daily_rows, "monthly_rows": result.monthly_rows,
                        "seconds": result.rollup_seconds, "bytes": rollup_bytes} if result.rollup_seconds else None,
        }))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
