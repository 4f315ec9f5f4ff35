"""Report: what the ledger and the metrics say about each month, as data, JSON and an HTML page.

Free of Airflow: the Airflow plugin (``era5etl.airflow.plugins.era5_dashboard``) only authenticates and routes;
everything it shows is gathered by :func:`load_dashboard` from a database URL and drawn by
:func:`render_page`, which is pure (rows in, HTML out) so it is tested without a server.

One concern per module: ``model`` (the dataclasses and ``build``), ``data`` (reading them through
``era5etl.track``), ``docs`` (validation Data Docs paths), ``export`` (JSON), ``fmt`` (how values
are written), ``charts`` (SVG) and ``page`` (HTML and CSS); the Data view: ``dataview`` (what is
loaded, from the ledger), ``datapage`` (its HTML) and ``assets`` (the static files:
``static/dataview.js``, which draws the series with uPlot and the map from ``era5etl.serve``'s JSON
endpoints, its CSS, and uPlot itself).
"""

from era5etl.report.assets import static_file as static_file, static_missing as static_missing
from era5etl.report.charts import (
    chunk_chart as chunk_chart,
    month_rate_chart as month_rate_chart,
    nice_ticks as nice_ticks,
)
from era5etl.report.data import (
    load_dashboard as load_dashboard,
    load_data_view as load_data_view,
    validation_path as validation_path,
)
from era5etl.report.datapage import render_data_page as render_data_page
from era5etl.report.dataview import DataView as DataView, build_data_view as build_data_view
from era5etl.report.docs import docs_file as docs_file, docs_href as docs_href, docs_root as docs_root
from era5etl.report.export import to_json as to_json
from era5etl.report.fmt import byte_rate as byte_rate, short as short
from era5etl.report.model import (
    Dashboard as Dashboard,
    ReportError as ReportError,
    Target as Target,
    ValidationView as ValidationView,
    build as build,
    parse_month as parse_month,
)
from era5etl.report.page import STATE_COLOURS as STATE_COLOURS, render_page as render_page
