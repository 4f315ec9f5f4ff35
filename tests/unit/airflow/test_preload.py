"""The forkserver preload (``era5etl.airflow.preload``), through multiprocessing's real forkserver as
LocalExecutor uses it: what a forked process finds imported, and a bad setting that leaves the server alive."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from era5etl.airflow.preload import MODULES

# A process forked from a forkserver preloading the module reports which of its modules it found
# imported without importing anything itself.
_CHILD = """
import json, multiprocessing as mp, sys

def modules(names):
    return {name: name in sys.modules for name in names}

if __name__ == "__main__":
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["era5etl.airflow.preload"])
    names = json.loads(sys.argv[1])
    with ctx.Pool(1) as pool:
        print(json.dumps(pool.apply(modules, (names,))))
"""


def _fork(tmp_path: Path, env: dict[str, str]) -> tuple[dict[str, bool], str]:
    script = tmp_path / "child.py"  # a file: the forkserver's children import the function from it
    script.write_text(_CHILD)
    proc = subprocess.run([sys.executable, str(script), json.dumps(list(MODULES))], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def test_a_forked_task_process_finds_gx_the_dags_and_the_plugins_imported(tmp_path: Path) -> None:
    found, stderr = _fork(tmp_path, {**os.environ, "GX_ANALYTICS_ENABLED": "False"})
    assert found == {name: True for name in MODULES}, stderr
    assert "not preloaded" not in stderr


def test_a_bad_setting_skips_the_dags_with_its_message_and_the_forkserver_still_serves(tmp_path: Path) -> None:
    # The DAGs' module reads ERA5_* when imported; multiprocessing's forkserver dies of anything but
    # an ImportError in a preloaded module, and every task with it. Here it lives, the rest preloaded.
    found, stderr = _fork(tmp_path, {**os.environ, "GX_ANALYTICS_ENABLED": "False", "ERA5_AREA": "north"})
    assert found["great_expectations"] and found["era5etl.pipeline.steps"], stderr
    assert found["era5etl.airflow.plugins.era5_dashboard"], stderr
    assert not found["era5etl.airflow.dags.era5_monthly"], stderr
    assert "era5etl.airflow.preload: era5etl.airflow.dags.era5_monthly not preloaded" in stderr
    assert "ERA5_AREA" in stderr
