"""The deterministic hashes the synthetic fields draw their randomness from: a seed from any parts, and a
uniform value per (integer time, point), so that a value depends on nothing but its own coordinates."""

from __future__ import annotations

import hashlib

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]


def stable_seed(*parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def white(seed: int, key: str, times: npt.NDArray[np.int64], lat_milli: npt.NDArray[np.int64],
          lon_milli: npt.NDArray[np.int64]) -> F64:
    """Uniform [-1, 1) per (time, point), (time x lat x lon), from a splitmix64 hash: the grid-scale
    speckle of real data per hour, or per year the interannual noise (``times`` any integer count)."""
    with np.errstate(over="ignore"):
        x = (times.astype(np.uint64)[:, None, None] * np.uint64(0x9E3779B97F4A7C15)
             + lat_milli.astype(np.uint64)[None, :, None] * np.uint64(0xC2B2AE3D27D4EB4F)
             + lon_milli.astype(np.uint64)[None, None, :] * np.uint64(0x165667B19E3779F9)
             + np.uint64(stable_seed(seed, key, "white") & 0xFFFFFFFFFFFFFFFF))
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    unit: F64 = (x >> np.uint64(11)).astype(np.float64) * (2.0 / 2**53) - 1.0
    return unit
