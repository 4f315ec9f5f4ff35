"""Secrets on disk are their owner's alone: what ``python -m era5etl airflow up`` writes (issue 31).

The reproduction: ``runuser -u nobody -- cat .local/airflow/simple_auth_manager_passwords.json.generated``
printed the admin password (the file was 0644 in a 0755 folder), and so did the api-server's log,
which echoes it. Here ``airflow up`` starts in a home whose parent any user may enter (a control file
beside it proves ``nobody`` gets that far), and every file that holds or echoes a secret is checked
two ways: its mode gives nothing to group or others, and ``nobody`` cannot read it.
"""

from __future__ import annotations

import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_first_start import Launched

pytestmark = pytest.mark.e2e


def _nobody_reads(path: Path) -> bool:
    return subprocess.run(["runuser", "-u", "nobody", "--", "cat", str(path)], capture_output=True,
                          timeout=30).returncode == 0


@pytest.fixture(scope="module")
def launched() -> Iterator[Launched]:
    work = Path(tempfile.mkdtemp(prefix="era5-secrets-"))
    work.chmod(0o755)  # not the test's own protection: only the files' and the home's modes may protect them
    stack = Launched(work)
    try:
        stack.up()
        yield stack
    finally:
        subprocess.run(stack.command("down"), env=stack.env, timeout=120, check=False)
        stack.clean()
        shutil.rmtree(work, ignore_errors=True)


def test_the_password_files_logs_and_state_are_the_owners_alone(launched: Launched) -> None:
    home = launched.home
    control = home.parent / "control.txt"
    control.write_text("anyone may read this\n")
    control.chmod(0o644)
    assert _nobody_reads(control), "nobody cannot reach the home's folder: the checks below would prove nothing"

    passwords = home / "simple_auth_manager_passwords.json.generated"
    assert launched.password in passwords.read_text()
    logs = home / "logs" / "era5-stack"
    secrets = [passwords, home / "era5-secrets.json", home / "era5-stack.json", *sorted(logs.glob("*.log"))]
    assert (logs / "api-server.log") in secrets
    for path in secrets:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, f"{path} is {mode:o}"
        assert not _nobody_reads(path), f"nobody can read {path}"
    for folder in (home, home / "logs", logs):
        assert stat.S_IMODE(folder.stat().st_mode) & 0o077 == 0, f"{folder} is open to others"
