"""Serve: the table read over HTTP, one place's series and one hour's map, with limits on each answer.

Free of Airflow: the plugin (``era5etl.airflow.plugins.era5_dashboard``) authenticates and routes; the query
strings are FastAPI query models (``queries``) whose validators call the parsers (``params``), the
size of each answer is checked before reading (``limits``), the table (one of the pipeline's, in the
ledger) and its span come from catalogs (``extent``), and the reads themselves are ``era5etl.read``'s
(``reads``). Every refusal is an InputError whose HTTP status ``errors`` chooses.
"""

from era5etl.serve.errors import (
    LimitError as LimitError,
    NotFoundError as NotFoundError,
    TooSlowError as TooSlowError,
    http_status as http_status,
)
from era5etl.serve.limits import MAX_MAP_CELLS as MAX_MAP_CELLS, MAX_SERIES_ROWS as MAX_SERIES_ROWS
from era5etl.serve.queries import (
    MapRequest as MapRequest,
    SeriesRequest as SeriesRequest,
    map_request as map_request,
    refusal as refusal,
    series_request as series_request,
)
