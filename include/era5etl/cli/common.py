"""What every command shares: printing its JSON, and the CLI's own errors."""

from __future__ import annotations

import json
from typing import Any


def emit(obj: dict[str, Any], as_json: bool) -> None:
    """End with one JSON object when asked (the last line a script parses)."""
    if as_json:
        print(json.dumps(obj, default=str))
