"""Report: what the ledger and the metrics say about each month, as data, JSON and an HTML page."""

from era5etl.report.dashboard import (
    STATE_COLOURS as STATE_COLOURS,
)
from era5etl.report.dashboard import (
    Dashboard as Dashboard,
)
from era5etl.report.dashboard import (
    ReportError as ReportError,
)
from era5etl.report.dashboard import (
    Target as Target,
)
from era5etl.report.dashboard import (
    Validation as Validation,
)
from era5etl.report.dashboard import (
    area_slug as area_slug,
)
from era5etl.report.dashboard import (
    build as build,
)
from era5etl.report.dashboard import (
    byte_rate as byte_rate,
)
from era5etl.report.dashboard import (
    chunk_chart as chunk_chart,
)
from era5etl.report.dashboard import (
    docs_file as docs_file,
)
from era5etl.report.dashboard import (
    docs_href as docs_href,
)
from era5etl.report.dashboard import (
    docs_root as docs_root,
)
from era5etl.report.dashboard import (
    fetch as fetch,
)
from era5etl.report.dashboard import (
    month_rate_chart as month_rate_chart,
)
from era5etl.report.dashboard import (
    nice_ticks as nice_ticks,
)
from era5etl.report.dashboard import (
    parse_month as parse_month,
)
from era5etl.report.dashboard import (
    render_page as render_page,
)
from era5etl.report.dashboard import (
    short as short,
)
from era5etl.report.dashboard import (
    to_json as to_json,
)
from era5etl.report.dashboard import (
    validation_path as validation_path,
)
