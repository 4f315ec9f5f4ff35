"""The compose stack's metrics path, run without Docker: the statsd_exporter of the compose file's image tag,
built from its Go module (once per machine), started with the compose file's command on loopback ports;
Airflow's StatsD client, configured with the compose file's [metrics] settings, sends the pipeline's
figures (era5etl.airflow.stats), and the exporter's /metrics (the URL its healthcheck reads) shows them
as Prometheus metrics.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from era5etl.core.paths import PROJECT_ROOT
from era5etl.core.ports import free_port
from era5etl.db.image import system_dir
from tests.integration.deploy.served import served

pytestmark = pytest.mark.integration

MODULE = "github.com/prometheus/statsd_exporter"
WAIT_S = 60


def compose_file() -> dict[str, Any]:
    return dict(yaml.safe_load((PROJECT_ROOT / "docker-compose.yaml").read_text()))


def go() -> str:
    found = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)
    if not found:
        pytest.fail("building statsd_exporter needs the Go toolchain (go), which this machine's kind provides")
    return found


@pytest.fixture(scope="module")
def exporter_binary() -> Path:
    """statsd_exporter at the version of the compose file's image tag, built once per machine."""
    image = compose_file()["services"]["statsd-exporter"]["image"]
    match = re.fullmatch(r"prom/statsd-exporter:(v\d+\.\d+\.\d+)", image)
    assert match, image
    version = match.group(1)
    tools = system_dir() / "tools" / f"statsd_exporter-{version}"
    binary = tools / "statsd_exporter"
    tools.parent.mkdir(parents=True, exist_ok=True)
    with open(tools.parent / ".statsd_exporter.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build, however many test processes ask
        if not binary.exists():
            gopath = tools.parent / f".gopath-statsd_exporter-{version}"
            env = {**os.environ, "GOPATH": str(gopath), "GOBIN": str(tools), "GOFLAGS": "-mod=mod",
                   "GOTOOLCHAIN": "local", "CGO_ENABLED": "0"}
            proc = subprocess.run([go(), "install", f"{MODULE}@{version}"], env=env, capture_output=True, text=True,
                                  timeout=900)
            subprocess.run([go(), "clean", "-modcache"], env=env, capture_output=True, timeout=300)
            shutil.rmtree(gopath, ignore_errors=True)
            if proc.returncode != 0 or not binary.exists():
                pytest.fail(f"go install {MODULE}@{version} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return binary


@pytest.fixture
def exporter(exporter_binary: Path, tmp_path: Path) -> Iterator[tuple[int, str]]:
    """(UDP port, metrics URL) of an exporter started with the compose file's command, on loopback ports."""
    service = compose_file()["services"]["statsd-exporter"]
    udp, web = free_port(), free_port()
    argv = [re.sub(r"^--statsd\.listen-udp=:\d+$", f"--statsd.listen-udp=127.0.0.1:{udp}", arg) for arg in
            service["command"]]
    argv = [re.sub(r"^--web\.listen-address=:\d+$", f"--web.listen-address=127.0.0.1:{web}", arg) for arg in argv]
    assert argv != service["command"] and len(argv) == len(service["command"])
    # The healthcheck's URL, on the port the test gave it.
    health = next(a for a in service["healthcheck"]["test"] if a.startswith("http://"))
    url = re.sub(r"^http://[^/]+", f"http://127.0.0.1:{web}", health)
    with served([str(exporter_binary), *argv], url, tmp_path / "statsd_exporter.log", "statsd_exporter", WAIT_S):
        yield udp, url


def test_pipeline_figures_reach_prometheus_through_the_exporter(exporter: tuple[int, str]) -> None:
    udp, url = exporter
    env = dict(compose_file()["x-airflow-common"]["environment"])
    metrics = {k: str(v) for k, v in env.items() if k.startswith("AIRFLOW__METRICS__")}
    assert metrics["AIRFLOW__METRICS__STATSD_ON"] == "True"
    metrics.update({"AIRFLOW__METRICS__STATSD_HOST": "127.0.0.1", "AIRFLOW__METRICS__STATSD_PORT": str(udp)})
    prefix = metrics["AIRFLOW__METRICS__STATSD_PREFIX"]
    code = ("from era5etl.airflow import stats; from era5etl.track import metrics; stats.install(); "
            "sink = metrics.stats_sink(); sink.incr('era5.load.rows', 5, {'table': 't'}); "
            "sink.timing('era5.load.seconds', 1.5, {'table': 't'})")
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, **metrics}, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    deadline = time.monotonic() + WAIT_S
    text = ""
    while f"{prefix}_era5_load_rows 5" not in text:  # UDP: the exporter has it once it has read it
        if time.monotonic() > deadline:
            pytest.fail(f"no {prefix}_era5_load_rows on {url}:\n{text[-3000:]}")
        time.sleep(0.2)
        text = httpx.get(url, timeout=5).text
    assert f"# TYPE {prefix}_era5_load_rows counter" in text
    assert re.search(rf"^{prefix}_era5_load_seconds_sum 1\.5$", text, re.M), text[-3000:]
