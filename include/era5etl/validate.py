"""Prove a loaded month with a Great Expectations suite run inside the database.

The batch is a SQL query asset over exactly the month and area, so every expectation becomes an
aggregate the server computes; no row is pulled into Python, which keeps the check affordable on
a 772-million-row month.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any

from psycopg import sql

from era5etl.db import connect, table_ident
from era5etl.months import Area, Grid, Month, expected_rows

# Before GX is imported: no analytics calls to the outside, no progress bars in task logs.
os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")

log = logging.getLogger(__name__)


@dataclass
class Validation:
    success: bool
    expected_rows: int
    observed_rows: int | None
    failed: list[str]
    seconds: float
    result: dict[str, Any] = field(repr=False)


def month_query(url: str, table: str, month: Month, area: Area) -> str:
    """The month's rows inside the area box, as literal SQL for GX (which takes no bound parameters)."""
    stmt = sql.SQL(
        "SELECT time, location_id FROM {table} WHERE time >= {t0} AND time < {t1}"
        " AND latitude BETWEEN {south} AND {north} AND longitude BETWEEN {west} AND {east}"
    ).format(
        table=table_ident(table),
        t0=sql.Literal(month.start),
        t1=sql.Literal(month.end),
        south=sql.Literal(float(area.south)),
        north=sql.Literal(float(area.north)),
        west=sql.Literal(float(area.west)),
        east=sql.Literal(float(area.east)),
    )
    with connect(url) as conn:
        return stmt.as_string(conn)


def validate_month(url: str, table: str, month: Month, area: Area, grid: Grid) -> Validation:
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig
    from great_expectations.expectations import (  # type: ignore[attr-defined]
        ExpectColumnValuesToNotBeNull,
        ExpectTableRowCountToEqual,
    )

    expected = expected_rows(month, area, grid)
    query = month_query(url, table, month, area)
    began = time.perf_counter()
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    source = context.data_sources.add_postgres(
        "era5", connection_string=url.replace("postgresql://", "postgresql+psycopg://", 1)
    )
    asset = source.add_query_asset(f"{table}_{month}", query=query)
    batch = asset.add_batch_definition_whole_table("month")
    suite = context.suites.add(gx.ExpectationSuite(name=f"era5_month_{table}"))
    suite.add_expectation(ExpectTableRowCountToEqual(value=expected))
    suite.add_expectation(ExpectColumnValuesToNotBeNull(column="time"))
    suite.add_expectation(ExpectColumnValuesToNotBeNull(column="location_id"))
    definition = context.validation_definitions.add(
        gx.ValidationDefinition(name=f"{table}_{month}_{area}", data=batch, suite=suite)
    )
    outcome = definition.run()
    seconds = time.perf_counter() - began
    observed: int | None = None
    failed: list[str] = []
    for res in outcome.results:
        kind = res.expectation_config.type if res.expectation_config else "unknown"
        if kind == "expect_table_row_count_to_equal":
            observed = res.result.get("observed_value")
        if not res.success:
            column = res.expectation_config.kwargs.get("column") if res.expectation_config else None
            failed.append(f"{kind}({column})" if column else kind)
    return Validation(
        success=bool(outcome.success),
        expected_rows=expected,
        observed_rows=observed,
        failed=failed,
        seconds=seconds,
        result=outcome.to_json_dict(),  # type: ignore[no-untyped-call]
    )
