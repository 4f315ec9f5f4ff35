"""A full disk leaves no partial file behind (issue 31: a 0-byte ``.tmp`` beside a part's note).

A real full file system: a 64 KiB tmpfs mounted for the test (root only, as the local server's tests
are), filled by the write itself.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from pathlib import Path

import pytest

from era5etl.core.files import write_json
from tests.tmpfs import small_tmpfs


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    with small_tmpfs(tmp_path / "small", "64k") as where:
        yield where


@pytest.mark.parametrize("private", [False, True])
def test_a_json_note_on_a_full_disk_raises_and_leaves_nothing(small_disk: Path, private: bool) -> None:
    target = small_disk / "part.json"
    with pytest.raises(OSError) as raised:
        write_json(target, {"values": ["x" * 1000] * 200}, private=private)  # 200 kB into 64 kB
    assert raised.value.errno == errno.ENOSPC
    assert list(small_disk.iterdir()) == []  # neither the note nor its temporary file


def test_a_note_that_fits_is_written_whole(small_disk: Path) -> None:
    write_json(small_disk / "part.json", {"a": 1}, private=True)
    assert [p.name for p in small_disk.iterdir()] == ["part.json"]
    assert (small_disk / "part.json").stat().st_mode & 0o777 == 0o600


def test_the_cli_says_a_full_disk_in_one_line(small_disk: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from era5etl import cli

    def fills(args: object) -> int:
        write_json(small_disk / "note.json", {"values": ["x" * 1000] * 200})
        return 0

    monkeypatch.setattr(cli, "build_parser", lambda command=None: _parser(fills))
    assert cli.main(["fill"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "No space left" in err and "Traceback" not in err
    assert list(small_disk.iterdir()) == []


def _parser(func: object) -> object:
    import argparse

    p = argparse.ArgumentParser()
    p.add_argument("-v", "--verbose", action="count", default=0)
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("fill").set_defaults(func=func)
    return p
