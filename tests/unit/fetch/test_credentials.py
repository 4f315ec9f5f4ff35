"""Where the CDS URL and key come from (fetch.credentials), resolved by cdsapi's own lookup: given
values first, then CDSAPI_URL/CDSAPI_KEY, then ~/.cdsapirc; and the key never in a repr."""

from __future__ import annotations

from pathlib import Path

import pytest

from era5etl.fetch import AuthError, Credentials


@pytest.fixture
def no_cdsapirc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home and no CDSAPI_* variables: nothing of the machine's own set-up is found."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CDSAPI_URL", raising=False)
    monkeypatch.delenv("CDSAPI_KEY", raising=False)
    monkeypatch.delenv("CDSAPI_RC", raising=False)
    return tmp_path


def test_given_values_are_used_with_the_trailing_slash_and_spaces_dropped(no_cdsapirc: Path) -> None:
    assert Credentials("http://cds.local/api/", " token-1 ").resolve() == ("http://cds.local/api", "token-1")


def test_the_environment_is_read_by_from_env(no_cdsapirc: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CDSAPI_URL", "http://env.local/api")
    monkeypatch.setenv("CDSAPI_KEY", "token-2")
    assert Credentials.from_env() == Credentials("http://env.local/api", "token-2")
    assert Credentials().resolve() == ("http://env.local/api", "token-2")


def test_the_cdsapirc_file_is_the_last_resort(no_cdsapirc: Path) -> None:
    (no_cdsapirc / ".cdsapirc").write_text("url: http://rc.local/api\nkey: token-3\n")
    assert Credentials().resolve() == ("http://rc.local/api", "token-3")


def test_none_found_says_where_to_put_them(no_cdsapirc: Path) -> None:
    with pytest.raises(AuthError, match="CDSAPI_URL and CDSAPI_KEY"):
        Credentials().resolve()


def test_a_legacy_uid_key_is_refused_and_no_repr_shows_the_key(no_cdsapirc: Path) -> None:
    with pytest.raises(AuthError, match="legacy 'UID:KEY'"):
        Credentials("http://cds.local/api", "12345:abcdef").resolve()
    creds = Credentials("http://cds.local/api", "secret-token")
    assert "secret-token" not in repr(creds) and "secret-token" not in str(creds)
    assert "***" in repr(creds) and repr(Credentials("u")) == "Credentials(url='u', key=None)"
