"""The month ledger: one row per (table, month, area) that always says what that month holds."""

from __future__ import annotations

from typing import Any

from era5etl.db import connect
from era5etl.months import Month

STATES = ("pending", "fetching", "staged", "loading", "loaded", "validated", "failed")


def set_state(
    url: str, *, table: str, month: Month, area: str, grid: str, state: str, run_id: str,
    rows: int | None = None, expected_rows: int | None = None, expver: list[str] | None = None,
    request_hash: str | None = None, error: str | None = None,
) -> None:
    if state not in STATES:
        raise ValueError(f"unknown ledger state {state!r}")
    with connect(url) as conn, conn.transaction():
        # COALESCE keeps what an earlier step learnt (rows, hash) when a later step does not say.
        conn.execute(
            """
            INSERT INTO era5_months AS m (table_name, month, area, grid, state, rows, expected_rows,
                                          expver, request_hash, run_id, error, updated_at)
            VALUES (%(table)s, %(month)s, %(area)s, %(grid)s, %(state)s, %(rows)s, %(expected)s,
                    %(expver)s, %(hash)s, %(run_id)s, %(error)s, now())
            ON CONFLICT (table_name, month, area) DO UPDATE SET
                grid = EXCLUDED.grid, state = EXCLUDED.state,
                rows = COALESCE(EXCLUDED.rows, m.rows),
                expected_rows = COALESCE(EXCLUDED.expected_rows, m.expected_rows),
                expver = COALESCE(EXCLUDED.expver, m.expver),
                request_hash = COALESCE(EXCLUDED.request_hash, m.request_hash),
                run_id = EXCLUDED.run_id, error = EXCLUDED.error, updated_at = now()
            """,
            {
                "table": table, "month": month.start.date(), "area": area, "grid": grid, "state": state,
                "rows": rows, "expected": expected_rows, "expver": expver, "hash": request_hash,
                "run_id": run_id, "error": error,
            },
        )


def months(url: str, table: str | None = None) -> list[dict[str, Any]]:
    with connect(url) as conn:
        cur = conn.execute(
            "SELECT table_name, to_char(month, 'YYYY-MM') AS month, area, grid, state, rows, expected_rows,"
            " expver, request_hash, run_id, error, updated_at FROM era5_months"
            " WHERE %(table)s::text IS NULL OR table_name = %(table)s ORDER BY table_name, month, area",
            {"table": table},
        )
        names = [d.name for d in cur.description or []]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
