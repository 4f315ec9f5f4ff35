"""Fetch: a month's request to the CDS, its jobs, and the download staged on disk."""

from era5etl.fetch.fetcher import (
    MANIFEST as MANIFEST,
)
from era5etl.fetch.fetcher import (
    AuthError as AuthError,
)
from era5etl.fetch.fetcher import (
    BadAssetError as BadAssetError,
)
from era5etl.fetch.fetcher import (
    CostLimitError as CostLimitError,
)
from era5etl.fetch.fetcher import (
    Credentials as Credentials,
)
from era5etl.fetch.fetcher import (
    Download as Download,
)
from era5etl.fetch.fetcher import (
    FetchError as FetchError,
)
from era5etl.fetch.fetcher import (
    FetchOptions as FetchOptions,
)
from era5etl.fetch.fetcher import (
    FetchPending as FetchPending,
)
from era5etl.fetch.fetcher import (
    JobFailedError as JobFailedError,
)
from era5etl.fetch.fetcher import (
    JobWatcher as JobWatcher,
)
from era5etl.fetch.fetcher import (
    LicenceError as LicenceError,
)
from era5etl.fetch.fetcher import (
    MonthRequest as MonthRequest,
)
from era5etl.fetch.fetcher import (
    RetriesExhausted as RetriesExhausted,
)
from era5etl.fetch.fetcher import (
    RetryLater as RetryLater,
)
from era5etl.fetch.fetcher import (
    fetch as fetch,
)
from era5etl.fetch.fetcher import (
    file_md5 as file_md5,
)
from era5etl.fetch.fetcher import (
    plan as plan,
)
from era5etl.fetch.fetcher import (
    staged_download as staged_download,
)
