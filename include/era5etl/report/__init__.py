"""Report: what the ledger and the metrics say about each month, as data, JSON and an HTML page."""

from era5etl.report.dashboard import (
    STATE_COLOURS as STATE_COLOURS,
    Dashboard as Dashboard,
    ReportError as ReportError,
    Target as Target,
    Validation as Validation,
    build as build,
    byte_rate as byte_rate,
    chunk_chart as chunk_chart,
    docs_file as docs_file,
    docs_href as docs_href,
    docs_root as docs_root,
    fetch as fetch,
    month_rate_chart as month_rate_chart,
    nice_ticks as nice_ticks,
    parse_month as parse_month,
    render_page as render_page,
    short as short,
    to_json as to_json,
    validation_path as validation_path,
)
