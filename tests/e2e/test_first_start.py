"""A new user's first start: ``python -m era5etl airflow up``, a backfill, a month by hand, the page, ``down``.

The command runs as a user runs it (a process group of its own, in the foreground), with a temporary
AIRFLOW_HOME, its own metadata database and ports so it disturbs no other Airflow here. The user:

* reads the URL and the login from what it prints, and signs in to the REST API and the UI with them;
* gets LocalExecutor's workers forked from a forkserver that preloaded Great Expectations;
* has ``ERA5_START_MONTH`` years back and catch-up at its default (off), backfills two months with
  ``airflow backfill create`` and unpauses the DAG, and triggers one more month by hand over REST;
* sees exactly those three months loaded and nothing else: no catch-up from the start month (the
  only other run is the month under way, its fetch deferred until the month is published); backfill runs
  named by the month they load; the ERA5 page's months carrying those run ids;
* stops it with ``python -m era5etl airflow down``: the foreground command exits and no process of
  any group it started is left.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import psutil
import pytest

from era5etl.core.grid import Area, Grid, expected_rows
from era5etl.core.months import Month
from tests.e2e.launched import Launched
from tests.e2e.stack import AREA, DAG_ID

pytestmark = pytest.mark.e2e

BACKFILL = ["2019-06", "2019-07"]  # months no other test loads
BY_HAND = "2019-09"
NOW = Month.of(datetime.now(UTC))


@pytest.fixture(scope="module")
def launched() -> Iterator[Launched]:
    work = Path(tempfile.mkdtemp(prefix="era5-first-start-"))
    # Open to any user: only the home's and the files' own modes may protect the secrets (the
    # secrets test beside this one checks them as ``nobody``).
    work.chmod(0o755)
    stack = Launched(work)
    try:
        stack.up()
        yield stack
    finally:
        stack.stop()  # a failed test: nothing may outlive it
        stack.clean()
        shutil.rmtree(work, ignore_errors=True)


def _forkservers(stack: Launched) -> list[int]:
    """Pids of the forkserver processes of this installation that preload era5etl.airflow.preload."""
    found = []
    for proc in psutil.process_iter():
        try:
            line = " ".join(proc.cmdline())
            if "forkserver" in line and "era5etl.airflow.preload" in line and \
                    proc.environ().get("AIRFLOW_HOME") == str(stack.home):
                found.append(proc.pid)
        except psutil.Error:
            continue
    return found


# Secrets on disk are their owner's alone (issue 31). The reproduction: ``runuser -u nobody -- cat
# .local/airflow/simple_auth_manager_passwords.json.generated`` printed the admin password (the file
# was 0644 in a 0755 folder), and so did the api-server's log, which echoes it. Here the home's parent
# is open to any user (a control file beside it proves ``nobody`` gets that far), and every file that
# holds or echoes a secret is checked two ways: its mode gives nothing to group or others, and
# ``nobody`` cannot read it. First in the module: it needs the stack up, the next test ends with down.


def _nobody_reads(path: Path) -> bool:
    return subprocess.run(["runuser", "-u", "nobody", "--", "cat", str(path)], capture_output=True,
                          timeout=30).returncode == 0


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


def test_one_command_starts_airflow_loads_only_what_was_asked_and_stops(launched: Launched) -> None:
    stack = launched
    # The printed login works.
    body = json.dumps({"username": "admin", "password": stack.password}).encode()
    request = urllib.request.Request(f"{stack.url}/auth/token", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        stack.token = json.load(response)["access_token"]
    assert stack.api("GET", "api/v2/importErrors")["total_entries"] == 0
    stack.wait("the DAG parsed", lambda: any(d["dag_id"] == DAG_ID for d in stack.api("GET", "api/v2/dags")["dags"]))
    assert {p["name"] for p in stack.api("GET", "api/v2/pools")["pools"]} >= {"era5_cds", "era5_db"}

    # A backfill from the CLI as docs/operating.md says, then unpause; a month by hand over REST.
    out = stack.airflow_cli("backfill", "create", "--dag-id", DAG_ID, "--from-date", f"{BACKFILL[0]}-01",
                            "--to-date", f"{BACKFILL[-1]}-01")
    assert out.returncode == 0, out.stdout + out.stderr
    stack.api("PATCH", f"api/v2/dags/{DAG_ID}", {"is_paused": False})
    manual = stack.api("POST", f"api/v2/dags/{DAG_ID}/dagRuns",
                       {"logical_date": None, "dag_run_id": f"manual__{BY_HAND}", "conf": {"month": BY_HAND}})
    assert manual["dag_run_id"] == f"manual__{BY_HAND}"

    named = {f"backfill__{Month.parse(m).start.isoformat()}" for m in BACKFILL} | {f"manual__{BY_HAND}"}
    runs = stack.wait("the three runs done", lambda: (r := stack.runs()) and all(
        r.get(i, {}).get("state") in ("success", "failed") for i in named) and r, timeout=420)
    assert {i: runs[i]["state"] for i in named} == {i: "success" for i in named}, runs
    # LocalExecutor's workers start from a forkserver that imported Great Expectations, the DAGs and the
    # plugins (the default --preload, era5etl.airflow.preload): a task does not import them again.
    assert _forkservers(stack), "no forkserver preloading era5etl.airflow.preload under airflow up"
    # Each backfill run is named by, and its data interval is, the month it loaded.
    for m in BACKFILL:
        run = runs[f"backfill__{Month.parse(m).start.isoformat()}"]
        assert (run["run_after"][:10], run["data_interval_start"][:10], run["data_interval_end"][:10]) == (
            f"{m}-01", f"{m}-01", Month.parse(m).next().start.date().isoformat()), run
    # No catch-up from ERA5_START_MONTH (2015-01): besides what was asked, only the month under way
    # has a run, and its fetch waits for the month's publication, deferred (no worker slot).
    others = {i: r for i, r in runs.items() if i not in named}
    assert set(others) <= {f"scheduled__{NOW.start.isoformat()}"}, others
    for run_id in others:
        tis = stack.api("GET", f"api/v2/dags/{DAG_ID}/dagRuns/{quote(run_id)}/taskInstances")["task_instances"]
        assert {t["task_id"]: t["state"] for t in tis}["fetch"] == "deferred", tis
    # Exactly the months asked for hold rows, each all of its rows.
    area = Area.parse(AREA)
    assert stack.rows_per_month() == {m: expected_rows(Month.parse(m), area, Grid()) for m in [*BACKFILL, BY_HAND]}

    # The ERA5 page's data: each month with the run that loaded it, named by the month.
    request = urllib.request.Request(
        f"{stack.url}/era5/api/dashboard?table={quote(stack.table)}&area={quote(AREA, safe='')}",
        headers={"Authorization": f"Bearer {stack.token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        months = {m["month"]: m for m in json.load(response)["months"]}
    assert {m: months[m]["run_id"] for m in BACKFILL} == {
        m: f"backfill__{Month.parse(m).start.isoformat()}" for m in BACKFILL}, months
    assert months[BY_HAND]["state"] == "validated" and months[BY_HAND]["run_id"] == f"manual__{BY_HAND}"

    # In the browser, signed in with the printed login: the DAG's runs listed by the month they load.
    _runs_page_names_the_months(stack, sorted(named))

    # Stop with the stop command: the foreground command ends, and nothing it started is left.
    state = json.loads((stack.home / "era5-stack.json").read_text())
    groups = set(state["groups"].values())
    assert set(state["groups"]) == {"localcds", "api-server", "scheduler", "dag-processor", "triggerer"}
    down = subprocess.run(stack.command("down"), env=stack.env, capture_output=True, text=True, timeout=120)
    assert down.returncode == 0 and down.stdout.startswith("stopped 5 process group(s)"), down
    assert stack.proc is not None and stack.proc.wait(timeout=60) == 0, stack.out.read_text()
    left = [p.info for p in psutil.process_iter(["pid", "cmdline"])
            if _in_groups(p, groups) or _our_home(p, stack.home)]
    assert left == [], left
    assert not (stack.home / "era5-stack.json").exists()
    status = subprocess.run(stack.command("status"), env=stack.env, capture_output=True, text=True, timeout=60)
    assert (status.returncode, status.stdout.strip()) == (3, "not running")


def _runs_page_names_the_months(stack: Launched, run_ids: list[str]) -> None:
    from playwright.sync_api import expect, sync_playwright

    from tests.e2e.stack import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(viewport={"width": 1440, "height": 1100}).new_page()
            page.set_default_timeout(30_000)
            expect.set_options(timeout=30_000)
            page.goto(f"{stack.url}/dags/{DAG_ID}/runs")
            page.get_by_label("Username").fill("admin")
            page.get_by_label("Password").fill(stack.password)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(f"**/dags/{DAG_ID}/runs**")
            for run_id in run_ids:
                expect(page.get_by_text(run_id, exact=True).first).to_be_visible()
        finally:
            browser.close()


def _in_groups(p: psutil.Process, groups: set[int]) -> bool:
    try:
        return os.getpgid(p.pid) in groups
    except (ProcessLookupError, psutil.Error):
        return False


def _our_home(p: psutil.Process, home: Path) -> bool:
    try:
        return p.environ().get("AIRFLOW_HOME") == str(home)
    except psutil.Error:
        return False
