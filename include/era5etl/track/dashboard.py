"""The dashboard's reads of ``era5_metrics`` (``era5etl.report``): the latest figures of each month and
task, every load, a load's chunks and the seconds of given runs, on a connection the caller passes in."""

from __future__ import annotations

from datetime import date
from typing import Any

import psycopg
from psycopg.rows import dict_row


def latest_figures(conn: psycopg.Connection[Any], table: str, area: str) -> list[dict[str, Any]]:
    """The latest row of each (month, task) of one table and area; a load's ``detail`` without its chunk list.

    For ``fetch``, the latest attempt that downloaded: a retry or rerun that found the complete
    download already staged records its bytes in no time ("80.6 MB/s in 0.00 s"), which says nothing
    of the transfer. Only when no attempt downloaded (the month was staged elsewhere) is that shown.
    """
    # The load's chunk list is the one large detail; load_chunks reads it for one month only.
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "SELECT DISTINCT ON (month, task) month, task, run_id, rows, bytes, seconds, rows_per_s, peak_rss_mb,"
            " recorded_at, CASE WHEN task = 'load' THEN detail - 'chunks' ELSE detail END AS detail"
            " FROM era5_metrics WHERE table_name = %(table)s AND area = %(area)s"
            " ORDER BY month, task, coalesce(task = 'fetch' AND detail ->> 'reused' = 'true', false),"
            " recorded_at DESC, id DESC", {"table": table, "area": area}).fetchall()


def load_runs(conn: psycopg.Connection[Any], table: str, area: str) -> list[dict[str, Any]]:
    """Every recorded load of one table and area, oldest first: month, rows, seconds, rate, when, run."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "SELECT month, rows, seconds, rows_per_s, recorded_at, run_id FROM era5_metrics"
            " WHERE table_name = %(table)s AND area = %(area)s AND task = 'load' ORDER BY recorded_at, id",
            {"table": table, "area": area}).fetchall()


def load_chunks(conn: psycopg.Connection[Any], table: str, area: str, month: date) -> list[Any]:
    """The ``detail.chunks`` list of a month's latest load as stored (empty if none was recorded)."""
    row = conn.execute(
        "SELECT detail -> 'chunks' FROM era5_metrics WHERE table_name = %(table)s AND area = %(area)s"
        " AND task = 'load' AND month = %(month)s ORDER BY recorded_at DESC, id DESC LIMIT 1",
        {"table": table, "area": area, "month": month}).fetchone()
    return row[0] if row is not None and isinstance(row[0], list) else []

def task_seconds(conn: psycopg.Connection[Any], table: str, area: str, run_ids: list[str]) -> dict[str, float]:
    """Seconds each task recorded over the given runs of one table and area (the runs' own work)."""
    rows = conn.execute(
        "SELECT task, sum(seconds) FROM era5_metrics WHERE table_name = %s AND area = %s AND run_id = ANY(%s)"
        " GROUP BY task ORDER BY min(id)", (table, area, run_ids)).fetchall()
    return {str(task): float(seconds) for task, seconds in rows}
