"""The atlas recovers the local CDS's planted climate (docs/atlas.md, ``localcds.synth.climate``): a
global table of monthly means of 2 m temperature, 1979-2021 on a 5 degree lattice, made by the local
CDS and loaded through ``load-file`` (the product's load path), gives the area-weighted global trend
(0.191 degC per decade, Rantanen et al. 2022's ERA5 figure), the Arctic's (0.705) and their ratio
(3.70), and ranks the planted hot spots first. The same arithmetic the global 0.25 degree benchmark
runs (``era5bench atlas``), on 2,664 points instead of 1,038,240."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from era5etl.db import connect
from era5etl.read.atlas import area_mean, atlas
from era5etl.read.yearly import yearly_field

from ..helpers import cli, forget

NOW = datetime(2025, 2, 1, tzinfo=UTC)
STEP = 5
YEARS = (1979, 2021)


def planted_request() -> dict[str, object]:
    return {"product_type": ["monthly_averaged_reanalysis"], "variable": ["2m_temperature"],
            "year": [str(y) for y in range(YEARS[0], YEARS[1] + 1)], "month": [f"{m:02d}" for m in range(1, 13)],
            "time": ["00:00"], "grid": [str(STEP), str(STEP)], "data_format": "netcdf",
            "download_format": "unarchived"}


@pytest.fixture(scope="module")
def planted_table(db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from localcds.synth import write_download
    from localcds.synth.monthly import MONTHLY_DATASET

    path = tmp_path_factory.mktemp("planted") / "global-monthly-means.nc"
    write_download(planted_request(), path, seed=0, now=NOW, dataset=MONTHLY_DATASET)
    table = f"atp_{uuid.uuid4().hex[:8]}"
    code, out, err, summary = cli("load-file", str(path), "--table", table, "--json")
    assert code == 0, out + err
    assert summary is not None and summary["rows"] == 37 * 72 * 12 * (YEARS[1] - YEARS[0] + 1)
    yield table
    forget(db_url, table)


def test_the_atlas_recovers_the_planted_climate(db_url: str, planted_table: str) -> None:
    from localcds.synth.climate import ARCTIC_TREND, GLOBAL_TREND, HOT_SPOTS, trend_per_decade

    with connect(db_url) as conn:
        field = yearly_field(conn, planted_table, "temperature_2m", *YEARS)
    data = atlas(field, top=len(HOT_SPOTS))
    zonal = data["zonal"]
    assert zonal["global"]["covered"] == pytest.approx(1.0) and zonal["global"]["points"] == 37 * 72
    assert zonal["global"]["mean"] == pytest.approx(GLOBAL_TREND, abs=0.005)
    assert zonal["arctic"]["mean"] == pytest.approx(ARCTIC_TREND, abs=0.02)
    assert zonal["arctic_amplification"] == pytest.approx(ARCTIC_TREND / GLOBAL_TREND, abs=0.1)
    # The same means of the planted field itself on this lattice: what the atlas measured is the plant,
    # up to the interannual noise, not the lattice's rounding.
    lats, lons = np.unique(field.latitude), np.unique(field.longitude % 360)
    planted = trend_per_decade(lats, lons)
    lat_i, lon_i = np.searchsorted(lats, field.latitude), np.searchsorted(lons, field.longitude % 360)
    per_point = planted[lat_i, lon_i]
    assert zonal["global"]["mean"] == pytest.approx(area_mean(field.latitude, per_point)["mean"], abs=0.002)
    # The hot spots are ranked first, one each.
    nearest = []
    for r in data["ranking"]:
        p = r["grid_point"]
        distance = [np.hypot(p["latitude"] - s[1], ((p["longitude"] - s[2] + 180) % 360) - 180) for s in HOT_SPOTS]
        nearest.append(HOT_SPOTS[int(np.argmin(distance))][0])
    assert sorted(nearest) == sorted(s[0] for s in HOT_SPOTS)
    assert data["complete_years"] == list(range(YEARS[0], YEARS[1] + 1))


def test_the_cli_prints_and_draws_it(planted_table: str, tmp_path: Path) -> None:
    png = tmp_path / "trend.png"
    code, out, err, _ = cli("atlas", "--table", planted_table, "--top", "3", "--png", str(png))
    assert code == 0, out + err
    assert "global: +0.19" in out and "Arctic amplification: 3." in out
    assert png.stat().st_size > 20_000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from localcds.synth.climate import HOT_SPOTS

    cells = tmp_path / "trend.geojson"
    code, out, err, _ = cli("atlas", "--table", planted_table, "--geojson", str(cells))
    assert code == 0, out + err
    data = json.loads(cells.read_text())
    assert len(data["features"]) == 37 * 72 and f"wrote {cells} (2,664 cells" in out
    spot = max(data["features"], key=lambda f: f["properties"]["trend_per_decade"])["properties"]
    assert (spot["latitude"], spot["longitude"]) in {(s[1], s[2]) for s in HOT_SPOTS}
