"""What ecCodes itself makes of a GRIB message with given keys: the catalogue tests' second opinion on
each variable's identity (its paramId decoded to shortName, units, name, cfVarName, step type)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import eccodes

KEYS = ("edition", "paramId", "shortName", "units", "name", "cfVarName", "stepType")


def decoded(sample: str, keys: Sequence[tuple[str, Any]], step_type: str = "instant",
            wanted: Sequence[str] = KEYS) -> dict[str, Any]:
    """Set ``keys`` on ecCodes' ``sample`` message (and, for a step type other than instant, a
    forecast of one hour's step, as ERA5's accumulations and extremes are), encode it, decode it
    again and return the ``wanted`` keys of the decoded message."""
    handle = eccodes.codes_grib_new_from_samples(sample)
    try:
        for key, value in keys:
            eccodes.codes_set(handle, key, value)
        if step_type != "instant":
            eccodes.codes_set(handle, "marsType", "fc")
            eccodes.codes_set(handle, "stepType", step_type)
            eccodes.codes_set(handle, "stepRange", "0-1")
        message = eccodes.codes_get_message(handle)
    finally:
        eccodes.codes_release(handle)
    out = eccodes.codes_new_from_message(message)
    try:
        return {key: eccodes.codes_get(out, key) for key in wanted}
    finally:
        eccodes.codes_release(out)
