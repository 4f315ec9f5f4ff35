"""``load-file``: files as the CDS delivered them, loaded without a CDS (the pipeline's stage and load)."""

# Imports inside functions: `era5etl --help` and each command load only what that command runs (start-
# up time).

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from era5etl import settings
from era5etl.cli.common import emit, table_arg
from era5etl.cli.progress import month_display
from era5etl.core.datasets import FILE_DATASETS, LAND, SINGLE_LEVELS, Dataset, by_name
from era5etl.core.errors import InputError
from era5etl.core.months import Month
from era5etl.db import database_url, discard_new, ensure_schema, rollup_tables

if TYPE_CHECKING:
    from era5etl.load import LoadResult
    from era5etl.load.columnstore import Compression
    from era5etl.stage import StagedDownload


def add_parsers(sub: Any) -> None:
    lf = sub.add_parser("load-file", help="load NetCDF/ZIP files as the CDS delivered them")
    lf.add_argument("paths", nargs="+", help="the files of one download (.nc, or a ZIP even when named .nc)")
    lf.add_argument("--table", type=table_arg,
                    help="hypertable name (default ERA5_TABLE, else weather, or weather_<dataset> for another "
                         "dataset; created if missing; an existing table must be one the pipeline made)")
    lf.add_argument("--dataset", choices=sorted(FILE_DATASETS),
                    help="what the files are (default: what they show - a level dimension or isobaric GRIB "
                         "messages are pressure-levels, a 0.1 degree grid or GRIB class l5 is land, monthly "
                         "step types or streams moda/mnth are the monthly means - else ERA5_DATASET); a file "
                         "that contradicts it is refused")
    lf.add_argument("--json", action="store_true", help="end with one JSON object of the figures")
    lf.set_defaults(func=cmd_load_file)


def file_dataset(paths: list[Path], asked: str | None) -> Dataset:
    """The dataset of the files: the one asked for, checked against what the files show; else what
    they show; else ERA5_DATASET. Files that contradict the dataset asked for are refused here, before
    anything is written (the stager refuses what this look at the headers cannot tell)."""
    from era5etl.stage.detect import detect_dataset

    shown = detect_dataset(paths)
    if asked is None:
        return shown or by_name(settings.load().dataset)
    dataset = by_name(asked, FILE_DATASETS)
    # Monthly means in a layout that names no stream (the old CDS's netCDF3) show only their grid:
    # ERA5-Land's monthly means are on its grid, the single-level ones on ERA5's.
    if shown is LAND and dataset.land_only and dataset.monthly:
        shown = dataset
    if shown is not None and shown is not dataset:
        why = ("monthly means' step types or streams" if shown.monthly
               else "ERA5-Land's 0.1 degree grid or MARS class l5" if shown.land_only
               else "a level dimension or isobaric messages")
        raise InputError(f"{', '.join(map(str, paths))}: the files are {shown.name} ({shown.collection}: {why}), "
                         f"not {dataset.name}; use --dataset {shown.name}")
    if shown is None and dataset.has_levels:
        raise InputError(f"{', '.join(map(str, paths))}: the files have no pressure levels, so they are not "
                         f"{dataset.name}; leave --dataset out or name the dataset they are")
    return dataset


def cmd_load_file(args: argparse.Namespace) -> int:
    import numpy as np

    from era5etl.core.variables import CATALOGUE, load_variables
    from era5etl.db.columns import ensure_columns
    from era5etl.load import load
    from era5etl.stage import open_download

    paths = [Path(p) for p in args.paths]
    for p in paths:
        if not p.exists():
            raise InputError(f"{p}: no such file")
    dataset = file_dataset(paths, args.dataset)
    table = args.table or settings.table_for(dataset.name)
    url = database_url()
    catalogue = CATALOGUE if dataset is SINGLE_LEVELS else dataset.catalogue
    base = tuple(v.column for v in dataset.base_variables)
    # Every catalogued variable the files hold is loaded; a column the table lacks is added.
    with open_download(paths, variables=catalogue, dataset=dataset) as staged:
        missing = [c for c in staged.missing_columns if c in base]  # of the table's own columns: left NULL
        if not args.json:
            _tell_staged(staged, dataset, missing)
        created = ensure_schema(url, table, dataset=dataset, created_by="load-file", points=staged.points)
        try:
            added = ensure_columns(url, table, load_variables(staged.variables, dataset))
            if added and not args.json:
                print(f"table {table}: added column(s) {', '.join(added)}")
            with month_display(staged.rows, enabled=None if not args.json else False) as shown:
                shown.on_step("load", "start")
                result = load(url, table, staged, on_chunk=shown.on_chunk, dataset=dataset)
                shown.on_step("load", "done")
        except BaseException:
            if created:  # the table's first load failed: nothing of it is left behind
                _discard(url, table)
            raise
        months = [Month.parse(str(m)) for m in np.unique(staged.valid_time.astype("datetime64[M]"))]
        packed, finish_seconds, stored, rollup_bytes = _finish_span(url, table, dataset, months)
        download_bytes = sum(path.stat().st_size for path in paths)
        summary = {
            "rows": result.rows,
            "deleted": result.deleted,
            "seconds": round(result.seconds, 3),
            "rows_per_s": round(result.rows_per_s),
            "table": table,
            "dataset": dataset.name,
            "levels": list(staged.levels),
            "variables": [v.cds_name for v in staged.variables],
            "missing_columns": missing,
            "ignored": staged.ignored,
            "added_columns": added,
            "notes": staged.notes,
            "expver": staged.expver,
            "location_ids": staged.location_id is not None,
            "columnstore": packed[0].state if packed else "off",
            "bytes": stored,
            "download_bytes": download_bytes,
            "finish_seconds": round(finish_seconds, 3),
            "rollups": {"daily_rows": result.daily_rows, "monthly_rows": result.monthly_rows,
                        "sql_days": result.sql_days, "seconds": result.rollup_seconds,
                        "bytes": rollup_bytes} if result.rollup_seconds else None,
        }
    if not args.json:
        _tell_loaded(result, table, packed, len(months), stored, download_bytes, rollup_bytes, finish_seconds)
    emit(summary, args.json)
    return 0


