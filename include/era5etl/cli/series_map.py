"""Reading the table: ``series`` (one place over time) and ``map`` (one hour over an area), printed,
as CSV or JSON, drawn to a PNG, or (a series) written as Parquet. The same functions the HTTP API
answers with (``era5etl.read``)."""

# Imports inside functions: `era5etl --help` and each command load only what that command runs (start-
# up time).

from __future__ import annotations

import argparse
import contextlib
import json
import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from era5etl import settings
from era5etl.cli.common import output_path, table_arg
from era5etl.cli.place import add_place_arguments, add_region_arguments, add_tz_argument, region_of
from era5etl.core.errors import InputError
from era5etl.core.grid import Area
from era5etl.db import connect, database_url
from era5etl.read.columns import STEP_NAMES, UNITS, known
from era5etl.serve.params import parse_hour, parse_time


def add_parsers(sub: Any) -> None:
    se = sub.add_parser("series", help="one place's series (the nearest grid point's rows) or an area's (the "
                                       "points' cos(latitude)-weighted mean, min and max), hourly, daily or monthly")
    se.add_argument("lat", type=float, nargs="?", help="latitude of the place, degrees north (-90..90)")
    se.add_argument("lon", type=float, nargs="?", help="longitude of the place, degrees east (-180..360)")
    se.add_argument("--area", metavar="N/W/S/E",
                    help="instead of a place, an area: per step the mean of its grid points weighted by "
                         "cos(latitude), their min and max, an accumulation's mean total, and the points and hours "
                         "read (for example 50/5/45/10)")
    se.add_argument("--from", dest="start", metavar="YYYY-MM-DD", help="first day (UTC; default: the first loaded)")
    se.add_argument("--to", dest="end", metavar="YYYY-MM-DD",
                    help="last day, included (UTC; default: the last loaded)")
    se.add_argument("--variables", metavar="a,b",
                    help=f"comma-separated columns; hourly: {', '.join(known('hour'))}; daily or monthly: a rollup "
                         "column such as temperature_2m_max, or a variable for all its aggregates (default: all)")
    step = se.add_mutually_exclusive_group()
    step.add_argument("--hourly", action="store_const", const="hour", dest="step",
                      help="one row an hour, from the table itself (the default)")
    step.add_argument("--daily", action="store_const", const="day", dest="step",
                      help="one row a UTC day, from the daily rollup (<table>_daily)")
    step.add_argument("--monthly", action="store_const", const="month", dest="step",
                      help="one row a month, from the monthly rollup (<table>_monthly)")
    se.set_defaults(step="hour")
    add_place_arguments(se)
    add_region_arguments(se)
    add_tz_argument(se, "with --daily only (default: UTC days, the daily rollup)")
    _common(se).add_argument("--parquet", metavar="FILE",
                             help="write the rows to FILE as Parquet (the CSV's rows and values, typed)")
    se.set_defaults(func=cmd_series)

    ma = sub.add_parser("map", help="one hour's field of one variable over the loaded area or a part of it")
    ma.add_argument("time", help="the hour, UTC: YYYY-MM-DDTHH[:00], for example 2024-03-02T05:00; a table of "
                                 "monthly means takes its month, YYYY-MM (by hour of day: an hour of the month)")
    ma.add_argument("--variable", default="temperature_2m",
                    help=f"one of {', '.join(known('hour'))} (default temperature_2m)")
    ma.add_argument("--area", metavar="N/W/S/E", help="only the grid points inside this box (default: all loaded)")
    _common(ma)
    ma.set_defaults(func=cmd_map)


def _common(p: argparse.ArgumentParser) -> Any:
    """--level, --table and the output choices (a mutually exclusive group, returned for a read's own)."""
    p.add_argument("--level", type=int, metavar="HPA",
                   help="the pressure level, hPa: required for a table on pressure levels, refused for one without")
    p.add_argument("--table", type=table_arg, help="the hypertable to read (default ERA5_TABLE, else weather)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--csv", action="store_true", help="print CSV (a header line, then one line per row)")
    out.add_argument("--json", action="store_true", help="end with one JSON object: times, values, units")
    out.add_argument("--png", metavar="FILE", help="draw a chart into FILE (PNG)")
    return out


