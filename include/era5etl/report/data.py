"""What the dashboard reads from the database: the ledger and the metrics, through ``era5etl.track``;
and from the disk: what staging holds, through ``era5etl.fetch.retention``.

The SQL on the pipeline's own tables lives in ``track.ledger`` and ``track.metrics``; this module
only opens the connection, asks them in order and hands the rows to :func:`report.model.build`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import psycopg

from era5etl import settings
from era5etl.db import connect
from era5etl.fetch import retention
from era5etl.report.dataview import DataView, build_data_view
from era5etl.report.model import Chunk, Dashboard, Target, build
from era5etl.track import ledger, liveness, metrics


def _targets(conn: psycopg.Connection[Any], table: str | None, area: str | None) -> tuple[list[Target], str | None,
             str | None]:
    """Every (table, area) the ledger knows, and the pair to show: the one given, else the latest updated."""
    targets = [Target(r["table_name"], r["area"], int(r["months"]), r["updated_at"]) for r in ledger.targets(conn)]
    if table is None and targets:
        table = targets[0].table
    if area is None and table is not None:
        area = next((t.area for t in targets if t.table == table), None)
    return targets, table, area


def load_dashboard(url: str, table: str | None = None, area: str | None = None,
                   month: date | None = None, staging_dir: Path | None = None) -> Dashboard:
    """Read the dashboard for ``table`` and ``area`` (default: the pair updated most recently), with
    what staging holds (``staging_dir``, default ``ERA5_STAGING_DIR``)."""
    now = datetime.now(UTC)
    staging = retention.usage(staging_dir if staging_dir is not None else settings.load().staging_dir)
    liveness.reap(url)  # a month whose run is gone reads failed
    with connect(url) as conn:
        if not ledger.exists(conn):
            return Dashboard(table=table, area=area, generated_at=now, staging=staging)
        targets, table, area = _targets(conn, table, area)
        if table is None or area is None:
            return Dashboard(table=table, area=area, targets=targets, generated_at=now, staging=staging)

        dashboard = build(table=table, area=area, month_rows=ledger.month_rows(conn, table, area),
                          task_rows=metrics.latest_figures(conn, table, area),
                          load_rows=metrics.load_runs(conn, table, area), selected=month, targets=targets,
                          generated_at=now, staging=staging)
        if dashboard.selected is None:
            return dashboard
        # The load's chunk list is the one large detail; it is read for the selected month only.
        chunks = metrics.load_chunks(conn, table, area, dashboard.selected)
    return replace(dashboard, chunks=[Chunk.from_detail(c) for c in chunks if isinstance(c, Mapping)])


def validation_path(url: str, table: str, month: date, slug: str) -> str | None:
    """The ledger's validation folder for a month, or None (no such month, no verdict, or no such column)."""
    with connect(url) as conn:
        return ledger.validation_path(conn, table, month, slug)


def load_data_view(url: str, table: str | None = None, area: str | None = None) -> DataView:
    """The Data view of ``table`` and ``area`` (default: the pair updated most recently, as the dashboard)."""
    now = datetime.now(UTC)
    liveness.reap(url)  # a month whose run is gone reads failed
    with connect(url) as conn:
        if not ledger.exists(conn):
            return DataView(table=table, area=area, generated_at=now)
        targets, table, area = _targets(conn, table, area)
        rows = ledger.month_rows(conn, table, area) if table is not None and area is not None else []
    return build_data_view(table, area, rows, targets, now)
