"""series --place: a city by name read at its nearest grid point, named with the point and the distance;
an ambiguous name lists the candidates, an unknown one the closest names (exit status 2)."""

from __future__ import annotations

from era5etl.db import connect
from era5etl.read.places import find_place
from era5etl.read.points import nearest_point

from ..helpers import cli


def test_jakarta_by_name_is_read_at_its_nearest_grid_point(db_url: str, places_table: str) -> None:
    code, out, err, data = cli("series", "--place", "Jakarta", "--daily", "--from", "2024-01-01", "--to",
                               "2024-01-31", "--variables", "temperature_2m", "--table", places_table, "--json")
    assert code == 0, out + err
    jakarta = find_place("Jakarta")
    with connect(db_url) as conn:
        point = nearest_point(conn, places_table, jakarta.latitude, jakarta.longitude)
    assert (point.latitude, point.longitude) == (-6.25, 106.75)
    first = out.splitlines()[0]
    assert first.startswith(f"Jakarta, ID ({jakarta.latitude:g}, {jakarta.longitude:g}), point {point.location_id}: "
                            f"-6.25, 106.75 ({point.distance_km:.1f} km from")
    assert data is not None and data["point"]["location_id"] == point.location_id
    assert len(data["time"]) == 31 and data["time"][0] == "2024-01-01T00:00:00Z"  # UTC days: the rollup


def test_santiago_with_its_country_is_read_in_chile(places_table: str) -> None:
    code, out, err, data = cli("series", "--place", "Santiago", "--country", "CL", "--daily", "--table",
                               places_table, "--json")
    assert code == 0, out + err
    assert out.startswith("Santiago, CL (") and "-33.5, -70.75" in out.splitlines()[0]
    assert data is not None and len(data["time"]) == 31


def test_an_ambiguous_name_lists_the_candidates_and_asks_for_the_country(places_table: str) -> None:
    code, out, err, _ = cli("series", "--place", "Santiago", "--daily", "--table", places_table)
    assert code == 2 and out == ""
    assert err.startswith("error: 5 places are named 'Santiago', largest first: Santiago, CL (")
    assert "--country" in err


def test_an_unknown_name_gives_the_closest_names(places_table: str) -> None:
    code, out, err, _ = cli("series", "--place", "Jakrta", "--daily", "--table", places_table)
    assert code == 2 and out == ""
    assert "error: no place named 'Jakrta'" in err and "Jakarta" in err.split("closest names", 1)[1]
    code, _, err, _ = cli("series", "45", "7", "--place", "Jakarta", "--table", places_table)
    assert code == 2 and "not both" in err
