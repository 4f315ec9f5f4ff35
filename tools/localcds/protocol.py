"""The fixed vocabulary of the CADS API: paths, the default key, the ERA5 licence, the datasets
served, OGC exception types, timestamps, and the error an API call answers with."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from localcds import synth

DEFAULT_KEY = "era5etl-local-key"
API_PREFIX = "/api"
ASSET_PREFIX = "/cache-store/"

ERA5_LICENCE = ("licence-to-use-copernicus-products", 12)

DATASETS: dict[str, dict[str, str]] = {
    synth.DATASET: {
        "title": "ERA5 hourly data on single levels from 1940 to present",
        "description": (
            "ERA5 is the fifth generation ECMWF reanalysis for the global climate and weather. "
            "Served here by a local stand-in with synthetic values."
        ),
    },
    "reanalysis-era5-land": {
        "title": "ERA5-Land hourly data from 1950 to present",
        "description": (
            "ERA5-Land is a reanalysis dataset providing a consistent view of the evolution of land variables "
            "at 0.1 degree. Served here by a local stand-in with synthetic values: land points only, "
            "accumulations as running totals from 00 UTC."
        ),
    },
    "reanalysis-era5-single-levels-monthly-means": {
        "title": "ERA5 monthly averaged data on single levels from 1940 to present",
        "description": (
            "Monthly means of ERA5 single levels (product types monthly_averaged_reanalysis and "
            "monthly_averaged_reanalysis_by_hour_of_day). Served here by a local stand-in: the means of its "
            "synthetic hourly values; accumulations as mean daily totals."
        ),
    },
    "reanalysis-era5-land-monthly-means": {
        "title": "ERA5-Land monthly averaged data from 1950 to present",
        "description": (
            "Monthly means of ERA5-Land (monthly_averaged_reanalysis). Served here by a local stand-in: the "
            "means of its synthetic hourly values, land points only; accumulations as mean daily totals."
        ),
    },
    synth.PL_DATASET: {
        "title": "ERA5 hourly data on pressure levels from 1940 to present",
        "description": (
            "ERA5 on 37 pressure levels from 1000 to 1 hPa. Served here by a local stand-in with synthetic values."
        ),
    },
}

# OGC API - Processes exception types, as the real service sends them.
NO_SUCH_PROCESS = "http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/no-such-process"
NO_SUCH_JOB = "http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/no-such-job"
RESULTS_NOT_READY = "http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/result-not-ready"


def iso(moment: datetime) -> str:
    # The CADS API writes naive UTC timestamps with microseconds ("2022-09-02T17:30:48.201213").
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds")


def utcnow() -> datetime:
    return datetime.now(UTC)


class ApiError(Exception):
    """An API call refused: ``status`` and the OGC exception ``body`` the client gets."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(body.get("title") or body.get("detail"))
        self.status = status
        self.body = body
