"""Fetch: a month's request to the CDS, its jobs, and the download staged on disk.

One concern per module: :mod:`~era5etl.fetch.errors` (the exceptions), :mod:`~era5etl.fetch.credentials`,
:mod:`~era5etl.fetch.request` (the request model and its split), :mod:`~era5etl.fetch.cost` (the cost
estimate), :mod:`~era5etl.fetch.options` (``ERA5_CDS_*``), :mod:`~era5etl.fetch.manifest` (the staged
download), :mod:`~era5etl.fetch.jobs` (the job table), :mod:`~era5etl.fetch.api` (the client and its
errors), :mod:`~era5etl.fetch.session` (retries and redaction), :mod:`~era5etl.fetch.download` (a part's
download), :mod:`~era5etl.fetch.fetcher` (the fetch itself), :mod:`~era5etl.fetch.watcher` (the
trigger's look at queued jobs) and :mod:`~era5etl.fetch.retention` (removing a validated month's
download, and what staging holds).
"""

from era5etl.fetch.credentials import Credentials as Credentials
from era5etl.fetch.errors import (
    AuthError as AuthError,
    BadAssetError as BadAssetError,
    CostLimitError as CostLimitError,
    FetchError as FetchError,
    FetchPending as FetchPending,
    JobFailedError as JobFailedError,
    LicenceError as LicenceError,
    RetriesExhausted as RetriesExhausted,
    RetryLater as RetryLater,
)
from era5etl.fetch.fetcher import fetch as fetch
from era5etl.fetch.manifest import (
    MANIFEST as MANIFEST,
    Download as Download,
    Removal as Removal,
    file_md5 as file_md5,
    staged_download as staged_download,
)
from era5etl.fetch.options import FetchOptions as FetchOptions
from era5etl.fetch.request import MonthRequest as MonthRequest, plan as plan
from era5etl.fetch.watcher import JobWatcher as JobWatcher
