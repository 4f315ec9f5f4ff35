"""Airflow Assets: a table's Asset is updated each time a month of it is validated, for downstream DAGs.

One Asset per weather table, ``era5://<table>`` (:func:`table_asset`). The table is a run param, so the
Asset cannot be named when the DAG is parsed: the validate task's outlet is the alias :data:`VALIDATED`,
and the task adds the run's own table's Asset to it at run time with the month in the event's extra
(``outlet_events[alias].add(Asset(...), extra=...)``, Airflow's way for an Asset known at run time).
An event is recorded only when validate succeeds: a month that failed validation updates nothing.

A downstream DAG schedules on the table's Asset (``schedule=[table_asset("weather")]``) and finds
the month(s) that landed in its triggering events' extra: ``dags/examples/era5_downstream.py``.
"""

from __future__ import annotations

import logging
from typing import Any

from airflow.sdk import Asset, AssetAlias

log = logging.getLogger(__name__)

# The validate task's outlet; it resolves to the Asset of the table each run validated.
VALIDATED = AssetAlias("era5_month_validated")


def table_asset(table: str) -> Asset:
    """The Asset of a weather table (as the ledger names it, ``weather`` or ``schema.weather``)."""
    return Asset(f"era5://{table}")


def record_validated(context: Any, table: str, extra: dict[str, Any]) -> None:
    """Add an event of ``table``'s Asset, carrying ``extra`` (month, area, rows), to the validate task's alias."""
    context["outlet_events"][VALIDATED].add(table_asset(table), extra=extra)


def landed_months(**context: Any) -> list[dict[str, Any]]:
    """A downstream task: the months that triggered this run, one event's extra each (month, area,
    grid, rows, the run that validated it), oldest first; logged, and returned (XCom) for the next task."""
    events = context.get("triggering_asset_events") or {}
    landed = []
    for asset, asset_events in events.items():
        if not isinstance(asset, Asset):  # the same events again under the alias that produced them
            continue
        for event in asset_events:
            extra = dict(event.extra or {})
            log.info("%s: %s %s validated, %s rows (run %s)", asset.uri, extra.get("month"), extra.get("area"),
                     extra.get("rows"), extra.get("run_id"))
            landed.append({"asset": asset.uri, **extra})
    return sorted(landed, key=lambda e: (str(e.get("month")), str(e.get("area"))))
