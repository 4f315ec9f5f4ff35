"""``python -m era5etl climate``: the climate signal of a place (by name or coordinates): per year the
value, the anomaly against a baseline and the trend per decade, the baseline's months, and the indices;
printed as a table, as CSV (the years), as one JSON object, or drawn (anomaly bars and the trend)."""

# Imports inside functions: `era5etl --help` and each command load only what that command runs (start-
# up time).

from __future__ import annotations

import argparse
import json
from typing import Any

from era5etl import settings
from era5etl.cli.common import output_path, table_arg
from era5etl.cli.place import add_place_arguments, add_region_arguments, add_tz_argument, region_of
from era5etl.db import connect, database_url


def add_parsers(sub: Any) -> None:
    from era5etl.read.indices import INDICES

    cl = sub.add_parser("climate", help="a place's (or an area's) climate signal: yearly values and anomalies "
                                        "against a baseline, the trend per decade, the baseline's months, ETCCDI "
                                        "indices")
    cl.add_argument("lat", type=float, nargs="?", help="latitude of the place, degrees north (-90..90)")
    cl.add_argument("lon", type=float, nargs="?", help="longitude of the place, degrees east (-180..360)")
    add_place_arguments(cl)
    cl.add_argument("--area", metavar="N/W/S/E",
                    help="instead of a place, an area: its grid points' cos(latitude)-weighted daily mean over UTC "
                         "days (no indices: they count days at a place)")
    add_region_arguments(cl)
    cl.add_argument("--variable", default="temperature_2m",
                    help="the variable (default temperature_2m): an instantaneous one's yearly mean, an "
                         "accumulation's yearly total (total_precipitation)")
    cl.add_argument("--baseline", default="1991-2020", metavar="Y1-Y2",
                    help="the years of the climatology the anomalies are against (default 1991-2020)")
    cl.add_argument("--from", dest="first", type=int, metavar="YEAR",
                    help="first year shown (default: the first loaded)")
    cl.add_argument("--to", dest="last", type=int, metavar="YEAR", help="last year shown (default: the last loaded)")
    cl.add_argument("--index", nargs="+", metavar="NAME",
                    help=f"indices (default: those of the variable): {', '.join(INDICES)}")
    add_tz_argument(cl, "default: a --place's standard offset ('local'), UTC days for coordinates")
    cl.add_argument("--table", type=table_arg, help="the hypertable to read (default ERA5_TABLE, else weather)")
    out = cl.add_mutually_exclusive_group()
    out.add_argument("--csv", action="store_true", help="print the years as CSV: year,value,anomaly,days,partial")
    out.add_argument("--json", action="store_true", help="end with one JSON object (docs/climate.md)")
    out.add_argument("--png", metavar="FILE", help="draw the anomaly bars and the trend into FILE (PNG)")
    cl.set_defaults(func=cmd_climate)


def _text(data: dict[str, Any]) -> str:
    unit, base = data["unit"], data["baseline"]
    lines = [f"{data['statistic']} {data['variable']} ({unit}) per year; anomaly vs {base[0]}-{base[1]} "
             f"({data['baseline_value']:.3f} {unit})"]
    for r in data["years"]:
        value = "partial" if r["partial"] else f"{r['value']:9.3f} {r['anomaly']:+8.3f}"
        lines.append(f"  {r['year']}  {value}  ({r['days']} complete days)")
    t = data["trend_per_decade"]
    if t["ols"] is not None:
        lines.append(f"trend per decade: {t['ols']:+.4f} {unit} (95%: {t['ci95'][0]:+.4f} to {t['ci95'][1]:+.4f}), "
                     f"Theil-Sen {t['theil_sen']:+.4f}, over {t['years']} complete years")
    lines.append("highest: " + ", ".join(f"{r['year']} ({r['value']:.3f})" for r in data["highest"]))
    lines.append("lowest: " + ", ".join(f"{r['year']} ({r['value']:.3f})" for r in data["lowest"]))
    lines.append("baseline months: " + ", ".join(
        f"{m['month']}: {'-' if m['climatology'] is None else format(m['climatology'], '.2f')}"
        for m in data["months"]))
    for name, index in data["indices"].items():
        ti = index["trend_per_decade"]
        last = [r for r in index["years"] if r["value"] is not None][-3:]
        shown = ", ".join(f"{r['year']}: {r['value']:g}" for r in last)
        trend = "" if ti["ols"] is None else f"; trend {ti['ols']:+.3g} {index['unit']}/decade"
        lines.append(f"{name} ({index['unit']}): {shown}{trend}")
    lines += [f"note: {n}" for n in data["notes"]]
    return "\n".join(lines)


def cmd_climate(args: argparse.Namespace) -> int:
    from era5etl.read.climate_read import climate_request
    from era5etl.read.question import check_target
    from era5etl.read.trend import import_early
    from era5etl.read.where import where

    import_early()
    check_target(lat=args.lat, lon=args.lon, place=args.place, country=args.country, area=args.area is not None,
                 region=args.region is not None or args.region_file is not None)
    at = where(args.lat, args.lon, args.place, args.country)
    region = region_of(args)
    table = args.table or settings.load().table
    target = output_path(args.png) if args.png is not None else None
    with connect(database_url()) as conn:
        if at is None:
            from era5etl.read.climate_read import area_climate

            data = area_climate(conn, table, region or args.area, args.variable, args.baseline, args.first, args.last,
                                args.index, args.tz)
        else:
            data = climate_request(conn, table, at, args.variable, args.baseline, args.first, args.last, args.index,
                                   args.tz)
    named = (data.get("place") or data.get("point") or data.get("region") or data["area"])["described"]
    print(f"# {named}" if args.csv else named)
    if args.csv:
        print("year,value,anomaly,days,partial")
        for r in data["years"]:
            print(",".join("" if r[k] is None else str(r[k]) for k in ("year", "value", "anomaly", "days", "partial")))
    elif args.json:
        print(json.dumps(data))
    elif target is not None:
        from era5etl.read.climate_plot import plot_climate

        plot_climate(data, f"{named}\n{data['statistic']} {data['variable']}", target)
        print(f"wrote {target} ({target.stat().st_size:,} bytes)")
    else:
        print(_text(data))
    return 0
