"""The write settings (load.session) on the test server: each holds for the transaction that sets it
and is gone after it, so a pooled or reused connection keeps its own settings."""

from __future__ import annotations

import pytest

from era5etl.db import connect
from era5etl.load.session import (
    DECOMPRESSION_LIMIT,
    INSERT_SETTINGS,
    TILES_COPY_SETTINGS,
    apply_settings,
    lift_decompression_limit,
)


def current(cur: object, name: str) -> str:
    """The setting's value; '' when unset (a setting of a library not loaded yet is NULL before any
    SET and '' after one ends: PostgreSQL keeps the placeholder)."""
    return str(cur.execute("SELECT current_setting(%s, true)", (name,)).fetchone()[0] or "")  # type: ignore[attr-defined]


@pytest.mark.parametrize("settings", [INSERT_SETTINGS, TILES_COPY_SETTINGS])
def test_settings_hold_for_their_transaction_only(db_url: str, settings: dict[str, str]) -> None:
    with connect(db_url, autocommit=True) as conn:  # each statement its own transaction, but the block's
        before = {name: current(conn, name) for name in settings}
        with conn.transaction(), conn.cursor() as cur:
            apply_settings(cur, settings)
            lift_decompression_limit(cur)
            assert {name: current(cur, name) for name in settings} == settings
            assert current(cur, DECOMPRESSION_LIMIT) == "0"
        assert {name: current(conn, name) for name in settings} == before
        assert current(conn, DECOMPRESSION_LIMIT) != "0"
