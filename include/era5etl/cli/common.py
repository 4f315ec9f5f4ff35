"""What every command shares: printing its JSON, and the CLI's own errors."""

from __future__ import annotations

import json
from typing import Any


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
