"""What kind of change one place has seen: ``atlas --place Jakarta``.

For every variable of the table with a yearly value (an instantaneous one's mean, an accumulation's
total: ``read.yearly``), the trend per decade at the place's grid point with its 95% interval
(``read.trend.trend_per_decade``, the function ``climate`` uses), the anomaly of the last ten years,
and where the place stands among the gazetteer's cities: its rank by that trend among every city whose
nearest grid point the table holds (1: the greatest rise; cities sharing a grid point share its
trend). The variables come clearest change first: ordered by the trend's p-value, as a change in
degrees and one in millimetres have no common size.

The yearly values are those of the atlas (UTC days on an hourly table, months on a monthly-means one),
so a point's trend equals the atlas's and ``climate --json``'s at those coordinates; ``climate
--place`` reads the place's own standard-offset days, which may move a value by the day's edge.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import psycopg

from era5etl.read.atlas import LAST_YEARS, anomalies, city_units, point_trends
from era5etl.read.climate_read import DEFAULT_BASELINE, parse_years
from era5etl.read.errors import ReadError
from era5etl.read.places import gazetteer
from era5etl.read.trend import trend_per_decade
from era5etl.read.where import Where, describe_point
from era5etl.read.yearly import YearlyField, yearly_fields


def city_rank(field: YearlyField, row: int, min_population: int = 0) -> dict[str, Any]:
    """``{rank, of}``: 1 + how many of the gazetteer's cities (at least ``min_population`` people) on the
    field's grid points have a greater trend than the point at ``row``, of how many have one."""
    slopes = point_trends(field).per_decade
    units = city_units(field, [p for ps in gazetteer()[0].values() for p in ps], min_population)
    theirs = slopes[np.array([u.row for u in units], dtype=np.int64)] if units else np.zeros(0)
    theirs = theirs[np.isfinite(theirs)]
    mine = slopes[row]
    if not np.isfinite(mine):
        return {"rank": None, "of": int(theirs.size)}
    return {"rank": int((theirs > mine).sum()) + 1, "of": int(theirs.size)}


def _change(field: YearlyField, row: int, baseline: tuple[int, int], min_population: int) -> dict[str, Any]:
    anomaly, base = anomalies(field, baseline)
    good = np.isfinite(field.values[row])
    return {"variable": field.variable, "statistic": field.statistic, "unit": field.unit,
            "trend_per_decade": trend_per_decade(field.years, field.values[row]),
            f"anomaly_last_{LAST_YEARS}": None if not np.isfinite(anomaly[row]) else float(anomaly[row]),
            "baseline_value": None if not np.isfinite(base[row]) else float(base[row]),
            "among_cities": city_rank(field, row, min_population),
            "complete_years": [int(y) for y in field.years[good]]}


def clearest_first(entry: dict[str, Any]) -> tuple[int, float]:
    """The sort key of a change: its p-value, a change without one (a constant, too few years) last."""
    p = entry["trend_per_decade"]["p_value"]
    return (0, p) if p is not None else (1, 0.0)


def place_changes(conn: psycopg.Connection[Any], table: str, at: Where, *, first: int | None = None,
                  last: int | None = None, baseline: str | tuple[int, int] = DEFAULT_BASELINE,
                  min_population: int = 0) -> dict[str, Any]:
    """Every variable's change at ``at``'s nearest grid point of ``table``, clearest first, and the
    place's rank among the cities for each; variables with no complete year there are named in notes."""
    span = parse_years(baseline) if isinstance(baseline, str) else baseline
    point, named = describe_point(conn, table, at)
    changes, notes, nowhere = [], [], []
    # Every variable read together: one statement a year for all of them.
    for variable, field in yearly_fields(conn, table, None, first, last).items():
        if field is None:  # no complete year anywhere (a column never loaded, or a span without one)
            nowhere.append(variable)
            continue
        rows = np.flatnonzero(field.location_id == point.location_id)
        if rows.size == 0 or not np.isfinite(field.values[rows[0]]).any():
            notes.append(f"{variable}: no complete year at {point.latitude:g}, {point.longitude:g}")
            continue
        changes.append(_change(field, int(rows[0]), span, min_population))
    if nowhere:
        asked = "" if first is None and last is None else f" in {first or '...'}-{last or '...'}"
        notes.append(f"no complete year{asked} at any grid point: {', '.join(nowhere)}")
    if not changes:
        raise ReadError(f"{table} holds no complete year of any variable at {named}: {'; '.join(notes)}")
    changes.sort(key=clearest_first)
    where: dict[str, Any] = {"described": named, "grid_point": {
        "location_id": point.location_id, "latitude": point.latitude, "longitude": point.longitude,
        "distance_km": point.distance_km}}
    if at.place is not None:
        p = at.place
        where["place"] = {"name": p.name, "country": p.country, "latitude": p.latitude, "longitude": p.longitude,
                          "population": p.population}
    return {"table": table, "where": where, "baseline": list(span), "order": "p-value of the trend, clearest first",
            "changes": changes, "notes": notes}


__all__ = ["city_rank", "clearest_first", "place_changes"]
