"""--tz: a fixed UTC offset, or a place's own standard one."""

from __future__ import annotations

import pytest

from era5etl.read.errors import ReadError
from era5etl.read.localday import offset_text, parse_offset


@pytest.mark.parametrize(("text", "minutes"), [("+7", 420), ("-8", -480), ("-08:00", -480), ("+05:30", 330),
                                               ("-0930", -570), ("UTC+7", 420), ("UTC", 0), ("0", 0), ("Z", 0)])
def test_offsets(text: str, minutes: int) -> None:
    assert parse_offset(text) == minutes


def test_local_is_the_places_standard_offset_and_needs_a_place() -> None:
    assert parse_offset("local", -480) == -480
    assert parse_offset("LOCAL", 420) == 420
    with pytest.raises(ReadError, match="--tz local needs a place by name"):
        parse_offset("local", None)


@pytest.mark.parametrize("text", ["+15", "+7:75", "Asia/Jakarta", "7h", ""])
def test_what_is_not_an_offset_is_refused(text: str) -> None:
    with pytest.raises(ReadError, match="--tz"):
        parse_offset(text)


def test_offset_text() -> None:
    assert (offset_text(420), offset_text(-480), offset_text(330), offset_text(0)) == (
        "UTC+07:00", "UTC-08:00", "UTC+05:30", "UTC")
