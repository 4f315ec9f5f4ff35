"""``regions list|drop``: the outlines a region read has weighed and kept in the database
(``era5_regions`` and their weights, ``read.region_weights``), and forgetting one."""

# Imports inside functions: `era5etl --help` and each command load only what that command runs (start-
# up time).

from __future__ import annotations

import argparse
from typing import Any

from era5etl.cli.common import add_list_drop, emit, printable
from era5etl.core.errors import InputError


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("regions", help="the regions kept in the database (each outline a region read weighed): "
                                       "list them, or drop one")
    actions = p.add_subparsers(dest="action", required=True, help="list: the stored regions; drop: one, with --yes")
    add_list_drop(actions, list_help="each stored region: id, name, ISO code, grid, grid points, source, when",
                  drop_help="delete a stored region and its weights on every grid (a later read of it weighs it "
                            "again)",
                  name_help="the region's name or ISO code (case ignored), or its id (see `regions list`)",
                  on_list=cmd_list, on_drop=cmd_drop)


def cmd_list(args: argparse.Namespace) -> int:
    from era5etl.db import connect, database_url
    from era5etl.read.region_weights import stored

    with connect(database_url()) as conn:
        regions = stored(conn)
    if args.json:
        emit({"regions": regions}, True)
        return 0
    if not regions:
        print("no stored regions (a `series --region` or `climate --region` read weighs and keeps one)")
        return 0
    print(f"{'id':>5}  {'name':<32} {'iso':<4} {'grid':<22} {'points':>7}  {'first read':<16}  source")
    for r in regions:
        print(f"{r['region_id']:>5}  {printable(r['name'], 32):<32} {printable(r['iso'] or '-', 4):<4} "
              f"{r['grid']:<22} {r['points']:>7,}  {r['created_at']:%Y-%m-%d %H:%M}  {printable(r['source'])}")
    return 0


def cmd_drop(args: argparse.Namespace) -> int:
    from era5etl.db import connect, database_url
    from era5etl.read.region_weights import forget, named

    with connect(database_url()) as conn:
        found = named(conn, args.name)  # an unknown name is refused, --yes or not
        if not args.yes:
            raise InputError(f"not dropping {args.name!r} ({len(found)} stored region(s)) without --yes: "
                             f"`python -m era5etl regions drop {args.name} --yes` deletes it and its weights")
        forget(conn, found)
    if not args.json:
        print("dropped " + "; ".join(f"{printable(r['name'])} ({r['grid']}, {r['points']:,} grid points)"
                                     for r in found))
    emit({"dropped": found}, args.json)
    return 0
