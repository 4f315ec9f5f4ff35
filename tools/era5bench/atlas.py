"""``python -m era5bench atlas``: the atlas on a global table of monthly means of 2 m temperature made
by the local CDS (its planted climate, ``localcds.synth.climate``) and loaded by the product's own
``load-file`` (docs/atlas.md, docs/benchmarks.md).

Times, warm and in one process, the median of ``--runs``: every point's yearly values
(``read.yearly.yearly_field``: one statement grouped by point and year), the ranking of the points
(``read.atlas.atlas_answer``, the top 20), the ranking of the gazetteer's cities, the ranking of the
countries (the first call apart: it weighs the countries the database does not keep yet), and the trend
map's PNG; and prints the recovered figures beside the planted ones. ``--step`` sets the lattice: 0.25 is
the issue's global table (1,038,240 points; 1940-2024 is 1,059,004,800 rows), coarser lattices fit a
test or a quick run.
"""

# Imports inside functions: the product and the local CDS load after the arguments are parsed.

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from era5bench.common import log, timed
from era5bench.downloads import CACHE_DIR
from era5bench.loadfile import run

NOW = datetime(2025, 2, 1, tzinfo=UTC)  # every month of 2024 published


def _download(step: str, years: tuple[int, int]) -> tuple[Path, float]:
    from localcds.synth import FIELDS_VERSION, write_download
    from localcds.synth.monthly import MONTHLY_DATASET

    path = CACHE_DIR / f"atlas-global-{step}-{years[0]}-{years[1]}-v{FIELDS_VERSION}.nc"
    if path.exists():
        return path, 0.0
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    request = {"product_type": ["monthly_averaged_reanalysis"], "variable": ["2m_temperature"],
               "year": [str(y) for y in range(years[0], years[1] + 1)], "month": [f"{m:02d}" for m in range(1, 13)],
               "time": ["00:00"], "grid": [step, step], "data_format": "netcdf", "download_format": "unarchived"}
    began = time.perf_counter()
    partial = path.with_suffix(".part")
    write_download(request, partial, seed=0, now=NOW, dataset=MONTHLY_DATASET)
    partial.rename(path)
    return path, time.perf_counter() - began


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m era5bench atlas",
                                description="the atlas on a global table of monthly means with a planted climate")
    p.add_argument("--step", default="2.5", help="the lattice's step in degrees (default 2.5; 0.25 is ERA5's)")
    p.add_argument("--years", default="1979-2021", help="the years, Y1-Y2 (default 1979-2021, Rantanen et al.'s)")
    p.add_argument("--table", default=None, help="the table (default bench_atlas_<step>)")
    p.add_argument("--runs", type=int, default=3, help="warm runs of each step (default 3)")
    p.add_argument("--reload", action="store_true", help="load the table again even if it is there")
    p.add_argument("--json", action="store_true", help="end with one JSON object")
    p.add_argument("--compare-reads", action="store_true",
                   help="also every variable's yearly values read together against one variable a statement, "
                        "alternated")
    args = p.parse_args(argv)
    from era5etl.db import connect, database_url
    from era5etl.read.atlas import atlas_answer, trend_map
    from era5etl.read.atlas_place import place_changes
    from era5etl.read.atlas_plot import plot_trend_map
    from era5etl.read.places import gazetteer
    from era5etl.read.where import where
    from era5etl.read.yearly import yearly_field
    from localcds.synth.climate import ARCTIC_TREND, GLOBAL_TREND

    first, _, last = args.years.partition("-")
    years = (int(first), int(last or first))
    table = args.table or f"bench_atlas_{args.step.replace('.', '_')}"
    url = database_url()
    out: dict[str, Any] = {"step": args.step, "years": list(years), "table": table}
    with connect(url) as conn:
        have = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()
    if args.reload or not (have and have[0]):
        path, made_s = _download(args.step, years)
        out["synth_s"] = round(made_s, 1)
        out["load"] = run(path, table)
        log(f"bench: {table}: {out['load']['rows']:,} rows in {out['load']['wall_s']} s")
    gazetteer()  # the cities' index parsed once, as a warm server holds it
    with connect(url) as conn:
        median, runs, field = timed(lambda: yearly_field(conn, table, "temperature_2m", *years), args.runs)
    out["points"] = int(field.location_id.size)
    out["yearly_values"] = {"median_ms": round(median, 1), "runs_ms": [round(t, 1) for t in runs]}
    median, runs, data = timed(lambda: atlas_answer(field, top=20), args.runs)
    out["rank_points"] = {"median_ms": round(median, 1), "runs_ms": [round(t, 1) for t in runs]}
    median, runs, cities = timed(lambda: atlas_answer(field, by="city", top=20), args.runs)
    out["rank_cities"] = {"median_ms": round(median, 1), "runs_ms": [round(t, 1) for t in runs],
                          "cities": cities["units"]}
    with connect(url) as conn:
        began = time.perf_counter()
        countries = atlas_answer(field, by="country", top=20, conn=conn)
        first_ms = (time.perf_counter() - began) * 1000
        median, runs, countries = timed(lambda: atlas_answer(field, by="country", top=20, conn=conn), args.runs)
    out["rank_countries"] = {"median_ms": round(median, 1), "runs_ms": [round(t, 1) for t in runs],
                             "first_ms": round(first_ms, 1), "countries": countries["units"]}
    jakarta = where(None, None, "Jakarta", None)
    assert jakarta is not None  # a place by name
    with connect(url) as conn:
        median, runs, _ = timed(lambda: place_changes(conn, table, jakarta), args.runs)
        out["place_changes"] = {"median_ms": round(median, 1), "runs_ms": [round(t, 1) for t in runs]}
        if args.compare_reads:
            out["reads"] = _compare_reads(conn, table, args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "trend.png"
        median, runs, _ = timed(lambda: plot_trend_map(trend_map(field), "trend", target), args.runs)
    out["png"] = {"median_ms": round(median, 1), "runs_ms": [round(t, 1) for t in runs]}
    zonal = data["zonal"]
    out["recovered"] = {"global": zonal["global"]["mean"], "arctic": zonal["arctic"]["mean"],
                        "ratio": zonal.get("arctic_amplification"),
                        "planted": {"global": GLOBAL_TREND, "arctic": ARCTIC_TREND,
                                    "ratio": ARCTIC_TREND / GLOBAL_TREND},
                        "top": [(r["grid_point"]["latitude"], r["grid_point"]["longitude"],
                                 round(r["trend_per_decade"]["ols"], 3)) for r in data["ranking"][:5]]}
    if args.json:
        print(json.dumps(out))
        return 0
    if "load" in out:
        print(f"made by the local CDS in {out['synth_s']} s; load-file {out['load']['rows']:,} rows in "
              f"{out['load']['wall_s']} s")
    r = out["recovered"]
    print(f"{table}: {out['points']:,} points, {years[0]}-{years[1]}")
    print(f"recovered: global {r['global']:+.4f}, Arctic {r['arctic']:+.4f} degC/decade, ratio {r['ratio']:.3f} "
          f"(planted {GLOBAL_TREND}, {ARCTIC_TREND}, {ARCTIC_TREND / GLOBAL_TREND:.3f}); top 5 {r['top']}")
    for key, what in (("yearly_values", "every point's yearly values"), ("rank_points", "rank the points (top 20)"),
                      ("rank_cities", f"rank the {out['rank_cities']['cities']:,} cities (top 20)"),
                      ("rank_countries", f"rank the {out['rank_countries']['countries']:,} countries (top 20; the "
                                         f"first call {out['rank_countries']['first_ms']} ms)"),
                      ("place_changes", "Jakarta's whole 'what kind of change' (atlas --place)"),
                      ("png", "the trend map as PNG")):
        print(f"{what}: median {out[key]['median_ms']} ms of {args.runs} warm runs {out[key]['runs_ms']}")
    if "reads" in out:
        r = out["reads"]
        print(f"every variable's yearly values ({', '.join(r['variables'])}): together median {r['together_ms']} ms "
              f"{r['together_runs']}, one variable a statement {r['alone_ms']} ms {r['alone_runs']}, ratio "
              f"{r['ratio']}")
    return 0


def _compare_reads(conn: Any, table: str, runs: int) -> dict[str, Any]:
    """``read.yearly.yearly_fields`` of every variable against ``yearly_field`` one at a time, alternated."""
    from era5etl.read.errors import ReadError
    from era5etl.read.yearly import atlas_variables, yearly_field, yearly_fields

    names = atlas_variables(conn, table)

    def alone() -> None:
        for name in names:
            with contextlib.suppress(ReadError):  # a column with no complete year: read all the same
                yearly_field(conn, table, name)

    together_runs, alone_runs = [], []
    for _ in range(runs):
        began = time.perf_counter()
        yearly_fields(conn, table, names)
        together_runs.append((time.perf_counter() - began) * 1000)
        began = time.perf_counter()
        alone()
        alone_runs.append((time.perf_counter() - began) * 1000)
    together, single = sorted(together_runs)[runs // 2], sorted(alone_runs)[runs // 2]
    return {"variables": names, "together_ms": round(together, 1), "alone_ms": round(single, 1),
            "together_runs": [round(t) for t in together_runs], "alone_runs": [round(t) for t in alone_runs],
            "ratio": round(single / together, 2)}
