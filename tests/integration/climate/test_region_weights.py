"""The region weights PostGIS computes and keeps (read.region_weights): cell by cell the weights shapely
computes from the same outline (read.regions.cell_weights, the reference), filled once and reused;
the SQL join docs/reading.md shows gives the region's series; a database where the extension is not
created is refused with its name."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import shapely

from era5etl.db import connect
from era5etl.read.errors import ReadError
from era5etl.read.region_weights import GRID, digest, weighed, weighed_all
from era5etl.read.regions import cell_weights, region_from_geojson, resolve_region

from ..helpers import cli

DOCS = Path(__file__).resolve().parents[3] / "docs" / "reading.md"


def _fresh(conn: Any, region: Any) -> Any:
    """``region`` weighed now by the database, its stored rows (left by an earlier run) dropped first; in
    a database whose schema predates the region tables, ``weighed`` makes them."""
    if conn.execute("SELECT to_regclass('era5_regions')").fetchone() != (None,):
        conn.execute("DELETE FROM era5_regions WHERE grid = %s AND digest = %s", (GRID, digest(region.outline)))
        conn.commit()
    return weighed(conn, region)


def test_many_regions_weighed_at_once_are_each_weighed_alone(db_url: str) -> None:
    """The atlas's countries: one statement weighs them all (one of them new), the rows are each's."""
    new = region_from_geojson({"type": "Polygon", "coordinates": [  # a box of 3 x 3 cells, not stored yet
        [[10.0, 40.0], [10.75, 40.0], [10.75, 40.75], [10.0, 40.75], [10.0, 40.0]]]}, f"box {uuid.uuid4().hex[:6]}")
    regions = [resolve_region("Luxembourg"), new, resolve_region("Fiji")]
    with connect(db_url) as conn:
        together = weighed_all(conn, regions)
        alone = [weighed(conn, r) for r in regions]
    for got, want in zip(together, alone, strict=True):
        assert got is not None and got.region_id == want.region_id and got.name == want.name
        assert got.ids.tolist() == want.ids.tolist() and got.weights.tolist() == want.weights.tolist()
        assert got.latitudes.tolist() == want.latitudes.tolist()
        assert got.longitudes.tolist() == want.longitudes.tolist()
    assert together[1] is not None and together[1].points == 16  # the cells centred on 40..40.75 N and E


@pytest.mark.parametrize("make", [
    lambda: resolve_region("Luxembourg"),
    lambda: resolve_region("CL"),  # 1,662 cells, Easter Island's among them
    lambda: resolve_region("Fiji"),  # across the antimeridian: a cell gets both sides
    lambda: region_from_geojson({"type": "Polygon", "coordinates": [  # inside the cell of 49.75 N, 6 E
        [[5.98, 49.72], [6.02, 49.72], [6.02, 49.78], [5.98, 49.78], [5.98, 49.72]]]}),
], ids=["luxembourg", "chile", "fiji", "inside-one-cell"])
def test_the_weights_table_is_shapelys_cell_by_cell(db_url: str, make: Any) -> None:
    region = make()
    want_ids, want_weights, want_lats, want_lons = cell_weights(region.outline)
    with connect(db_url) as conn:
        stored = _fresh(conn, region)
        rows = conn.execute("SELECT location_id, weight, latitude, longitude FROM era5_region_weights"
                            " WHERE region_id = %s ORDER BY location_id", (stored.region_id,)).fetchall()
        again = weighed(conn, make())  # a later read: the same rows, not computed again
        kept = conn.execute("SELECT count(*), bool_and(ST_Equals(outline, ST_GeomFromWKB(%s, 4326)))"
                            " FROM era5_regions WHERE grid = %s AND digest = %s",
                            (shapely.to_wkb(region.outline), GRID, digest(region.outline))).fetchone()
    got = np.array(rows, dtype=np.float64)
    assert got[:, 0].astype(np.int64).tolist() == want_ids.tolist()
    assert np.allclose(got[:, 1], want_weights, rtol=1e-9, atol=1e-12)
    assert np.array_equal(got[:, 2], want_lats) and np.array_equal(got[:, 3], want_lons)
    assert stored.ids.tolist() == want_ids.tolist() and np.allclose(stored.weights, want_weights, rtol=1e-9)
    assert again.region_id == stored.region_id and kept == (1, True)
    if region.name == "Fiji":
        assert want_lons.min() < -179 and want_lons.max() > 179  # the test crosses the antimeridian
    if region.name == "GeoJSON":
        assert want_ids.size == 1


def _docs_join() -> str:
    """The SQL block of docs/reading.md that joins the region weights."""
    blocks = re.findall(r"```sql\n(.*?)```", DOCS.read_text(), flags=re.S)
    return next(b for b in blocks if "era5_region_weights" in b)


def test_the_docs_sql_join_is_the_regions_series(db_url: str, region_table: str) -> None:
    code, out, err, want = cli("series", "--region", "LU", "--daily", "--variables", "temperature_2m_mean",
                               "--table", region_table, "--json")
    assert code == 0 and want is not None, out + err
    query = _docs_join().replace("weather_daily", f"{region_table}_daily")
    with connect(db_url) as conn:
        rows = conn.execute(query).fetchall()  # the docs' own text, a file of ours
    assert [r[0].strftime("%Y-%m-%dT%H:%M:%SZ") for r in rows] == want["time"]
    assert np.allclose([r[1] for r in rows], want["values"]["temperature_2m_mean"], atol=1e-4, rtol=0)


def test_a_database_without_the_extension_is_refused_naming_it(db_url: str) -> None:
    """A database where PostGIS is not created, read by a role that may not create it (the HTTP reads'
    read-only one): the read says which extension is missing."""
    import psycopg
    from psycopg import sql

    from era5etl.db import with_database
    from era5etl.db.local import LocalTimescale

    state = LocalTimescale().state()
    if state is None or state.reader_password is None or state.url() != db_url:
        pytest.fail("this test needs the checkout's own local server and its reader role (ERA5_DATABASE_URL unset)")
    # In the pipeline's database the same role fills a region it is the first to ask for (HTTP region=).
    square = {"type": "Polygon", "coordinates": [[[10.1, 10.1], [10.4, 10.1], [10.4, 10.3], [10.1, 10.1]]]}
    with connect(db_url) as conn:
        conn.execute("DELETE FROM era5_regions WHERE digest = %s", (digest(region_from_geojson(square).outline),))
        conn.commit()
    with connect(state.reader_url()) as conn:
        mine = weighed(conn, region_from_geojson(square))
    assert mine.region_id is not None and mine.ids.tolist() == cell_weights(mine.outline)[0].tolist()
    name = f"nogis_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(with_database(db_url, "postgres"), autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        with connect(state.reader_url(name)) as conn:
            with pytest.raises(ReadError, match="the 'postgis' extension is not created in this database"):
                weighed(conn, resolve_region("LU"))
            assert conn.execute("SELECT count(*) FROM pg_extension WHERE extname = 'postgis'").fetchone() == (0,)
    finally:
        with psycopg.connect(with_database(db_url, "postgres"), autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def test_stored_regions_are_listed_and_dropped_with_their_weights(db_url: str, tmp_path: Path) -> None:
    """``regions list`` shows a region a read kept, with its grid points; ``regions drop`` refuses an
    unknown name and, without --yes, removes nothing; with it the region and its weights go."""
    name = f"field_{uuid.uuid4().hex[:8]}"
    with connect(db_url) as conn:  # 3 x 3 cells around 45 N, 7 E (an earlier run's copy dropped first)
        kept = _fresh(conn, region_from_geojson({"type": "Polygon", "coordinates": [
            [[6.8, 44.8], [7.2, 44.8], [7.2, 45.2], [6.8, 45.2], [6.8, 44.8]]]}, name))
    code, out, err, listed = cli("regions", "list", "--json")
    assert code == 0 and listed is not None, out + err
    mine = [r for r in listed["regions"] if r["name"] == name]
    assert [(r["region_id"], r["points"], r["grid"]) for r in mine] == [(kept.region_id, kept.points, GRID)]
    assert kept.points == 9
    code, _, err, _ = cli("regions", "drop", f"no_such_{name}", "--yes")
    assert code == 2 and f"no stored region is called 'no_such_{name}'" in err and name in err, err
    code, _, err, _ = cli("regions", "drop", name)
    assert code == 2 and "without --yes" in err, err

    def left() -> tuple[int, int]:
        with connect(db_url) as conn:
            row = conn.execute("SELECT (SELECT count(*) FROM era5_regions WHERE region_id = %(id)s),"
                               " (SELECT count(*) FROM era5_region_weights WHERE region_id = %(id)s)",
                               {"id": kept.region_id}).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    assert left() == (1, 9)
    code, out, err, done = cli("regions", "drop", name, "--yes", "--json")
    assert code == 0 and done is not None, out + err
    assert [r["region_id"] for r in done["dropped"]] == [kept.region_id]
    assert left() == (0, 0)


def test_an_empty_name_drops_nothing(db_url: str) -> None:
    """Issue 47: `regions drop "" --yes` deleted every stored region without an ISO code ("" matched
    their missing code)."""
    with connect(db_url) as conn:
        before = conn.execute("SELECT count(*) FROM era5_regions").fetchone()
    for name in ("", "   "):
        code, _, err, _ = cli("regions", "drop", name, "--yes")
        assert code == 2 and "not an empty name" in err, err
    with connect(db_url) as conn:
        assert conn.execute("SELECT count(*) FROM era5_regions").fetchone() == before


def test_stored_names_are_listed_without_their_escapes(db_url: str) -> None:
    """A name stored before names were checked (here written by the superuser) is listed and refused
    with its control characters escaped, never sent to the terminal."""
    name = f"\x1b]0;pwned\x07{uuid.uuid4().hex[:6]}"
    with connect(db_url) as conn:
        conn.execute("INSERT INTO era5_regions (grid, name, source, digest, outline) VALUES"
                     " (%s, %s, 'GeoJSON', %s, ST_GeomFromText('POLYGON((0 0, 1 0, 1 1, 0 0))', 4326))",
                     (GRID, name, uuid.uuid4().hex))
        conn.commit()
    try:
        code, out, _, _ = cli("regions", "list")
        assert code == 0 and "\x1b" not in out and "\\x1b]0;pwned\\x07" in out, out
        code, _, err, _ = cli("regions", "drop", "nothing-such")
        assert code == 2 and "\x1b" not in err and "\\x1b]0;pwned" in err, err
    finally:
        with connect(db_url) as conn:
            conn.execute("DELETE FROM era5_regions WHERE name = %s", (name,))
            conn.commit()


def test_a_region_too_slow_to_weigh_within_a_request_is_refused_with_how(db_url: str) -> None:
    """Issue 47: Antarctica's weights took 4.5 min; over HTTP the request ended 503 after 30 s, stored
    nothing, and began again on the next request. Here a request's time is cut to 0.1 s for a box of
    60 x 60 degrees: refused with the command that computes and keeps the weights once; nothing stored."""
    from era5etl.core.datasets import ERA5_GRID
    from era5etl.serve.errors import TooSlowError
    from era5etl.serve.reads import weigh

    big = region_from_geojson({"type": "Polygon", "coordinates": [
        [[-30.05, -20.05], [29.95, -20.05], [29.95, 39.95], [-30.05, 39.95], [-30.05, -20.05]]]}, "big")
    with connect(db_url) as conn:
        conn.execute("DELETE FROM era5_regions WHERE digest = %s", (digest(big.outline),))
        conn.commit()
        conn.execute("SET statement_timeout = 100")
        with pytest.raises(TooSlowError, match=r"take longer than a request may .* compute them once from the "
                                               r"command line \(`python -m era5etl series --region 'big'"):
            weigh(conn, big, ERA5_GRID)
        conn.rollback()
        assert conn.execute("SELECT count(*) FROM era5_regions WHERE digest = %s",
                            (digest(big.outline),)).fetchone() == (0,)


def test_outlines_posted_over_http_are_kept_30_days_and_200_at_most(db_url: str) -> None:
    """Issue 47: nothing expired a posted outline's weights. The newest 200 posted outlines are kept, and
    none for more than 30 days; a file's or a country's outline is never dropped for them."""
    from era5etl.db import SQL_DIR, render

    def square(i: int) -> Any:  # a cell's worth each, far from anything else the tests store
        lon, lat = -170 + (i % 100) * 0.25, -60 + (i // 100) * 0.25
        return region_from_geojson({"type": "Polygon", "coordinates": [
            [[lon, lat], [lon + 0.1, lat], [lon + 0.1, lat + 0.1], [lon, lat]]]}, f"posted_{i}")

    with connect(db_url) as conn:
        conn.execute(render(SQL_DIR / "009_regions.sql"))  # the schema as a load applies it
        conn.execute("DELETE FROM era5_regions WHERE source = 'GeoJSON'")
        conn.commit()
        country = weighed(conn, resolve_region("LU"))
        old = weighed(conn, square(0))
        conn.execute("UPDATE era5_regions SET created_at = now() - interval '31 days' WHERE region_id = %s",
                     (old.region_id,))
        conn.commit()
        kept = [weighed(conn, square(i)).region_id for i in range(1, 202)]  # 201 more posted
        ids = {r[0] for r in conn.execute("SELECT region_id FROM era5_regions WHERE source = 'GeoJSON'")}
        assert old.region_id not in ids  # expired
        assert ids == set(kept[1:]) and len(ids) == 200  # the oldest of the 201 forgotten
        assert conn.execute("SELECT count(*) FROM era5_regions WHERE region_id = %s",
                            (country.region_id,)).fetchone() == (1,)
        conn.execute("DELETE FROM era5_regions WHERE source = 'GeoJSON'")
        conn.commit()
