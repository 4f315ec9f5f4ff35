"""The month ledger: one row per (table, month, area) that always says what that month holds.

Besides the state it keeps the figures each step learnt (rows, expver mix, request hash), the run
that last touched the month, the error if any, and the latest validation: when, which checks
failed, and the folder holding the Great Expectations result and Data Docs.

The SQL on ``era5_months`` lives here, reads included: the dashboard (``era5etl.report``) reads
the ledger through :func:`exists`, :func:`targets`, :func:`month_rows` and :func:`validation_path`,
on a connection it passes in so that one page view is one session.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from era5etl.core.months import Month
from era5etl.db import connect
from era5etl.track.liveness import reap

STATES = ("pending", "fetching", "staged", "loading", "loaded", "validating", "validated", "failed")

# States a month rests in once no step is working on it; an on-demand validation may only move
# a month between these, never one a running pipeline is in the middle of.
SETTLED = ("loaded", "validated", "failed")

# Columns someone may add to the ledger later; read when present so the dashboard works on either schema.
OPTIONAL_COLUMNS = ("validated_at", "validation_failed", "validation_path", "dataset", "levels")


def set_state(
    url: str, *, table: str, month: Month, area: str, grid: str, state: str, run_id: str,
    rows: int | None = None, expected_rows: int | None = None, expver: list[str] | None = None,
    request_hash: str | None = None, error: str | None = None, dataset: str | None = None,
    levels: list[int] | None = None,
) -> None:
    """Move a month's row to ``state``; ``dataset`` and ``levels`` (hPa) say what it is loaded from
    (kept from an earlier step when not given; single levels for a row that never said)."""
    if state not in STATES:
        raise ValueError(f"unknown ledger state {state!r}")
    with connect(url) as conn, conn.transaction():
        # COALESCE keeps what an earlier step learnt (rows, hash) when a later step does not say.
        # A step that (re)writes the data makes the last validation verdict stale, so it is cleared;
        # 'validated' and 'failed' keep it, since the validate step records it just before them.
        conn.execute(
            """
            INSERT INTO era5_months AS m (table_name, month, area, grid, state, rows, expected_rows,
                                          expver, request_hash, run_id, error, updated_at, dataset, levels)
            VALUES (%(table)s, %(month)s, %(area)s, %(grid)s, %(state)s, %(rows)s, %(expected)s,
                    %(expver)s, %(hash)s, %(run_id)s, %(error)s, now(), COALESCE(%(dataset)s, 'single-levels'),
                    %(levels)s)
            ON CONFLICT (table_name, month, area) DO UPDATE SET
                grid = EXCLUDED.grid, state = EXCLUDED.state,
                rows = COALESCE(EXCLUDED.rows, m.rows),
                expected_rows = COALESCE(EXCLUDED.expected_rows, m.expected_rows),
                expver = COALESCE(EXCLUDED.expver, m.expver),
                request_hash = COALESCE(EXCLUDED.request_hash, m.request_hash),
                dataset = CASE WHEN %(dataset)s::text IS NULL THEN m.dataset ELSE EXCLUDED.dataset END,
                levels = CASE WHEN %(dataset)s::text IS NULL THEN m.levels ELSE EXCLUDED.levels END,
                run_id = EXCLUDED.run_id, error = EXCLUDED.error, updated_at = now(),
                validated_at = CASE WHEN EXCLUDED.state IN ('validated', 'failed') THEN m.validated_at END,
                validation_failed = CASE WHEN EXCLUDED.state IN ('validated', 'failed')
                                         THEN m.validation_failed END,
                validation_path = CASE WHEN EXCLUDED.state IN ('validated', 'failed') THEN m.validation_path END
            """,
            {
                "table": table, "month": month.start.date(), "area": area, "grid": grid, "state": state,
                "rows": rows, "expected": expected_rows, "expver": expver, "hash": request_hash,
                "run_id": run_id, "error": error, "dataset": dataset, "levels": levels,
            },
        )


def other_months(url: str, table: str, month: Month, area: str) -> int:
    """How many ledger rows name ``table`` besides (month, area)'s."""
    with connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM era5_months WHERE table_name = %s AND NOT (month = %s AND area = %s)",
                           (table, month.start.date(), area)).fetchone()
    return int(row[0]) if row else 0


