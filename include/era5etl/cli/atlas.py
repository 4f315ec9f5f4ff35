"""``python -m era5etl atlas``: every grid point, city or country of a table ranked by its trend per decade,
and the area-weighted mean trend over the globe, the Arctic and any band of latitude
(docs/atlas.md)."""

# Imports inside functions: `era5etl --help` and each command load only what that command runs (start-
# up time).

from __future__ import annotations

import argparse
import json
from typing import Any

from era5etl import settings
from era5etl.cli.common import output_path, table_arg
from era5etl.cli.place import add_place_arguments
from era5etl.db import connect, database_url


def _band(text: str) -> tuple[float, float]:
    """``--band S,N``: a band of latitude, degrees north."""
    try:
        south, north = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a band S,N such as -23.5,23.5") from None
    if not -90 <= south < north <= 90:
        raise argparse.ArgumentTypeError(f"{text!r}: need -90 <= S < N <= 90")
    return south, north


def add_parsers(sub: Any) -> None:
    at = sub.add_parser("atlas", help="every grid point, city or country ranked by its trend per decade, and the "
                                      "area-weighted mean trend of the globe, the Arctic and bands of latitude")
    at.add_argument("--variable", default="temperature_2m",
                    help="the variable (default temperature_2m): an instantaneous one's yearly mean, an "
                         "accumulation's yearly total")
    at.add_argument("--from", dest="first", type=int, metavar="YEAR", help="first year (default: the first loaded)")
    at.add_argument("--to", dest="last", type=int, metavar="YEAR", help="last year (default: the last loaded)")
    at.add_argument("--baseline", default="1991-2020", metavar="Y1-Y2",
                    help="the years the last ten years' anomaly is against (default 1991-2020)")
    at.add_argument("--by", choices=("point", "city", "country", "region-file"), default="point",
                    help="rank grid points (default), the gazetteer's cities (each at its nearest grid point), "
                         "Natural Earth's countries, or each Feature of --region-file F (both weighed as --region "
                         "weighs them)")
    at.add_argument("--region-file", metavar="F", help="with --by region-file: a GeoJSON FeatureCollection, each "
                                                       "Feature a region ranked (named by its properties' name)")
    at.add_argument("--min-population", type=int, default=0, metavar="P", help="with --by city: at least P people")
    order = at.add_mutually_exclusive_group()
    order.add_argument("--top", type=int, metavar="N", help="the N of greatest trend (default 20)")
    order.add_argument("--bottom", type=int, metavar="N", help="the N of least trend")
    at.add_argument("--band", type=_band, action="append", metavar="S,N",
                    help="also the area-weighted mean trend of this band of latitude (repeatable)")
    add_place_arguments(at)
    at.add_argument("--table", type=table_arg, help="the hypertable to read (default ERA5_TABLE, else weather)")
    out = at.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object (docs/atlas.md)")
    out.add_argument("--csv", action="store_true", help="print the ranking as CSV")
    out.add_argument("--png", metavar="FILE", help="draw the trend of every grid point, with coastlines, into FILE")
    out.add_argument("--geojson", metavar="FILE", help="write the trend of every grid point, its cell a polygon, "
                                                       "into FILE as GeoJSON (RFC 7946)")
    at.set_defaults(func=cmd_atlas)


def _fmt(value: float | None, spec: str = "+.4f") -> str:
    return "-" if value is None else format(value, spec)


def _named(r: dict[str, Any]) -> str:
    for key in ("country", "region"):
        if key in r:
            return f"{r[key]['name']} ({r[key]['points']:,} points)"
    p = r["grid_point"]
    return r["city"]["described"] if "city" in r else f"{p['latitude']:g}, {p['longitude']:g}"


_PLURAL = {"point": "points", "city": "cities", "country": "countries", "region-file": "regions"}


def _text(data: dict[str, Any]) -> str:
    unit = data["unit"]
    lines = [f"{data['statistic']} {data['variable']} ({unit}), {data['years'][0]}-{data['years'][1]}: "
             f"trend per decade of {data['ranked']:,} of {data['units']:,} {_PLURAL[data['by']]}"]
    for name, z in data["zonal"].items():
        if name == "arctic_amplification":
            lines.append(f"  Arctic amplification: {z:.2f}")
        else:
            lines.append(f"  {name}: {_fmt(z['mean'])} {unit}/decade (area-weighted, {z['points']:,} points, "
                         f"{z['covered']:.0%} of its area)")
    lines.append(f"{data['order']} trends:")
    for r in data["ranking"]:
        t = r["trend_per_decade"]
        ci = t["ci95"] or [None, None]
        lines.append(f"  {r['rank']:4d}  {_named(r)}: {_fmt(t['ols'])} ({_fmt(ci[0])} to {_fmt(ci[1])}), Theil-Sen "
                     f"{_fmt(t['theil_sen'])}; last 10 years {_fmt(r['anomaly_last_10'], '+.3f')} {unit}; highest "
                     f"{r['highest_year']}")
    lines += [f"note: {n}" for n in data["notes"]]
    return "\n".join(lines)


