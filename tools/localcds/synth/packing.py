"""GRIB-style packing: values put on the lattice ERA5's GRIB1 simple packing leaves them on."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from localcds.synth.fields import F64

# Per variable, the range ERA5's global fields span (file units): the synthetic values are packed on
# a lattice fixed per variable, so the same point and hour get the same value whatever the area.
PACKING_RANGES: dict[str, tuple[float, float]] = {
    "t2m": (170.0, 350.0), "d2m": (150.0, 330.0), "u10": (-90.0, 90.0), "v10": (-90.0, 90.0),
    "msl": (85000.0, 110000.0), "sp": (45000.0, 110000.0), "tcc": (0.0, 1.0), "tp": (0.0, 0.5),
    "sf": (0.0, 0.5),
}


def grib_packed(short_name: str, field: F64, bits: int = 16) -> npt.NDArray[np.float32]:
    """``field`` as ERA5's GRIB1 simple packing leaves it, as float32.

    The CDS makes its NetCDF from GRIB, where a field is stored as ``reference + X * 2**E`` with X an
    unsigned integer of ``bits`` bits (16 for ERA5 single levels): the real files' values sit on
    such a lattice (tests/data/era5-samples: t2m in steps of 2**-9 K). Data off it would be far less
    compressible than real ERA5, in the NetCDF and in the database. The real service chooses the
    reference and E per field from its range; here they come from the variable's global range, so
    that two requests overlapping in space agree on the points they share.
    """
    low, high = PACKING_RANGES[short_name]
    scale = 2.0 ** math.ceil(math.log2((high - low) / (2.0**bits - 1)))
    levels = np.clip(np.rint((field - low) / scale), 0, 2.0**bits - 1)
    return (low + levels * scale).astype(np.float32)
