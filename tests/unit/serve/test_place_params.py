"""The query models' place, country, tz and the climate request: what they take and what they refuse,
with the sentence the HTTP answer's 400 carries."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from era5etl import serve
from era5etl.core.errors import InputError
from era5etl.read.places import AmbiguousPlace, UnknownPlace
from era5etl.serve.climate import ClimateRequest
from era5etl.serve.errors import http_status


def test_a_series_by_place_with_local_days() -> None:
    r = serve.series_request(place=" Santiago ", country="CL", tz="local")
    assert (r.place, r.country, r.tz, r.lat, r.step) == ("Santiago", "CL", "local", None, "day")
    with pytest.raises(InputError, match=r"^a day boundary \(tz\) is for daily series"):
        serve.series_request(lat="0", lon="0", tz="+7", step="hour")
    with pytest.raises(InputError, match=r"^give a place by name .* not both$"):
        serve.series_request(place="Jakarta", lat="1", lon="2")
    with pytest.raises(InputError, match=r"^a country \(--country, country=\) goes with a place by name$"):
        serve.series_request(lat="1", lon="2", country="ID")
    with pytest.raises(InputError, match=r"not more$"):
        serve.series_request(place="Jakarta", area="46/7/45/8")


def _climate(**query: str) -> ClimateRequest:
    try:
        return ClimateRequest.model_validate(query)
    except ValidationError as exc:
        raise InputError(serve.refusal(exc.errors())) from None


def test_the_climate_request() -> None:
    r = _climate(place="Jakarta", baseline="1961-1990", index="tropical_nights,rx1day", **{"from": "1980"})
    assert (r.place, r.baseline, r.index, r.first, r.last, r.variable) == (
        "Jakarta", "1961-1990", ["tropical_nights", "rx1day"], 1980, None, "temperature_2m")
    assert _climate(area="46/7/45/8").area == "46/7/45/8"
    with pytest.raises(InputError, match=r"^give a place \(by name, or its latitude and longitude\), an area"):
        _climate(variable="temperature_2m")
    with pytest.raises(InputError, match=r"not more$"):
        _climate(place="Jakarta", area="46/7/45/8")
    with pytest.raises(InputError, match="baseline"):
        _climate(place="Jakarta", baseline="1991")


def test_an_unknown_place_is_404_and_an_ambiguous_one_400() -> None:
    assert http_status(UnknownPlace("no place")) == 404
    assert http_status(AmbiguousPlace("5 places")) == 400
