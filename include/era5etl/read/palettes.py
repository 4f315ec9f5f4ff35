"""Which colours a map of each kind of variable is drawn in: one rule for the CLI's PNGs, the atlas's
maps and the Data view's SVG map (the map's JSON carries its palette's stops).

The colour maps are matplotlib's own (perceptually uniform where there is one: viridis, cividis;
ColorBrewer's sequential and diverging ones otherwise), never hand-picked stops:

* an amount or a cover (an accumulation, a fraction, a wind speed, a temperature, a pressure):
  *sequential*, from its lowest value to its highest. Precipitation and snowfall in blues (more is
  darker), a cover in greys (a full cover is darkest), a temperature in ``inferno``, anything else in
  ``viridis``;
* a signed quantity centred on zero (a wind component, an anomaly, a trend): *diverging*, its middle
  colour at zero and the scale symmetric about it, so the sign reads at a glance. A warming (positive)
  is red (``RdBu_r``); for an accumulation's anomaly or trend wetter is blue-green, drier brown (``BrBG``).
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib as mpl
from matplotlib.colors import to_hex

from era5etl.core.catalogue import CATALOGUE
from era5etl.core.catalogue_land import LAND_CATALOGUE
from era5etl.core.catalogue_pl import PL_CATALOGUE
from era5etl.core.rollups import WIND_COMPONENTS

# How many stops the Data view interpolates between (its colour bar and its cells).
STOPS = 11
_VARIABLES = {v.column: v for v in (*PL_CATALOGUE, *LAND_CATALOGUE, *CATALOGUE)}
_COMPONENTS = frozenset(c for pair in WIND_COMPONENTS.values() for c in pair) | {
    "zonal_wind", "meridional_wind", "vertical_velocity", "vorticity", "divergence"}
_SNOW_OR_RAIN = ("precipitation", "snowfall", "rain", "snow")


@dataclass(frozen=True)
class Palette:
    """A matplotlib colour map's name and whether it diverges about zero."""

    name: str
    diverging: bool

    def stops(self, n: int = STOPS) -> list[str]:
        """``n`` colours evenly along the map, lowest first, as ``#rrggbb``."""
        cmap = mpl.colormaps[self.name]
        return [to_hex(cmap(i / (n - 1))) for i in range(n)]

    def limits(self, low: float, high: float) -> tuple[float, float]:
        """The scale's ends for values from ``low`` to ``high``: as they are for a sequential palette,
        symmetric about zero for a diverging one."""
        if not self.diverging:
            return low, high
        reach = max(abs(low), abs(high)) or 1.0
        return -reach, reach

    def json(self) -> dict[str, object]:
        """What the map's JSON says of its palette: ``name``, ``diverging`` and its ``stops``."""
        return {"name": self.name, "diverging": self.diverging, "stops": self.stops()}


def _accumulated(variable: str) -> bool:
    v = _VARIABLES.get(variable)
    return (v is not None and v.step_type == "accum") or any(w in variable for w in _SNOW_OR_RAIN)


def field_palette(variable: str) -> Palette:
    """The palette of a map of ``variable``'s values (a table's column, or a derived wind speed)."""
    if variable in _COMPONENTS:
        return Palette("RdBu_r", diverging=True)
    v = _VARIABLES.get(variable)
    unit = v.table_unit if v is not None else ""
    if any(w in variable for w in _SNOW_OR_RAIN):
        return Palette("Blues", diverging=False)
    if unit == "0-1" or "cover" in variable:
        return Palette("Greys", diverging=False)
    if unit in ("degC", "K"):
        return Palette("inferno", diverging=False)
    return Palette("viridis", diverging=False)


def change_palette(variable: str) -> Palette:
    """The palette of a map of ``variable``'s anomalies or trends: diverging about zero, wetter in
    blue-green for an accumulation, warmer (higher) in red otherwise."""
    return Palette("BrBG" if _accumulated(variable) else "RdBu_r", diverging=True)


__all__ = ["STOPS", "Palette", "change_palette", "field_palette"]
