"""PostGIS in the server image (db.image) and in a checkout's copy of it (db.local): a copy made before
PostGIS was added (no PostGIS files, a stamp without the package) runs without it - the schema still
applies, a region read is refused naming the extension - and gets it at the next ``up``, its cluster
kept."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from era5etl.db import connect, ensure_schema
from era5etl.db.image import EXTRA_PACKAGES, POSTGRES_MAJOR, STAMP, image_path, image_stamp
from era5etl.db.local import LocalTimescale
from era5etl.read.errors import ReadError
from era5etl.read.region_series import region_series
from era5etl.read.regions import resolve_region

EXTENSIONS = f"usr/share/postgresql/{POSTGRES_MAJOR}/extension"


def _has_postgis(root: Path) -> bool:
    # A link to /etc/alternatives/..., absolute inside the root: not followed from the host.
    return os.path.lexists(root / EXTENSIONS / "postgis.control")


@pytest.fixture
def server(db_url: str, tmp_path: Path) -> Iterator[LocalTimescale]:
    """A server of its own from the machine's image (db_url first: the image is built or brought up to date)."""
    home = tmp_path / "home"
    server = LocalTimescale(home=home)
    try:
        yield server
    finally:
        server.down()
        shutil.rmtree(home, ignore_errors=True)


def _age(root: Path) -> None:
    """Make ``root`` a copy from before PostGIS: its files gone, its stamp without the package. Unlinked
    and written anew, never written in place: the files are hard links to the image's."""
    for path in (root / EXTENSIONS).glob("postgis*"):
        path.unlink()
    stamp = {k: v for k, v in image_stamp(root).items() if k != "packages"}
    (root / STAMP).unlink()
    (root / STAMP).write_text(json.dumps(stamp))


def test_a_copy_from_before_postgis_gets_it_and_keeps_its_cluster(server: LocalTimescale) -> None:
    assert set(EXTRA_PACKAGES) <= set(image_stamp(image_path()).get("packages", "").split())
    url = server.up()
    assert _has_postgis(server.root)

    server.down()
    _age(server.root)
    assert _has_postgis(image_path())  # the image is untouched
    state = server.state()
    assert state is not None
    server._start(state)  # the old copy as it ran before: no refresh
    assert ensure_schema(url, "nogis") is True  # the schema applies without PostGIS
    with connect(url) as conn:
        assert conn.execute("SELECT to_regclass('era5_region_weights'), "
                            "(SELECT count(*) FROM pg_available_extensions WHERE name = 'postgis')").fetchone() \
            == (None, 0)
        with pytest.raises(ReadError, match="this server has no 'postgis' extension"):
            region_series(conn, "nogis", resolve_region("LU"), None, None, None, "day")

    server.down()
    assert server.up() == url  # refreshed from the image: PostGIS is back, the cluster (and its table) kept
    assert image_stamp(server.root) == image_stamp(image_path())
    assert _has_postgis(server.root)
    with connect(url) as conn:
        assert conn.execute("SELECT to_regclass('nogis') IS NOT NULL").fetchone() == (True,)
    assert ensure_schema(url, "nogis") is False
    with connect(url) as conn:
        assert conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'postgis'").fetchone()[0] \
            .startswith("3.")
        assert conn.execute("SELECT to_regclass('era5_region_weights') IS NOT NULL").fetchone() == (True,)
