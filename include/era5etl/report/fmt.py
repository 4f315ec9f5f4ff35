"""How the page writes values: HTML escaping, counts, rates, durations, times and chunk labels."""

from __future__ import annotations

import html
from datetime import UTC, datetime


def esc(value: object) -> str:
    """Text made safe for HTML, attribute values included."""
    return html.escape(str(value), quote=True)


def count(n: int | None) -> str:
    return f"{n:,}" if n is not None else "–"


def short(x: float | None) -> str:
    """A count in three significant figures: 980, 74.4k, 1.49M."""
    if x is None:
        return "–"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            v = x / div
            return f"{v:.3g}{suffix}" if v < 1000 else f"{v:.0f}{suffix}"
    return f"{x:.3g}" if x != int(x) else f"{int(x)}"


def byte_rate(x: float) -> str:
    for div, unit in ((1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s")):
        if x >= div:
            return f"{x / div:.3g} {unit}"
    return f"{x:.0f} B/s"


def duration(s: float) -> str:
    if s < 60:
        return f"{s:.2f} s" if s < 10 else f"{s:.1f} s"
    minutes, sec = divmod(round(s), 60)
    return f"{minutes} min {sec:02d} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def when(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if moment is not None else "–"


def chunk_label(start: str, *, long: bool = False) -> str:
    try:
        moment = datetime.fromisoformat(start)
    except ValueError:
        return start[:16]
    return moment.strftime("%Y-%m-%d %H:%M") if long else moment.strftime("%m-%d")
