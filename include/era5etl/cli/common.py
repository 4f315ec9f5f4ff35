"""What every command shares: printing its JSON, the files it writes, and the CLI's own errors."""

# Imports inside functions: `era5etl --help` and each command load only what that command runs (start-
# up time).

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from era5etl.core.errors import InputError
from era5etl.core.names import printable as printable


def size_text(n: int | None) -> str:
    """Bytes for a person: B, KiB, MiB or GiB."""
    if n is None:
        return "-"
    size, unit = float(n), "B"
    for bigger in ("KiB", "MiB", "GiB"):
        if size < 1024:
            break
        size, unit = size / 1024, bigger
    return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"


def emit(obj: dict[str, Any], as_json: bool) -> None:
    """End with one JSON object when asked (the last line a script parses)."""
    if as_json:
        print(json.dumps(obj, default=str))


def add_list_drop(actions: Any, *, list_help: str, drop_help: str, name_help: str,
                  on_list: Callable[..., int], on_drop: Callable[..., int]) -> None:
    """The ``list [--json]`` and ``drop NAME [--yes] [--json]`` actions of a command that keeps things
    (``table``, ``regions``): nothing is dropped without --yes."""
    ls = actions.add_parser("list", help=list_help)
    ls.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    ls.set_defaults(func=on_list)
    dr = actions.add_parser("drop", help=drop_help)
    dr.add_argument("name", help=name_help)
    dr.add_argument("--yes", action="store_true", help="really drop it: without this nothing is removed")
    dr.add_argument("--json", action="store_true", help="end with one JSON object of what was removed")
    dr.set_defaults(func=on_drop)


def table_arg(text: str) -> str:
    """``--table``'s type: a name :func:`era5etl.core.names.check_table` allows, else argparse's own
    refusal (``error: ...`` and exit status 2) before the command runs, so nothing is created."""
    from era5etl.core.names import table_problem

    problem = table_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is too few: at least 1")
    return value


def output_path(path: str, option: str = "--png") -> Path:
    """A file to write: its folder must exist, and it must be a regular file if it exists (not a
    folder, a device or a pipe)."""
    if not path.strip():
        raise InputError(f"{option} needs a file name (it was given an empty one)")
    target = Path(path)
    if not target.parent.is_dir():
        raise InputError(f"{option} {path}: the folder {target.parent} does not exist")
    if target.is_dir():
        raise InputError(f"{option} {path}: is a folder; name a file in it")
    if target.exists() and not target.is_file():
        raise InputError(f"{option} {path}: is not a regular file (a device or a pipe); name a file")
    return target
