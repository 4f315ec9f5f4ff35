"""Airflow for the DAG tests: this checkout's AIRFLOW_HOME and metadata database, set before Airflow loads."""

from __future__ import annotations

import os

from era5etl.cli.database import airflow_environment

os.environ.update(airflow_environment())