def _tell_staged(staged: StagedDownload, dataset: Dataset, missing: list[str]) -> None:
    """What the files hold that the load leaves out or cannot place, before it starts."""
    if missing:
        print(f"columns left NULL (not in the files): {', '.join(missing)}")
    if staged.ignored:
        print(f"variables ignored (not in the table): {', '.join(staged.ignored)}")
    for note in staged.notes:
        print(note)
    if staged.location_id is None:
        print(f"grid points are off the global {dataset.grid.step:g} degree lattice: location_id left NULL")
    if staged.levels:
        print(f"{dataset.name}: levels {', '.join(map(str, staged.levels))} hPa")


def _finish_span(url: str, table: str, dataset: Dataset,
                 months: list[Month]) -> tuple[list[Compression], float, int, int]:
    """The span the files touch finished as the pipeline's months are: what ``finish`` did, its
    seconds, and the bytes the span's chunks and its rollups' chunks hold."""
    from era5etl.load import columnstore
    from era5etl.load.columnstore import finish, span_bytes

    if not months:
        return [], 0.0, 0, 0
    # Compressed, a month one chunk at most; once for the whole span, whatever its number of months.
    # The rollups were written by the load itself, with the rows.
    t_finish = time.perf_counter()
    packed = [finish(url, table, months[0].start, months[-1].end, columnstore.mode_from_env(), measure=False)]
    finish_seconds = time.perf_counter() - t_finish
    # Months can share a chunk (a year's): the file's bytes are its chunks', each counted once.
    stored = span_bytes(url, table, months[0].start, months[-1].end)
    rollup_bytes = 0
    if settings.load().rollups and not dataset.monthly:
        names = rollup_tables(table)
        rollup_bytes = sum(span_bytes(url, names[step], months[0].start, months[-1].end) for step in names)
    return packed, finish_seconds, stored, rollup_bytes


def _tell_loaded(result: LoadResult, table: str, packed: list[Compression], months: int, stored: int,
                 download_bytes: int, rollup_bytes: int, finish_seconds: float) -> None:
    print(f"loaded {result.rows:,} rows into {table} in {result.seconds:.2f} s "
          f"({result.rows_per_s:,.0f} rows/s; replaced {result.deleted:,})")
    if packed and packed[0].state == "compressed":
        print(f"columnstore: {stored / 1e6:,.1f} MB for {months} month(s), "
              f"{stored / download_bytes:.2f}x the files")
    elif packed:
        print(f"columnstore: {packed[0].state} ({packed[0].reason})")
    if result.rollup_seconds:
        print(f"rollups: {result.daily_rows:,} daily and {result.monthly_rows:,} monthly rows written with the "
              f"load ({sum(result.rollup_seconds.values()):.2f} s: "
              + ", ".join(f"{k} {v:.2f}" for k, v in result.rollup_seconds.items())
              + f"), {rollup_bytes / 1e6:,.1f} MB")
    print(f"finished (compressed, merged) in {finish_seconds:.2f} s")


def _discard(url: str, table: str) -> None:
    """Drop the table a failed first load made; a database that went away keeps it (and says so)."""
    import logging

    import psycopg

    from era5etl.db import DatabaseError

    try:
        discard_new(url, table)
    except (DatabaseError, psycopg.Error) as exc:
        logging.getLogger(__name__).warning("the new table %s could not be dropped after its failed first load "
                                            "(%s): `python -m era5etl table drop %s --yes` removes it", table, exc,
                                            table)
