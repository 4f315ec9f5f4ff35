"""The task figures reach StatsD when Airflow's [metrics] statsd_on is set: the statsd client is
installed with the pipeline, and a real UDP socket receives what the core's sink sends."""

from __future__ import annotations

import os
import socket
import subprocess
import sys


def test_a_core_figure_arrives_at_a_statsd_server() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(20)
        env = {**os.environ, "AIRFLOW__METRICS__STATSD_ON": "True", "AIRFLOW__METRICS__STATSD_HOST": "127.0.0.1",
               "AIRFLOW__METRICS__STATSD_PORT": str(sock.getsockname()[1]), "AIRFLOW__METRICS__STATSD_PREFIX": "af"}
        code = ("from era5etl.airflow import stats; from era5etl.track import metrics; stats.install(); "
                "metrics.stats_sink().incr('era5.load.rows', 5, {'table': 't'})")
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        packets = []
        while not any(b"era5.load.rows" in p for p in packets):
            packets.append(sock.recv(4096))  # Airflow sends its own figures too; a timeout fails the test
    assert b"af.era5.load.rows:5|c" in b"\n".join(packets)
