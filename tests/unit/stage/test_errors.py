"""The staging's error (stage.errors): bad input on the error tree (exit status 2, HTTP 400), raised for a
file that cannot be staged, naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from era5etl.core.answers import answer
from era5etl.core.errors import BadInput, Failure
from era5etl.stage import open_download
from era5etl.stage.errors import StageError


def test_a_stage_error_is_bad_input() -> None:
    assert issubclass(StageError, BadInput) and not issubclass(StageError, Failure)
    found = answer(StageError("a damaged GRIB"))
    assert found is not None and (found.exit_code, found.http_status) == (2, 400)


def test_a_file_that_is_no_download_raises_it_naming_the_file(tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("not a download\n")
    with pytest.raises(StageError, match=r"notes\.txt"):
        open_download([junk])
