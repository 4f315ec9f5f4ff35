"""What a download's files are, told by their first bytes, and its ZIPs extracted and cleaned up.

See samples.py for the reference the values are compared with.
"""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

from era5etl.stage import open_download

from .samples import (
    NEW_ACCUM,
    NEW_ZIP,
    Reference,
    assert_bits_equal,
    collect,
    refused,
)


def test_zip_is_recognised_by_content_and_its_temp_dir_removed(
    samples: Path, zip_members: dict[str, Path], tmp_path: Path
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    renamed = tmp_path / "download.grib"  # the name lies both ways; only the bytes count
    shutil.copy(samples / NEW_ZIP, renamed)
    with open_download([renamed], tmp_dir=scratch) as s:
        assert len(s.parts) == 2
        assert all("ZIP member data_stream-oper_stepType-" in p for p in s.parts)
        (extracted,) = scratch.iterdir()
        assert len(list(extracted.rglob("*.nc"))) == 2
        assert extracted.name.startswith(f"era5-stage-{os.getpid()}-")  # a later run can tell whose it is
        _, got = collect(list(s.blocks(hours=50)))
    assert list(scratch.iterdir()) == []
    want = {**Reference(zip_members["instant"]).values, **Reference(zip_members["accum"]).values}
    for column, values in want.items():
        assert_bits_equal(got[column], values, column)


def test_empty_missing_text_and_broken_grib_files_arerefused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.nc"
    empty.write_bytes(b"")
    refused(empty, "empty", "0 bytes")
    refused(tmp_path / "missing.nc", "no such file")
    text = tmp_path / "error.nc"
    text.write_text('{"error": "quota exceeded"}\n')
    assert "quota" in refused(text, "not a netcdf or grib file")
    grib = tmp_path / "data.nc"  # GRIB by its first bytes, whatever its name, but no message in it
    grib.write_bytes(b"GRIB" + bytes(200))
    refused(grib, "message 1")


def test_broken_zips_arerefused(samples: Path, tmp_path: Path) -> None:
    data = (samples / NEW_ZIP).read_bytes()
    half = tmp_path / "half.nc"
    half.write_bytes(data[:len(data) // 2])
    refused(half, "zip")

    odd = tmp_path / "odd.zip"
    with zipfile.ZipFile(odd, "w") as zf:
        zf.write(samples / NEW_ACCUM, "data_stream-oper_stepType-accum.nc")
        zf.writestr("data_stream-oper_stepType-instant.nc", "<html>Service unavailable</html>")
    assert "stepType-instant.nc" in refused(odd, "not a netcdf")

    empty = tmp_path / "empty.zip"
    zipfile.ZipFile(empty, "w").close()
    refused(empty, "no files")



def test_scratch_lives_in_staging_and_a_gone_process_s_is_swept(tmp_path: Path) -> None:
    """Issue 47: a stage or load killed with SIGKILL left its extracted ZIP members (78 MB, 19 MB) in the
    system's temporary folder for good. Scratch is now in <staging>/.scratch, named by its process, and
    the next run removes the scratch of processes that are gone, never a live one's."""
    import os
    import subprocess

    from era5etl.stage import scratch_dir

    gone = subprocess.Popen(["true"])
    gone.wait()  # exited and reaped: its pid names no process
    dead_pid = gone.pid
    folder = tmp_path / "staging" / ".scratch"
    folder.mkdir(parents=True)
    left = folder / f"era5-stage-{dead_pid}-abc"
    (left / "member").mkdir(parents=True)
    (left / "member" / "part.nc").write_bytes(b"x" * 1000)
    live = folder / f"era5-stage-{os.getppid()}-def"  # pytest's parent runs
    live.mkdir()
    mine = folder / f"era5-stage-{os.getpid()}-ghi"
    mine.mkdir()
    assert scratch_dir(tmp_path / "staging") == folder
    assert not left.exists() and live.exists() and mine.exists()
