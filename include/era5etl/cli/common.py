"""What every command shares: printing its JSON, the files it writes, and the CLI's own errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from era5etl.core.errors import InputError


def emit(obj: dict[str, Any], as_json: bool) -> None:
    """End with one JSON object when asked (the last line a script parses)."""
    if as_json:
        print(json.dumps(obj, default=str))


def table_arg(text: str) -> str:
    """``--table``'s type: a name :func:`era5etl.core.names.check_table` allows, else argparse's own
    refusal (``error: ...`` and exit status 2) before the command runs, so nothing is created."""
    import argparse

    from era5etl.core.names import table_problem

    problem = table_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def output_path(path: str, option: str = "--png") -> Path:
    """A file to write: its folder must exist, and it must be a regular file if it exists (not a
    folder, a device or a pipe)."""
    target = Path(path)
    if not target.parent.is_dir():
        raise InputError(f"{option} {path}: the folder {target.parent} does not exist")
    if target.is_dir():
        raise InputError(f"{option} {path}: is a folder; name a file in it")
    if target.exists() and not target.is_file():
        raise InputError(f"{option} {path}: is not a regular file (a device or a pipe); name a file")
    return target
