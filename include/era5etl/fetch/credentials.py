"""The CDS credentials: where the API URL and key come from, and a repr that never shows the key."""

# Imports inside functions: cdsapi loads only when its configuration file is read.

from __future__ import annotations

import os
from dataclasses import dataclass

from era5etl.fetch.errors import AuthError

PROFILE_PAGE = "https://cds.climate.copernicus.eu/profile"


@dataclass(frozen=True)
class Credentials:
    url: str | None = None
    key: str | None = None

    def __repr__(self) -> str:  # the key must never reach a log line
        return f"Credentials(url={self.url!r}, key={'***' if self.key else None})"

    __str__ = __repr__

    @classmethod
    def from_env(cls) -> Credentials:
        """CDSAPI_URL / CDSAPI_KEY; when unset cdsapi falls back to ~/.cdsapirc itself."""
        return cls(os.environ.get("CDSAPI_URL"), os.environ.get("CDSAPI_KEY"))

    def resolve(self) -> tuple[str, str]:
        """(url, key) as cdsapi finds them: given values, else CDSAPI_URL / CDSAPI_KEY, else ~/.cdsapirc."""
        import cdsapi.api

        try:
            url, key, _ = cdsapi.api.get_url_key_verify(self.url, self.key, None)
        except Exception:
            raise AuthError(
                "no CDS credentials: define the Airflow connection 'era5_cds' (host: the API URL, "
                "password: your personal access token), or set CDSAPI_URL and CDSAPI_KEY, or write "
                "~/.cdsapirc"
            ) from None
        url, key = str(url).rstrip("/"), str(key).strip()
        if ":" in key:
            raise AuthError(
                "the CDS key has the legacy 'UID:KEY' form of the retired CDS; use the personal access "
                f"token shown on {PROFILE_PAGE}"
            )
        return url, key


__all__ = ["PROFILE_PAGE", "Credentials"]
