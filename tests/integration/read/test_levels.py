"""The level a read asks for (read.levels), on real hypertables of the test server: a table on pressure
levels needs one of the levels it holds, a single-level table refuses any, each refusal saying what to give."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from psycopg import sql

from era5etl.core.datasets import PRESSURE_LEVELS
from era5etl.db import connect, drop_table, ensure_schema
from era5etl.read.errors import ReadError
from era5etl.read.levels import check_level, level_filter

pytestmark = pytest.mark.integration


@pytest.fixture
def levels_table(db_url: str) -> Iterator[str]:
    name = f"pl_{uuid.uuid4().hex[:10]}"
    ensure_schema(db_url, name, dataset=PRESSURE_LEVELS)
    yield name
    with connect(db_url, autocommit=True) as conn:
        drop_table(conn, name)
        conn.execute("DELETE FROM era5_tables WHERE table_name = %s", (name,))


def test_a_table_on_levels_needs_a_level_it_holds(db_url: str, levels_table: str) -> None:
    with connect(db_url) as conn:
        with pytest.raises(ReadError, match="none loaded yet"):
            check_level(conn, levels_table, None)
        conn.execute(sql.SQL("INSERT INTO {} (time, level, location_id, latitude, longitude) VALUES"
                             " ('2024-01-01', 500, 1, 45.0, 7.0), ('2024-01-01', 850, 1, 45.0, 7.0)").format(
                                 sql.Identifier(levels_table)))
        assert check_level(conn, levels_table, 850) == 850
        with pytest.raises(ReadError, match=r"give a level in hPa.*one of 500, 850"):
            check_level(conn, levels_table, None)
        with pytest.raises(ReadError, match="no rows at 700 hPa; its levels are 500, 850"):
            check_level(conn, levels_table, 700)
        conn.rollback()


def test_a_single_level_table_refuses_a_level(db_url: str, table: str) -> None:
    with connect(db_url) as conn:
        assert check_level(conn, table, None) is None
        with pytest.raises(ReadError, match=r"no pressure levels.*leave --level out"):
            check_level(conn, table, 500)


def test_the_filter_is_there_only_with_a_level(db_url: str) -> None:
    with connect(db_url) as conn:
        assert level_filter(850).as_string(conn) == " AND level = %(level)s"
        assert level_filter(None).as_string(conn) == ""