def _csv(data: dict[str, Any]) -> str:
    rows = ["rank,name,latitude,longitude,trend_per_decade,ci95_low,ci95_high,theil_sen,years,anomaly_last_10,"
            "highest_year"]
    for r in data["ranking"]:
        t, p = r["trend_per_decade"], r.get("grid_point") or r.get("country") or r["region"]
        name = (r.get("city") or r.get("country") or r.get("region") or {}).get("name", "").replace('"', '""')
        cells = [r["rank"], f'"{name}"' if name else "", p["latitude"], p["longitude"], t["ols"],
                 *(t["ci95"] or [None, None]), t["theil_sen"], t["years"], r["anomaly_last_10"], r["highest_year"]]
        rows.append(",".join("" if c is None else str(c) for c in cells))
    return "\n".join(rows)


def _place_text(data: dict[str, Any]) -> str:
    lines = [f"What kind of change at {data['where']['described']} ({data['table']}; {data['order']}):"]
    for c in data["changes"]:
        t, r = c["trend_per_decade"], c["among_cities"]
        ci = t["ci95"] or [None, None]
        p = "-" if t["p_value"] is None else f"{t['p_value']:.2g}"
        rank = "no rank" if r["rank"] is None else f"rank {r['rank']:,} of {r['of']:,} cities"
        years = c["complete_years"]
        lines.append(f"  {c['statistic']} {c['variable']}: {_fmt(t['ols'])} {c['unit']}/decade ({_fmt(ci[0])} to "
                     f"{_fmt(ci[1])}, p {p}, {years[0]}-{years[-1]}, {len(years)} years); last 10 years "
                     f"{_fmt(c['anomaly_last_10'], '+.3f')} {c['unit']}; {rank}")
    lines += [f"note: {n}" for n in data["notes"]]
    return "\n".join(lines)


def _place(args: argparse.Namespace, table: str) -> int:
    from era5etl.read.atlas_place import place_changes
    from era5etl.read.errors import ReadError
    from era5etl.read.where import where

    others = [flag for flag, given in (("--by", args.by != "point"), ("--region-file", args.region_file is not None),
                                       ("--top", args.top is not None),
                                       ("--bottom", args.bottom is not None), ("--band", bool(args.band)),
                                       ("--csv", args.csv), ("--png", args.png is not None),
                                       ("--geojson", args.geojson is not None)) if given]
    if others:
        raise ReadError(f"--place answers one place; {', '.join(others)} rank many places")
    at = where(None, None, args.place, args.country)
    assert at is not None  # a place was given
    with connect(database_url()) as conn:
        data = place_changes(conn, table, at, first=args.first, last=args.last, baseline=args.baseline,
                             min_population=args.min_population)
    print(json.dumps(data) if args.json else _place_text(data))
    return 0


def cmd_atlas(args: argparse.Namespace) -> int:
    from era5etl.read.atlas import atlas_answer
    from era5etl.read.yearly import yearly_field

    table = args.table or settings.load().table
    if args.place is not None or args.country is not None:
        return _place(args, table)
    target = output_path(args.png) if args.png is not None else None
    geojson = output_path(args.geojson) if args.geojson is not None else None
    with connect(database_url()) as conn:
        field = yearly_field(conn, table, args.variable, args.first, args.last)
        data = atlas_answer(field, baseline=args.baseline, by=args.by, top=args.top, bottom=args.bottom,
                            min_population=args.min_population, bands=args.band, conn=conn,
                            region_file=args.region_file)
    if target is not None:
        from era5etl.read.atlas import trend_map
        from era5etl.read.atlas_plot import field_title, plot_trend_map

        plot_trend_map(trend_map(field), field_title(field), target, field.statistic)
        print(_text(data))
        print(f"wrote {target} ({target.stat().st_size:,} bytes)")
    elif geojson is not None:
        from era5etl.read.atlas_geojson import trend_geojson

        features = trend_geojson(field)
        geojson.write_text(json.dumps(features))
        print(_text(data))
        print(f"wrote {geojson} ({len(features['features']):,} cells, {geojson.stat().st_size:,} bytes)")
    elif args.json:
        print(json.dumps(data))
    elif args.csv:
        print(_csv(data))
    else:
        print(_text(data))
    return 0
