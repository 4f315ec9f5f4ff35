"""core.files: private files, and the folders settings name checked before work needs them."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from era5etl.core.files import FolderNotWritable, open_private, require_writable


def test_a_private_file_is_its_owners_alone(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    path.write_text("old")
    path.chmod(0o644)
    with open_private(path) as fh:
        fh.write("new")
    assert path.read_text() == "new" and path.stat().st_mode & 0o777 == 0o600


def test_a_folder_is_made_where_it_can_be(tmp_path: Path) -> None:
    require_writable(tmp_path / "a" / "b", "ERA5_STAGING_DIR")
    assert (tmp_path / "a" / "b").is_dir()


def test_a_folder_under_a_file_or_a_file_is_refused_naming_the_setting(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(FolderNotWritable, match=r"ERA5_STAGING_DIR=.*/file/s cannot be made: Not a directory"):
        require_writable(tmp_path / "file" / "s", "ERA5_STAGING_DIR")
    with pytest.raises(FolderNotWritable, match="is not a folder"):
        require_writable(tmp_path / "file", "ERA5_VALIDATION_DIR")


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A read-only file system (a tmpfs mounted ro): root is refused there too, as on a full or
    read-only disk; skipped where this process may not mount."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "ro", "tmpfs", str(folder)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a read-only tmpfs here")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_a_read_only_file_system_is_refused_even_for_root(read_only: Path) -> None:
    with pytest.raises(FolderNotWritable, match="cannot be made: Read-only file system"):
        require_writable(read_only / "staging", "ERA5_STAGING_DIR")
    with pytest.raises(FolderNotWritable, match="not writable by this user"):
        require_writable(read_only, "ERA5_VALIDATION_DIR")
