"""db.facts on the test server: what a read learns of a table is kept on a kept connection (no statement
asked again) until the server writes anything - a column added by hand, a load, a table dropped - and
is never kept elsewhere; through the Python API a warm call of a place sends two statements, and a
change between two calls is seen by the second."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from era5etl import api
from era5etl.db import connect, drop_table, facts, session
from era5etl.db.registry import table_dataset
from era5etl.db.rollups import data_columns
from era5etl.read.errors import ReadError

from ..helpers import cli

INSTANT = "newcds_instant_t2m_u10_v10_d2m_sp_2025-05_hourly_expver0005.nc"
ACCUM = "newcds_accum_tp_2025-05_hourly_expver0005.nc"


class Counting(psycopg.Cursor[Any]):
    """A cursor that counts the statements its connection sends."""

    sent = 0

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        Counting.sent += 1
        return super().execute(*args, **kwargs)


@pytest.fixture
def counted(db_url: str) -> Iterator[psycopg.Connection[Any]]:
    conn = psycopg.connect(db_url, cursor_factory=Counting)
    try:
        yield conn
    finally:
        conn.close()


def sent(conn: psycopg.Connection[Any], call: Any) -> tuple[Any, int]:
    before = Counting.sent
    found = call(conn)
    return found, Counting.sent - before


def test_an_answer_is_kept_until_the_server_writes(db_url: str, table: str,
                                                   counted: psycopg.Connection[Any]) -> None:
    facts.keep(counted)
    facts.check(counted)
    columns, asked = sent(counted, lambda c: data_columns(c, table))
    assert asked == 1 and "temperature_2m" in columns
    again, asked = sent(counted, lambda c: data_columns(c, table))
    assert (again, asked) == (columns, 0)  # kept: nothing sent
    again.append("changed by the caller")
    assert data_columns(counted, table) == columns  # a copy was handed out
    with connect(db_url, autocommit=True) as other:  # a column added by hand, on another connection
        other.execute(sql.SQL("ALTER TABLE {} ADD COLUMN made_by_hand real").format(sql.Identifier(table)))
    assert data_columns(counted, table) == columns  # not checked yet: the same answer
    facts.check(counted)
    assert data_columns(counted, table) == [*columns, "made_by_hand"]
    facts.forget(counted)
    assert sent(counted, lambda c: data_columns(c, table))[1] == 1


def test_a_connection_not_kept_asks_every_time(table: str, counted: psycopg.Connection[Any]) -> None:
    facts.check(counted)  # checking alone keeps nothing
    assert sent(counted, lambda c: table_dataset(c, table))[1] > 0
    assert sent(counted, lambda c: table_dataset(c, table))[1] > 0


def test_an_error_is_not_kept(counted: psycopg.Connection[Any]) -> None:
    facts.keep(counted)
    facts.check(counted)
    missing = f"t_{uuid.uuid4().hex[:10]}"
    for _ in range(2):
        with pytest.raises(ReadError, match="does not exist"):
            api.series(lat=40.5, lon=-8.5, table=missing)


def test_the_python_api_sends_two_statements_a_warm_call_and_sees_each_change(db_url: str, samples: Path) -> None:
    name = f"t_{uuid.uuid4().hex[:10]}"
    code, _, err, _ = cli("load-file", str(samples / INSTANT), "--table", name)
    assert code == 0, err
    session.close()
    try:
        first = api.series(lat=40.5, lon=-8.5, step="hour", table=name, url=db_url)
        with session.session(db_url) as conn:
            conn.cursor_factory = Counting
        before = Counting.sent
        again = api.series(lat=40.5, lon=-8.5, step="hour", table=name, url=db_url)
        assert Counting.sent - before == 2  # the server's position, then the rows
        assert again.equals(first) and first["total_precipitation"].isna().all()
        # A load between two calls (the month's rain into the same rows): the second call reads it.
        code, _, err, _ = cli("load-file", str(samples / ACCUM), "--table", name)
        assert code == 0, err
        rain = api.series(lat=40.5, lon=-8.5, step="hour", variables=["total_precipitation"], table=name, url=db_url)
        assert rain["total_precipitation"].notna().sum() > 0
        # The table dropped by hand: the next call says so, as it did before anything was kept.
        with connect(db_url, autocommit=True) as other:
            drop_table(other, name)
        with pytest.raises(ReadError, match="does not exist"):
            api.series(lat=40.5, lon=-8.5, step="hour", table=name, url=db_url)
    finally:
        session.close()
        with connect(db_url, autocommit=True) as conn:
            drop_table(conn, name)
            conn.execute("DELETE FROM era5_tables WHERE table_name = %s", (name,))