def _day(text: str | None, option: str) -> datetime | None:
    if text is None:
        return None
    try:
        datetime.strptime(text, "%Y-%m-%d")
    except ValueError:
        raise InputError(f"{option} {text!r} is not a day of the form YYYY-MM-DD") from None
    return parse_time(text, option)  # the calendar's edges refused as over HTTP (serve.params)


def _hour(text: str) -> datetime:
    """An hour; or a month (YYYY-MM), its first hour: a table of monthly means holds a month there."""
    if re.fullmatch(r"\d{4}-\d{2}", text.strip()):
        from era5etl.core.months import Month

        return Month.parse(text).start
    return parse_hour(text, "time")


@contextlib.contextmanager
def _writing(target: Path, option: str) -> Iterator[None]:
    """Writing ``target``: a file that cannot be written (no permission, a full disk) is an InputError,
    and what was written of it is removed."""
    existed = target.exists()
    try:
        yield
    except OSError as exc:
        if not existed:
            target.unlink(missing_ok=True)
        raise InputError(f"{option} {target}: cannot be written: {exc.strerror or exc}") from None


def _cell(value: Any) -> str:
    return "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def _table(header: list[str], rows: list[list[Any]]) -> str:
    cells = [header] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in cells)


def cmd_series(args: argparse.Namespace) -> int:
    from era5etl.read.localday import offset_text
    from era5etl.read.question import answer, ask, check_question, target_of
    from era5etl.read.series import Series, series_json
    from era5etl.read.where import Where

    start, last = _day(args.start, "--from"), _day(args.end, "--to")
    end = last + timedelta(days=1) if last is not None else None
    if start is not None and end is not None and end <= start:
        raise InputError(f"--to {args.end} is before --from {args.start}")
    variables = [v.strip() for v in args.variables.split(",")] if args.variables else None
    table = args.table or settings.load().table
    given_region = args.region is not None or args.region_file is not None
    check_question(lat=args.lat, lon=args.lon, place=args.place, country=args.country, area=args.area is not None,
                   region=given_region, tz=args.tz, step=args.step)
    target = target_of(lat=args.lat, lon=args.lon, place=args.place, country=args.country, area=args.area,
                       region=(lambda: _region(args)) if given_region else None)
    q = ask(table, target, start=start, end=end, variables=variables, step=args.step, tz=args.tz, level=args.level)
    if not isinstance(target, Where):
        if args.png is not None or args.parquet is not None:
            raise InputError(f"{'--png' if args.png is not None else '--parquet'} draws or writes one place's "
                             "series; an area's or a region's comes as a table, --csv or --json")
        with connect(database_url()) as conn:
            return _area_out(args, answer(conn, q))
    target_png = output_path(args.png) if args.png is not None else None
    parquet = output_path(args.parquet, "--parquet") if args.parquet is not None else None
    with connect(database_url()) as conn:
        got = answer(conn, q)
    s, named = got.series, got.named
    assert isinstance(s, Series)  # a place's
    if q.offset_minutes is not None:
        named += f", days of {offset_text(q.offset_minutes)} from the hourly rows"
    where_ = (f"{named}, {len(s.time):,} {STEP_NAMES[s.step]} rows of {table}"
              + (f" at {args.level} hPa" if args.level is not None else ""))
    print(f"# {where_}" if args.csv else where_)
    if args.csv:
        print(got.as_csv(), end="")
    elif args.json:
        print(json.dumps(series_json(s)))
    elif target_png is not None:
        from era5etl.read.plots import plot_series

        with _writing(target_png, "--png"):
            plot_series(s, target_png)
        print(f"wrote {target_png} ({target_png.stat().st_size:,} bytes)")
    elif parquet is not None:
        from era5etl.read.parquet import series_parquet

        with _writing(parquet, "--parquet"):
            parquet.write_bytes(series_parquet(s))
        print(f"wrote {parquet} ({parquet.stat().st_size:,} bytes)")
    else:
        data = series_json(s)
        header = ["time"] + [f"{c} ({(s.units or UNITS).get(c, UNITS[c])})" for c in s.columns]
        print(_table(header, [[t, *(data["values"][c][i] for c in s.columns)] for i, t in enumerate(data["time"])]))
    return 0


