"""``settings``: the settings in effect (every ``ERA5_*`` variable, validated), or docs/configuration.md's table."""

# Imports inside functions: `era5etl --help` and each command load only what that command runs (start-
# up time).

from __future__ import annotations

import argparse
from typing import Any

from era5etl import settings
from era5etl.cli.common import emit


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("settings", help="the ERA5_* settings in effect, validated (a bad value is exit 2)")
    p.add_argument("--markdown", action="store_true", help="print docs/configuration.md's settings table instead")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    p.set_defaults(func=cmd_settings)


def cmd_settings(args: argparse.Namespace) -> int:
    if args.markdown:
        print(settings.markdown_table())
        return 0
    from era5etl.db import redact

    current = settings.load()
    values: dict[str, str | None] = {}
    for name in type(current).model_fields:
        value = getattr(current, name)
        text = None if value is None else ",".join(value) if isinstance(value, tuple) else str(value)
        values[settings.env_name(name)] = redact(text) if name.endswith("database_url") and text else text
    if args.json:
        emit(values, True)
        return 0
    for env, text in values.items():
        print(f"{env:<28} {'(unset)' if text is None else text}")
    return 0