def record_land_points(url: str, *, table: str, month: Month, area: str, points: int) -> None:
    """Keep the land points of a staged ERA5-Land month (its download's land mask counted), which its
    validation expects; the month must be in the ledger (``set_state`` first)."""
    if points < 1:
        raise ValueError(f"{table} {month} {area}: {points} land points; an all-sea month is refused at staging")
    with connect(url) as conn, conn.transaction():
        cur = conn.execute("UPDATE era5_months SET land_points = %s WHERE table_name = %s AND month = %s"
                           " AND area = %s", (points, table, month.start.date(), area))
        if cur.rowcount != 1:
            raise LookupError(f"{table} {month} {area} is not in the ledger; its land points cannot be kept")


def land_points(url: str, *, table: str, month: Month, area: str) -> int | None:
    """The land points recorded when the month was staged, None if none were."""
    with connect(url) as conn:
        row = conn.execute("SELECT land_points FROM era5_months WHERE table_name = %s AND month = %s AND area = %s",
                           (table, month.start.date(), area)).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def record_validation(
    url: str, *, table: str, month: Month, area: str, failed: list[str], path: str | None,
    observed_rows: int | None = None, run_id: str | None = None, settle: bool = False,
) -> bool:
    """Record a validation's verdict and result folder on the month's ledger row.

    The pipeline's validate step moves the state itself, so by default only the verdict is written.
    With ``settle`` (an on-demand run from the CLI) a month at rest (loaded, validated or failed)
    also moves to validated or failed with the observed rows, so the ledger keeps telling the truth
    about the table after someone looks again; a month a pipeline is working on is left alone.
    Returns whether a ledger row was updated (False: the month is not in the ledger, or is busy).
    """
    error = f"validate: failed {', '.join(failed)}" if failed else None
    with connect(url) as conn, conn.transaction():
        cur = conn.execute(
            """
            UPDATE era5_months SET
                validated_at = now(), validation_failed = %(failed)s, validation_path = %(path)s,
                updated_at = now(),
                state = CASE WHEN %(settle)s THEN %(state)s ELSE state END,
                error = CASE WHEN %(settle)s THEN %(error)s ELSE error END,
                rows = CASE WHEN %(settle)s THEN COALESCE(%(rows)s, rows) ELSE rows END,
                run_id = CASE WHEN %(settle)s THEN COALESCE(%(run_id)s, run_id) ELSE run_id END
            WHERE table_name = %(table)s AND month = %(month)s AND area = %(area)s
              AND (NOT %(settle)s OR state = ANY(%(settled)s))
            """,
            {
                "failed": failed, "path": path, "settle": settle, "state": "failed" if failed else "validated",
                "error": error, "rows": observed_rows, "run_id": run_id, "table": table,
                "month": month.start.date(), "area": area, "settled": list(SETTLED),
            },
        )
        return cur.rowcount > 0


def loaded_from(url: str, table: str, month: Month, area: str) -> tuple[str, list[int]] | None:
    """(dataset, levels) the ledger records for a month, or None when it has no such row."""
    with connect(url) as conn:
        if not exists(conn):
            return None
        row = conn.execute("SELECT dataset, levels FROM era5_months WHERE table_name = %s AND month = %s"
                           " AND area = %s", (table, month.start.date(), area)).fetchone()
    return None if row is None else (str(row[0]), [int(v) for v in row[1] or []])


def months(url: str, table: str | None = None) -> list[dict[str, Any]]:
    """The ledger's rows (of ``table``, or all), a month whose run is gone read as failed (track.liveness)."""
    reap(url, table)
    with connect(url) as conn:
        cur = conn.execute(
            "SELECT table_name, to_char(month, 'YYYY-MM') AS month, area, grid, state, rows, expected_rows,"
            " expver, request_hash, run_id, error, created_at, updated_at, validated_at, validation_failed,"
            " validation_path, dataset, levels FROM era5_months"
            " WHERE %(table)s::text IS NULL OR table_name = %(table)s ORDER BY table_name, month, area",
            {"table": table},
        )
        names = [d.name for d in cur.description or []]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


