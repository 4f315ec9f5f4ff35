"""Fetch: a month's request to the CDS, its jobs, and the download staged on disk."""

from era5etl.fetch.fetcher import (
    MANIFEST as MANIFEST,
    AuthError as AuthError,
    BadAssetError as BadAssetError,
    CostLimitError as CostLimitError,
    Credentials as Credentials,
    Download as Download,
    FetchError as FetchError,
    FetchOptions as FetchOptions,
    FetchPending as FetchPending,
    JobFailedError as JobFailedError,
    JobWatcher as JobWatcher,
    LicenceError as LicenceError,
    MonthRequest as MonthRequest,
    RetriesExhausted as RetriesExhausted,
    RetryLater as RetryLater,
    fetch as fetch,
    file_md5 as file_md5,
    plan as plan,
    staged_download as staged_download,
)
