"""Where a series has no rows: the time steps missing between the rows it has.

A read answers the rows the table holds, so two neighbouring rows may be years apart (months not
loaded). A chart that joins them draws values that were never measured; :func:`with_gaps` puts a
NaN row at the first missing step of each gap, which is where matplotlib breaks a line, and
:func:`gap_text` names the missing steps for a caption (whole months as months).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from era5etl.read.series import Series

_STEP = {"hour": np.timedelta64(1, "h"), "day": np.timedelta64(1, "D")}


def _next(times: np.ndarray, step: str) -> np.ndarray:
    """The time step after each time (datetime64[us]): the next hour, UTC day or month start."""
    t = times.astype("datetime64[us]")
    out: np.ndarray = ((t.astype("datetime64[M]") + 1).astype("datetime64[us]") if step == "month"
                       else t + _STEP[step].astype("timedelta64[us]"))
    return out


def _previous(times: np.ndarray, step: str) -> np.ndarray:
    t = times.astype("datetime64[us]")
    out: np.ndarray = ((t.astype("datetime64[M]") - 1).astype("datetime64[us]") if step == "month"
                       else t - _STEP[step].astype("timedelta64[us]"))
    return out


def gaps(times: np.ndarray, step: str) -> list[tuple[np.datetime64, np.datetime64]]:
    """(first missing step, last missing step) of each run of steps missing between ``times``
    (sorted, one per step: a series' ``time``)."""
    t = np.asarray(times).astype("datetime64[us]")
    if t.size < 2:
        return []
    expected = _next(t[:-1], step)
    where = np.flatnonzero(t[1:] > expected)
    return [(expected[i], _previous(t[i + 1:i + 2], step)[0]) for i in where]


def with_gaps(s: Series) -> Series:
    """The series with a NaN row (0 hours) at the first missing step of each gap: a line drawn
    through it breaks there instead of joining rows across steps that have none."""
    found = gaps(s.time, s.step)
    if not found:
        return s
    t = s.time.astype("datetime64[us]")
    at = np.searchsorted(t, np.array([g[0] for g in found], dtype="datetime64[us]"))
    time = np.insert(t, at, [g[0] for g in found])
    values = {c: np.insert(v, at, 0 if v.dtype.kind in "iu" else np.nan) for c, v in s.values.items()}
    return replace(s, time=time, values=values)


def _text(moment: np.datetime64, unit: str) -> str:
    return str(np.datetime_as_string(np.array([moment]), unit=unit)[0])  # type: ignore[call-overload]


def gap_text(found: list[tuple[np.datetime64, np.datetime64]], step: str) -> list[str]:
    """Each gap as text: whole months as ``2002-02`` or ``2002-02 to 2023-12``, else the missing days
    (or hours, UTC) from first to last."""
    out: list[str] = []
    for first, last in found:
        after = _next(np.array([last]), step)[0]
        if _is_month_start(first) and _is_month_start(after):
            a, b = _text(first, "M"), _text(last, "M")
        elif step == "hour":
            a, b = (_text(m, "h").replace("T", " ") + ":00 UTC" for m in (first, last))
        else:
            a, b = _text(first, "D"), _text(last, "D")
        out.append(a if a == b else f"{a} to {b}")
    return out


def _is_month_start(moment: np.datetime64) -> bool:
    return bool(moment.astype("datetime64[M]").astype("datetime64[us]") == moment)