def _region(args: argparse.Namespace) -> Any:
    region = region_of(args)
    assert region is not None  # asked only when --region or --region-file is given
    return region


def _area_out(args: argparse.Namespace, got: Any) -> int:
    """An area's or a region's series printed: a table, --csv or --json (its days of a fixed offset too)."""
    from era5etl.read.localday import offset_text

    s, q = got.series, got.question
    calendar = (f"days of {offset_text(q.offset_minutes)} from the hourly rows" if q.offset_minutes is not None
                else f"{STEP_NAMES[args.step]} steps")
    where = f"{_named(s)}, {len(s.time):,} {calendar} of {q.table}"
    print(f"# {where}" if args.csv else where)
    if args.csv:
        print(got.as_csv(), end="")
        return 0
    data = got.as_json()
    if args.json:
        print(json.dumps(data))
        return 0
    header = ["time", "points", "hours"] + [f"{c} ({data['units'][c]})" for c in s.columns]
    rows = [[t, data["points"][i], data["hours"][i], *(_short(data["values"][c][i]) for c in s.columns)]
            for i, t in enumerate(data["time"])]
    print(_table(header, rows))
    if data["gaps"]:
        print(f"no rows: {'; '.join(data['gaps'])}")
    return 0


def _named(s: Any) -> str:
    """What an area's or a region's series is made of."""
    from era5etl.read.regions import Region

    points = int(s.points.max())
    if isinstance(s.area, Region):
        outside = (f" ({s.area.left_out:,} outside the table's loaded box left out: {s.area.loaded_share:.1%} of its "
                   "area read)" if s.area.left_out else "")
        return (f"region {s.area} ({s.area.source}): {points:,} of its {s.area.points + s.area.left_out:,} grid points "
                f"read{outside}, weighted by their cells' overlap")
    return f"area {s.area}: {points:,} grid points, cos(latitude)-weighted"


def _short(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.6g}")


def cmd_map(args: argparse.Namespace) -> int:
    from era5etl.read.maps import hour_map, map_csv, map_json

    at = _hour(args.time)
    area = Area.parse(args.area) if args.area else None
    table = args.table or settings.load().table
    target = output_path(args.png) if args.png is not None else None
    with connect(database_url()) as conn:
        m = hour_map(conn, table, at, args.variable, area, args.level)
    if args.csv:
        print(map_csv(m), end="")
    elif args.json:
        print(json.dumps(map_json(m)))
    elif target is not None:
        from era5etl.read.plots import plot_map

        with _writing(target, "--png"):
            plot_map(m, target)
        print(f"wrote {target} ({target.stat().st_size:,} bytes)")
    else:
        finite = m.values[np.isfinite(m.values)]
        spread = (f"min {finite.min():g}, mean {finite.mean():g}, max {finite.max():g}" if finite.size
                  else "every value missing")
        at_level = f" at {m.level} hPa" if m.level is not None else ""
        print(f"{m.variable} ({m.unit or UNITS[m.variable]}){at_level} at {m.time:%Y-%m-%dT%H:%MZ} in {table}: "
              f"{m.values.size:,} grid "
              f"points in {m.latitude.max():g}/{m.longitude.min():g}/{m.latitude.min():g}/{m.longitude.max():g} "
              f"(N/W/S/E); {spread}")
    return 0
