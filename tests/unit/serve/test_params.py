"""The HTTP reads' query strings: every value checked, every refusal a sentence naming the parameter."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from era5etl import serve
from era5etl.core.errors import InputError
from era5etl.serve.limits import NATIVE_GRID
from era5etl.serve.params import parse_hour, parse_lat, parse_lon, parse_names, parse_range, parse_time


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_coordinates() -> None:
    assert parse_lat("45.5") == 45.5
    assert parse_lon("7.25") == 7.25
    assert parse_lon("350") == -10.0  # the table's convention, (-180, 180]
    assert parse_lon("-180") == 180.0
    for bad in ("91", "nan", "x", None, ""):
        with pytest.raises(InputError, match=r"^lat"):
            parse_lat(bad)
    with pytest.raises(InputError, match="lon '361' is outside"):
        parse_lon("361")


def test_times_are_utc_and_inclusive_at_their_precision() -> None:
    assert parse_time("2024-01-31", "from") == utc(2024, 1, 31)
    assert parse_time("2024-01-31", "to", end=True) == utc(2024, 1, 31, 23)
    assert parse_time("2024-02", "to", end=True) == utc(2024, 2, 29, 23)
    assert parse_time("2024", "to", end=True) == utc(2024, 12, 31, 23)
    assert parse_time("2024-01-31T12:30", "to", end=True) == utc(2024, 1, 31, 12, 30)
    assert parse_time("2024-01-31T12:00+02:00", "from") == utc(2024, 1, 31, 10)
    assert parse_time("2024-01-31 12:00Z", "from") == utc(2024, 1, 31, 12)
    assert parse_range(None, "") == (None, None)
    assert parse_range("2024-01-01", "2024-01-01") == (utc(2024, 1, 1), utc(2024, 1, 1, 23))
    with pytest.raises(InputError, match="to '2023-12-31' is before from '2024-01-01'"):
        parse_range("2024-01-01", "2023-12-31")
    for bad in ("yesterday", "2024-13-01", "2024-02-30", "24-01-01"):
        with pytest.raises(InputError):
            parse_time(bad, "from")


def test_a_map_is_one_whole_hour() -> None:
    assert parse_hour("2024-01-15T12:00Z") == utc(2024, 1, 15, 12)
    assert parse_hour("2024-01-15T12") == utc(2024, 1, 15, 12)
    with pytest.raises(InputError, match="is required"):
        parse_hour(None)
    with pytest.raises(InputError, match="is not an hour"):
        parse_hour("2024-01-15")
    with pytest.raises(InputError, match="not on the hour"):
        parse_hour("2024-01-15T12:30")


def test_names_and_choices() -> None:
    assert parse_names(" temperature_2m, total_precipitation ,temperature_2m") == [
        "temperature_2m", "total_precipitation"]
    assert parse_names("") is None
    with pytest.raises(InputError, match="is not a variable name"):
        parse_names("temperature_2m; DROP TABLE weather")
    r = serve.series_request(lat="45.5", lon="7.5", start="2024-01", end="2024-03", step="HOUR", fmt="csv",
                             table="weather")
    assert (r.step, r.format, r.table, r.start, r.end, r.variables) == (
        "hour", "csv", "weather", utc(2024, 1, 1), utc(2024, 3, 31, 23), None)
    assert serve.series_request(lat="0", lon="0").step == "day"  # daily unless asked
    with pytest.raises(InputError, match="step 'week' is not one of hour, day, month"):
        serve.series_request(lat="0", lon="0", step="week")
    with pytest.raises(InputError, match="format 'xml'"):
        serve.series_request(lat="0", lon="0", fmt="xml")
    with pytest.raises(InputError, match="is not a table name"):
        serve.series_request(lat="0", lon="0", table='weather"; --')


def test_map_request() -> None:
    m = serve.map_request(time="2024-01-15T12:00", area="46/7/45/8")
    assert (m.at, m.variable, str(m.area), m.format) == (utc(2024, 1, 15, 12), "temperature_2m", "46/7/45/8", "json")
    with pytest.raises(InputError, match="a map shows one variable"):
        serve.map_request(time="2024-01-15T12:00", variable="temperature_2m,snowfall")
    with pytest.raises(InputError, match="N/W/S/E"):
        serve.map_request(time="2024-01-15T12:00", area="46/7/45")


def test_the_query_models() -> None:
    """The models FastAPI validates the query strings with: a series can be exported as Parquet, a
    map cannot; a repeated ``variables`` is one list; unknown parameters are ignored."""
    assert serve.series_request(lat="1", lon="2", fmt="PARQUET").format == "parquet"
    with pytest.raises(InputError, match="format 'parquet' is not one of json, csv"):
        serve.map_request(time="2024-01-15T12:00", fmt="parquet")
    r = serve.SeriesRequest.model_validate({"lat": "45.5", "lon": "7.5", "variables": ["temperature_2m", "snowfall"],
                                            "to": "2024-02", "page": "3"})
    assert (r.variables, r.end, r.start) == (["temperature_2m", "snowfall"], utc(2024, 2, 29, 23), None)
    with pytest.raises(InputError, match=r"^a place by coordinates needs both its latitude and its longitude$"):
        serve.series_request(lat=None, lon="7")
    with pytest.raises(InputError, match=r"^time is required"):
        serve.map_request(time=None)
    m = serve.map_request(time="2024-01-15T12Z", area="46/7/45/8")
    assert m.box is not None and m.box.points(NATIVE_GRID) == 25


def test_a_series_of_an_area_instead_of_a_place() -> None:
    r = serve.series_request(area="50/5/45/10", step="month", fmt="csv")
    assert (r.lat, r.lon, r.area, r.step) == (None, None, "50/5/45/10", "month")
    assert r.box is not None and r.box.points(NATIVE_GRID) == 441
    assert serve.series_request(lat="45.5", lon="7.5").box is None
    with pytest.raises(InputError, match=r"^give one of a place .* and a region .*, not more$"):
        serve.series_request(lat="45.5", lon="7.5", area="50/5/45/10")
    with pytest.raises(InputError, match=r"^give a place \(by name, or its latitude and longitude\), an area"):
        serve.series_request()
    with pytest.raises(InputError, match=r"need -90 <= south <= north <= 90"):
        serve.series_request(area="45/5/50/10")
    with pytest.raises(InputError, match=r"is not of the form N/W/S/E"):
        serve.series_request(area="50/5/45")
    assert "area" in serve.SeriesRequest.model_json_schema()["properties"]


@pytest.mark.parametrize(("start", "end"), [
    (None, "9999-12-31"), (None, "9999"), ("0001-01-01T00:00+14:00", None), ("9999-12-31T23:00-14:00", None),
    ("0001-01-01", None), (None, "0001-01-01T00:00+14:00"), ("2024-01-01T00:00+15:00", None)])
def test_the_calendars_edges_are_input_errors_not_overflows(start: str | None, end: str | None) -> None:
    # Issue 31: `to=9999-12-31` and `from=0001-01-01T00:00+14:00` were OverflowErrors (HTTP 500).
    with pytest.raises(InputError):
        parse_range(start, end)


@pytest.mark.parametrize("text", ["0001-01-01T00:00+14:00", "9999-12-31T23:00-14:00", "0001-01-01T00:00"])
def test_an_hour_at_the_calendars_edge_is_an_input_error(text: str) -> None:
    with pytest.raises(InputError):
        parse_hour(text)
