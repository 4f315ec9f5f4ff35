"""Each kind of variable's palette: sequential for amounts and covers, diverging about zero for signed
quantities and changes; matplotlib's colour maps."""

from __future__ import annotations

import matplotlib as mpl
import pytest
from matplotlib.colors import to_hex

from era5etl.read.palettes import STOPS, change_palette, field_palette


@pytest.mark.parametrize(("variable", "name", "diverging"), [
    ("total_cloud_cover", "Greys", False), ("sea_ice_cover", "Greys", False),
    ("total_precipitation", "Blues", False), ("snowfall", "Blues", False),
    ("temperature_2m", "inferno", False), ("wind_speed_10m", "viridis", False),
    ("mean_sea_level_pressure", "viridis", False), ("zonal_wind_10m", "RdBu_r", True),
    ("meridional_wind", "RdBu_r", True),
])
def test_a_fields_palette_follows_its_kind(variable: str, name: str, diverging: bool) -> None:
    palette = field_palette(variable)
    assert (palette.name, palette.diverging) == (name, diverging)


def test_a_change_is_diverging_and_wetter_is_not_red() -> None:
    assert change_palette("temperature_2m").name == "RdBu_r"
    rain = change_palette("total_precipitation")
    assert rain.name == "BrBG" and rain.diverging
    # BrBG's wet end (the highest) is blue-green: more blue and green than red.
    red, green, blue = (int(rain.stops()[-1][i:i + 2], 16) for i in (1, 3, 5))
    assert green > red and blue > red


def test_the_stops_are_matplotlibs_colour_map() -> None:
    stops = field_palette("total_cloud_cover").stops()
    assert len(stops) == STOPS
    assert stops[0] == to_hex(mpl.colormaps["Greys"](0.0)) and stops[-1] == to_hex(mpl.colormaps["Greys"](1.0))
    assert stops[0] > stops[-1]  # Greys: white for no cloud, darkest for a full cover


def test_a_diverging_scale_is_symmetric_about_zero() -> None:
    assert change_palette("temperature_2m").limits(-0.2, 1.5) == (-1.5, 1.5)
    assert change_palette("temperature_2m").limits(0.0, 0.0) == (-1.0, 1.0)
    assert field_palette("temperature_2m").limits(-0.2, 1.5) == (-0.2, 1.5)
