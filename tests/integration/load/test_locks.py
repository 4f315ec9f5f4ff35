"""The chunk and month advisory locks (load.locks) between two real sessions of the test server: a
chunk's lock held by one transaction stops another writer of that chunk, not of the next chunk nor of
another table, and ends with the transaction; shared month locks stand together, an exclusive one waits."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone

import psycopg
import pytest

from era5etl.db import connect
from era5etl.load.locks import lock_chunk, lock_month

DAY = datetime(2024, 3, 5, tzinfo=UTC)


@pytest.fixture
def two(db_url: str) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with connect(db_url) as a, connect(db_url) as b:
        # A lock the other session holds is then an error at once rather than a wait.
        b.execute("SET lock_timeout = '200ms'")
        b.commit()
        yield a, b


def blocked(b: psycopg.Connection, take: object) -> bool:
    try:
        with b.cursor() as cur:
            take(cur)  # type: ignore[operator]
    except psycopg.errors.LockNotAvailable:
        b.rollback()
        return True
    b.rollback()
    return False


def test_a_chunks_lock_stops_its_other_writers_until_the_transaction_ends(two: tuple) -> None:
    a, b = two
    with a.cursor() as cur:
        lock_chunk(cur, "era5_x", DAY)
    # The same instant in another zone is the same chunk.
    assert blocked(b, lambda cur: lock_chunk(cur, "era5_x", DAY.astimezone(timezone(timedelta(hours=-5)))))
    assert not blocked(b, lambda cur: lock_chunk(cur, "era5_x", DAY + timedelta(days=1)))
    assert not blocked(b, lambda cur: lock_chunk(cur, "era5_y", DAY))
    a.commit()
    assert not blocked(b, lambda cur: lock_chunk(cur, "era5_x", DAY))


def test_month_locks_shared_by_writers_and_taken_alone_by_a_merge(two: tuple) -> None:
    a, b = two
    with a.cursor() as cur:
        lock_month(cur, "era5_x", DAY, shared=True)
    assert not blocked(b, lambda cur: lock_month(cur, "era5_x", DAY + timedelta(days=20), shared=True))
    assert blocked(b, lambda cur: lock_month(cur, "era5_x", DAY, shared=False))
    assert not blocked(b, lambda cur: lock_month(cur, "era5_x", DAY + timedelta(days=30), shared=False))
    a.rollback()
    assert not blocked(b, lambda cur: lock_month(cur, "era5_x", DAY, shared=False))