# --- reads for the dashboard ---------------------------------------------------------------------


def exists(conn: psycopg.Connection[Any]) -> bool:
    """Whether the ledger table is there at all (a database the pipeline never ran on has none)."""
    return conn.execute("SELECT to_regclass('era5_months') IS NOT NULL").fetchone() == (True,)


# What makes a table one of the pipeline's: the weather table's keys and coordinates (sql/010).
WEATHER_KEYS = ("time", "location_id", "latitude", "longitude")


def targets(conn: psycopg.Connection[Any]) -> list[dict[str, Any]]:
    """Each (table_name, area) in the ledger with its number of ``months`` and latest ``updated_at``,
    the most recently updated first; only tables that exist as hypertables with the weather table's
    columns (a ledger row can outlive its table: tests and users drop tables)."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "WITH m AS (SELECT table_name, area, count(*) AS months, max(updated_at) AS updated_at,"
            "  to_regclass(array_to_string(ARRAY(SELECT quote_ident(p)"
            "   FROM unnest(string_to_array(table_name, '.')) AS p), '.')) AS rel"
            "  FROM era5_months GROUP BY table_name, area)"
            " SELECT table_name, area, months, updated_at FROM m"
            " WHERE rel IN (SELECT format('%%I.%%I', hypertable_schema, hypertable_name)::regclass"
            "               FROM timescaledb_information.hypertables)"
            " AND (SELECT count(*) FROM pg_attribute a WHERE a.attrelid = m.rel AND NOT a.attisdropped"
            "      AND a.attname = ANY(%(keys)s)) = %(n)s"
            " ORDER BY updated_at DESC, table_name, area",
            {"keys": list(WEATHER_KEYS), "n": len(WEATHER_KEYS)}).fetchall()


def latest_validated_table(conn: psycopg.Connection[Any]) -> str | None:
    """The table (of :func:`targets`: existing weather hypertables) whose validated month was validated
    most recently, or None when no month of any is validated."""
    names = [str(t["table_name"]) for t in targets(conn)]
    order = sql.SQL("coalesce(validated_at, updated_at)" if "validated_at" in _columns(conn) else "updated_at")
    row = conn.execute(sql.SQL("SELECT table_name FROM era5_months WHERE state = 'validated' AND table_name = ANY(%s)"
                               " ORDER BY {} DESC LIMIT 1").format(order), (names,)).fetchone()
    return None if row is None else str(row[0])


def _columns(conn: psycopg.Connection[Any]) -> set[str]:
    return {str(r[0]) for r in conn.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = 'era5_months'::regclass AND attnum > 0"
        " AND NOT attisdropped")}


def month_rows(conn: psycopg.Connection[Any], table: str, area: str) -> list[dict[str, Any]]:
    """The ledger rows of one table and area by month, with the :data:`OPTIONAL_COLUMNS` the schema has."""
    present = _columns(conn)
    optional = [sql.Identifier(c) for c in OPTIONAL_COLUMNS if c in present]
    query = sql.SQL(
        "SELECT month, grid, state, rows, expected_rows, expver, run_id, error, updated_at{optional}"
        " FROM era5_months WHERE table_name = %(table)s AND area = %(area)s ORDER BY month"
    ).format(optional=sql.SQL("").join(sql.SQL(", ") + c for c in optional))
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(query, {"table": table, "area": area}).fetchall()


def validation_path(conn: psycopg.Connection[Any], table: str, month: date, slug: str) -> str | None:
    """The validation folder the ledger records for a month, the area given as its slug (``area_slug``);
    None when there is no such month, no verdict, or no ``validation_path`` column."""
    has_column = conn.execute(
        "SELECT EXISTS (SELECT FROM pg_attribute WHERE attrelid = to_regclass('era5_months')"
        " AND attname = 'validation_path' AND NOT attisdropped)").fetchone()
    if has_column != (True,):
        return None
    row = conn.execute(
        "SELECT validation_path FROM era5_months WHERE table_name = %s AND month = %s"
        " AND replace(area, '/', '_') = %s AND validation_path IS NOT NULL ORDER BY updated_at DESC LIMIT 1",
        (table, month, slug)).fetchone()
    return str(row[0]) if row is not None else None
